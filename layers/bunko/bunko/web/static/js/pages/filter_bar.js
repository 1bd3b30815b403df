// The metadata filter bar the library, search and chat share: conditions built from the keys
// GET /search/metadata-keys offers (key, an operator — equals, one of, between, has — and the
// value(s)), shown as chips a person removes with ×, combined with AND (all) or OR (any), and
// turned into the filter JSON the API takes (docs/rest.md "Metadata"). Each page keeps its own
// filter for the tab's session (per user and library), so coming back finds it still applied.
import * as api from '../api.js';
import { clear, field, h } from '../layout.js';
import { t } from '../i18n.js';
import { session } from '../api.js';
import { asNumber } from './metadata_editor.js';

const CATEGORY = 'category'; // the file's category, filtered as a key like any other
const OPERATORS = ['equals', 'in', 'range', 'exists'];
let made = 0; // unique ids for the datalists and the builder

function storageKey(scope) {
  const user = session.get()?.user;
  return `bunko.filter.${scope}.${user?.id ?? user?.username ?? ''}.${session.library()?.id ?? 'own'}`;
}

function loadState(scope) {
  try {
    const kept = JSON.parse(sessionStorage.getItem(storageKey(scope)));
    if (kept && Array.isArray(kept.conditions)) return { match: kept.match === 'any' ? 'any' : 'all', conditions: kept.conditions };
  } catch {
    // nothing kept
  }
  return { match: 'all', conditions: [] };
}

// The filter JSON for these conditions; null for none.
export function toFilter(state) {
  const { conditions, match } = state;
  if (!conditions.length) return null;
  if (conditions.length === 1) return conditions[0];
  return { [match === 'any' ? 'orAll' : 'andAll']: conditions };
}

const keyName = (key) => (key === CATEGORY ? t('lib.category') : key);

// One condition in words: "team is legal", "year between 2020 and 2024", "has reviewed".
export function describe(clause) {
  const [[op, body]] = Object.entries(clause);
  const key = keyName(body.key);
  if (op === 'equals') return t('filter.is', { key, value: body.value });
  if (op === 'in') return t('filter.oneOf', { key, values: body.values.join(', ') });
  if (op === 'exists') return t('filter.has', { key });
  if (op === 'range') {
    const from = body.gte ?? body.gt;
    const to = body.lte ?? body.lt;
    if (from != null && to != null) return t('filter.between', { key, from, to });
    return from != null ? t('filter.from', { key, from }) : t('filter.upTo', { key, to });
  }
  return JSON.stringify(clause);
}

export function describeAll(state) {
  return state.conditions.map(describe).join(t(state.match === 'any' ? 'filter.or' : 'filter.and'));
}

// `scope`: the page ('library', 'search', 'chat'); `onChange(filter)` after every change.
export function filterBar({ scope, onChange = () => {} }) {
  const state = loadState(scope);
  let keys = []; // [{key, types, values}] from the server, category among them
  made += 1;
  const builderId = `filter-builder-${made}`;
  const chips = h('ul', { class: 'filter-chips', 'aria-label': t('filter.active') });
  const match = h('select', { class: 'filter-match', 'aria-label': t('filter.match'), onchange: () => { state.match = match.value; changed(); } },
    h('option', { value: 'all' }, t('filter.all')), h('option', { value: 'any' }, t('filter.any')));
  const toggle = h('button', { type: 'button', class: 'ghost filter-toggle', 'aria-expanded': 'false', 'aria-controls': builderId, onclick: () => open(builder.hidden) }, `+ ${t('filter.add')}`);
  const clearButton = h('button', { type: 'button', class: 'ghost', 'aria-label': t('filter.clear'), title: t('filter.clear'), onclick: () => { state.conditions = []; changed(); toggle.focus(); } }, t('filter.clearShort'));

  // The builder: key, operator, value(s), Add. Not a <form>: the bar sits inside other forms
  // (the chat's), so Enter in a field adds the condition and goes no further.
  const keySelect = h('select', { onchange: () => drawValues(true) });
  const opSelect = h('select', { onchange: () => drawValues(false) }, OPERATORS.map((op) => h('option', { value: op }, t(`filter.op.${op}`))));
  const values = h('div', { class: 'filter-values row' });
  const problem = h('p', { class: 'error small', role: 'alert', hidden: true });
  const addButton = h('button', { type: 'button', onclick: add }, t('filter.apply'));
  const cancel = h('button', { type: 'button', class: 'ghost', onclick: () => { open(false); toggle.focus(); } }, t('common.cancel'));
  const noKeys = h('p', { class: 'muted small', hidden: true }, t('filter.noKeys'));
  const builder = h('div', { class: 'filter-builder', id: builderId, role: 'group', 'aria-label': t('filter.add'), hidden: true },
    noKeys,
    h('div', { class: 'row filter-fields' }, field(t('filter.key'), keySelect), field(t('filter.op'), opSelect), values,
      h('div', { class: 'row filter-buttons' }, addButton, cancel)),
    problem);
  builder.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.target.tagName === 'INPUT') { e.preventDefault(); add(); }
    if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); open(false); toggle.focus(); }
  });
  let inputs = {}; // the value fields shown now: {value} | {values} | {from, to}

  // Opened afresh each time: the key chosen last, empty value fields.
  function open(yes) {
    builder.hidden = !yes;
    toggle.setAttribute('aria-expanded', String(yes));
    problem.hidden = true;
    if (yes && keys.length) drawValues(false);
    if (yes) keySelect.focus();
  }

  const known = (key) => keys.find((k) => k.key === key) || { key, types: ['string'], values: [] };
  // How a field of this key is typed: a number, a date, or text.
  function kind(key) {
    const { types } = known(key);
    if (types.length && types.every((x) => x === 'number')) return 'number';
    if (types.length && types.every((x) => x === 'date')) return 'date';
    return 'text';
  }
  // A typed value as the API compares it: a number for a key holding numbers.
  const typed = (key, text) => (known(key).types.includes('number') && asNumber(text) !== null ? asNumber(text) : text);

  function input(key, label, extra = {}) {
    const type = { number: 'number', date: 'date', text: 'text' }[kind(key)];
    return h('input', { type, step: type === 'number' ? 'any' : null, autocomplete: 'off', 'aria-label': label, ...extra });
  }

  // The value fields for the key and operator chosen; `fresh`: the key changed, so the
  // operator goes back to what suits it (between for numbers and dates, else equals).
  function drawValues(fresh) {
    const key = keySelect.value;
    if (fresh) opSelect.value = kind(key) === 'text' ? 'equals' : 'range';
    const op = opSelect.value;
    const { values: seen } = known(key);
    const example = seen.slice(0, 3).join(', ');
    inputs = {};
    problem.hidden = true;
    if (op === 'equals') {
      const list = h('datalist', { id: `filter-values-${made}-${Math.random().toString(36).slice(2, 8)}` }, seen.map((v) => h('option', { value: v })));
      inputs.value = input(key, t('filter.value'), { list: list.id, placeholder: seen[0] || '' });
      clear(values, field(t('filter.value'), inputs.value), list);
    } else if (op === 'in') {
      inputs.values = h('input', { type: 'text', autocomplete: 'off', placeholder: example });
      clear(values, field(t('filter.values'), inputs.values));
    } else if (op === 'range') {
      inputs.from = input(key, t('filter.fromLabel'));
      inputs.to = input(key, t('filter.toLabel'));
      clear(values, field(t('filter.fromLabel'), inputs.from), field(t('filter.toLabel'), inputs.to));
    } else {
      clear(values, h('p', { class: 'muted small filter-note' }, t('filter.hasNote')));
    }
  }

  function fail(key) {
    problem.textContent = t(key);
    problem.hidden = false;
  }

  function add() {
    const key = keySelect.value;
    if (!key) return;
    const op = opSelect.value;
    let clause;
    if (op === 'equals') {
      const text = inputs.value.value.trim();
      if (!text) return fail('filter.needValue');
      clause = { equals: { key, value: typed(key, text) } };
    } else if (op === 'in') {
      const list = inputs.values.value.split(',').map((s) => s.trim()).filter(Boolean);
      if (!list.length) return fail('filter.needValue');
      clause = { in: { key, values: [...new Set(list)].map((v) => typed(key, v)) } };
    } else if (op === 'range') {
      const from = inputs.from.value.trim();
      const to = inputs.to.value.trim();
      if (!from && !to) return fail('filter.needBound');
      clause = { range: { key } };
      if (from) clause.range.gte = typed(key, from);
      if (to) clause.range.lte = typed(key, to);
    } else {
      clause = { exists: { key } };
    }
    state.conditions.push(clause);
    open(false);
    changed();
    toggle.focus();
  }

  function remove(at) {
    state.conditions.splice(at, 1);
    changed();
    const buttons = chips.querySelectorAll('button');
    (buttons[Math.min(at, buttons.length - 1)] || toggle).focus();
  }

  function draw() {
    clear(chips, state.conditions.map((clause, i) => {
      const text = describe(clause);
      return h('li', { class: 'chip filter-chip' }, h('span', {}, text),
        h('button', { type: 'button', class: 'chip-remove', 'aria-label': t('filter.remove', { what: text }), title: t('filter.remove', { what: text }), onclick: () => remove(i) }, '×'));
    }));
    const some = state.conditions.length > 0;
    chips.hidden = !some;
    match.hidden = state.conditions.length < 2;
    match.value = state.match;
    clearButton.hidden = !some;
    element.classList.toggle('active', some);
    // Nothing to filter by and nothing applied (a library without metadata): no bar at all.
    element.hidden = !some && keys.length === 0;
  }

  function changed() {
    try {
      sessionStorage.setItem(storageKey(scope), JSON.stringify(state));
    } catch {
      // storage full or refused: the filter still applies on this page
    }
    draw();
    onChange(toFilter(state));
  }

  // The keys the library's files use (and the category, when files have one).
  async function reload() {
    try {
      const [found, cats] = await Promise.all([api.get('/search/metadata-keys'), api.get('/search/categories').catch(() => ({ categories: [] }))]);
      keys = found.keys.filter((k) => k.key !== CATEGORY);
      if (cats.categories.length) keys.push({ key: CATEGORY, types: ['string'], values: cats.categories });
    } catch {
      keys = [];
    }
    const chosen = keySelect.value;
    clear(keySelect, keys.map((k) => h('option', { value: k.key }, keyName(k.key))));
    if (keys.some((k) => k.key === chosen)) keySelect.value = chosen;
    noKeys.hidden = keys.length > 0;
    for (const el of [keySelect, opSelect, addButton]) el.disabled = keys.length === 0;
    builder.querySelector('.filter-fields').hidden = keys.length === 0;
    if (keys.length) drawValues(keySelect.value !== chosen);
    draw();
  }

  const element = h('div', { class: 'filter-bar', role: 'group', 'aria-label': t('filter.label'), hidden: true },
    h('div', { class: 'row filter-line' }, h('span', { class: 'filter-title' }, t('filter.title')), chips, match, toggle, clearButton),
    builder);
  draw();
  reload();
  return {
    element,
    reload,
    filter: () => toFilter(state),
    summary: () => describeAll(state),
  };
}
