// Document metadata on screen: compact chips ("team legal") and the key/value row editor the
// upload form and the "Edit metadata" dialog share. A value that reads as a number is sent as a
// number; a row marked List is comma-separated strings; anything else is text (a date such as
// 2024-05-01 is text the server recognises as a date). The server checks the rest and says why.
import { h } from '../layout.js';
import { t } from '../i18n.js';

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

// The number a text reads as, else null ("2024-05-01" and "007a" stay text).
export function asNumber(text) {
  const s = String(text).trim();
  return NUMBER.test(s) && Number.isFinite(Number(s)) ? Number(s) : null;
}

export function valueText(value) {
  return Array.isArray(value) ? value.join(', ') : String(value);
}

// The metadata as chips, or null when there is none. `name`: the file they belong to.
export function metadataChips(metadata, name) {
  const entries = Object.entries(metadata || {});
  if (!entries.length) return null;
  return h('ul', { class: 'meta-chips', 'aria-label': name ? t('meta.of', { name }) : t('meta.title') },
    entries.map(([key, value]) => h('li', { class: 'chip', title: `${key}: ${valueText(value)}` },
      // "team: legal" to a screen reader (and in the text); the colon is a gap on screen
      h('span', { class: 'chip-key' }, key, h('span', { class: 'visually-hidden' }, ':')), ' ',
      h('span', { class: 'chip-value' }, valueText(value)))));
}

// Rows of key / value / List / ×. `value()` is the metadata object (rows left blank are
// skipped) or throws an Error whose message says what to fix.
export function rowEditor(initial = {}) {
  const rows = [];
  const box = h('div', { class: 'meta-rows' });
  const head = h('div', { class: 'meta-row meta-head', 'aria-hidden': 'true' },
    h('span', {}, t('meta.key')), h('span', {}, t('meta.value')), h('span'), h('span'));
  const add = h('button', { type: 'button', class: 'ghost', onclick: () => addRow().key.focus() }, `+ ${t('meta.addRow')}`);

  function addRow(key = '', value = '') {
    const row = {
      key: h('input', { class: 'meta-key', value: key, maxLength: 64, autocomplete: 'off', spellcheck: false, placeholder: t('meta.keyPlaceholder') }),
      value: h('input', { class: 'meta-value', value: valueText(value), maxLength: 4000, autocomplete: 'off', placeholder: t('meta.valuePlaceholder') }),
      list: h('input', { type: 'checkbox', class: 'meta-list', checked: Array.isArray(value) }),
    };
    row.remove = h('button', { type: 'button', class: 'ghost', onclick: () => removeRow(row) }, '×');
    row.element = h('div', { class: 'meta-row' }, row.key, row.value,
      h('label', { class: 'check meta-list-label' }, row.list, h('span', { class: 'meta-list-text' }, t('meta.list'))), row.remove);
    rows.push(row);
    box.append(row.element);
    renumber();
    return row;
  }

  // The keyboard stays in the editor: on the row that took its place, else on "Add a row".
  function removeRow(row) {
    const at = rows.indexOf(row);
    rows.splice(at, 1);
    row.element.remove();
    renumber();
    const next = rows[at] || rows[at - 1];
    if (next) next.key.focus();
    else add.focus();
  }

  // Each field named by its row, for a screen reader (and a test): "Key 2", "Remove row 2".
  function renumber() {
    rows.forEach((row, i) => {
      const n = i + 1;
      row.key.setAttribute('aria-label', t('meta.keyN', { n }));
      row.value.setAttribute('aria-label', t('meta.valueN', { n }));
      row.list.setAttribute('aria-label', t('meta.listN', { n }));
      row.remove.setAttribute('aria-label', t('meta.removeN', { n }));
    });
    head.hidden = rows.length === 0;
  }

  function value() {
    const out = new Map();
    rows.forEach((row, i) => {
      const key = row.key.value.trim();
      const text = row.value.value.trim();
      if (!key && !text) return; // a blank row
      if (!key) throw new Error(t('meta.needKey', { n: i + 1 }));
      if (out.has(key)) throw new Error(t('meta.twice', { key }));
      if (row.list.checked) out.set(key, text.split(',').map((s) => s.trim()).filter(Boolean));
      else out.set(key, asNumber(text) ?? text); // "" goes as it is: the server says why not
    });
    return Object.fromEntries(out);
  }

  function reset() {
    for (const row of rows.splice(0)) row.element.remove();
    addRow();
  }

  const entries = Object.entries(initial || {});
  if (entries.length) for (const [key, v] of entries) addRow(key, v);
  else addRow();
  const element = h('div', { class: 'meta-editor' }, head, box, add);
  return { element, value, reset, first: () => rows[0]?.key };
}
