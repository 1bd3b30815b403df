// Sources: the library's connectors (GET /sources), each with its kind, where it reads, whether
// it is paused, and its last sync (when; added, changed, deleted; each file's error). Its owners
// add one (its kind's fields from KINDS below), test the connection first (POST /sources/test:
// one request, nothing kept), sync now (the request lasts the sync: a progress bar meanwhile,
// then what changed), pause or resume it, and remove it with or without its documents.
// Everyone else in the library sees the list only (the server refuses them too).
import * as api from '../api.js';
import { clear, errorBox, field, h, page, refreshStatus, showError, toast } from '../layout.js';
import { getLanguage, t } from '../i18n.js';
import { session } from '../api.js';

// One row per kind of source: its fields, in the order shown. `name` is the request's field
// (POST /sources); `type` is text, url, number, list (one value a line) or secret (write-only).
// A new kind is one more row here (and its words in i18n); nothing else in the page names one.
export const KINDS = {
  web: {
    fields: [
      { name: 'url', type: 'url', label: 'src.web.url', hint: 'src.web.urlHint', required: true },
      { name: 'maxPages', type: 'number', label: 'src.maxPages', placeholder: '500' },
    ],
  },
  git: {
    fields: [
      { name: 'url', type: 'url', label: 'src.git.url', hint: 'src.git.urlHint', required: true },
      { name: 'branch', type: 'text', label: 'src.git.branch', placeholder: 'main' },
      { name: 'include', type: 'list', label: 'src.git.include', hint: 'src.git.globHint' },
      { name: 'exclude', type: 'list', label: 'src.git.exclude', hint: 'src.git.globHint' },
      { name: 'maxFiles', type: 'number', label: 'src.maxFiles', placeholder: '5000' },
    ],
  },
};
// Fields every kind has, after its own.
const COMMON = [{ name: 'folder', type: 'text', label: 'src.folder', hint: 'src.folderHint' }];

export const kindName = (kind) => (KINDS[kind] ? t(`src.kind.${kind}`) : kind);

function input(spec) {
  const props = { name: spec.name, required: spec.required || false, placeholder: spec.placeholder || '', autocomplete: 'off' };
  if (spec.type === 'list') return h('textarea', { ...props, rows: 2 });
  if (spec.type === 'number') return h('input', { ...props, type: 'number', min: 1 });
  if (spec.type === 'secret') return h('input', { ...props, type: 'password', autocomplete: 'new-password' });
  return h('input', { ...props, type: spec.type === 'url' ? 'url' : 'text', maxLength: spec.type === 'url' ? 2048 : 300 });
}

// A field's value as the request carries it; undefined when left empty.
function valueOf(spec, el) {
  const raw = el.value.trim();
  if (!raw) return undefined;
  if (spec.type === 'number') return Number(raw);
  if (spec.type === 'list') return raw.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);
  return raw;
}

const manages = () => {
  const lib = session.library();
  return !lib || lib.role === 'owner';
};

export function render() {
  const lib = session.library();
  const owner = manages();
  const error = errorBox();
  const list = h('div', { class: 'sources', 'aria-busy': 'true' });
  const form = owner ? addForm(refresh, error) : null;
  const main = page('src.title',
    h('p', { class: 'muted' }, t('src.intro')),
    owner ? null : h('p', { class: 'muted' }, t('src.readOnly', { name: lib ? lib.name : '' })),
    error, list, form);
  if (lib) main.querySelector('h1').append(' · ', h('span', { class: 'library-name' }, lib.name));
  main.querySelector('h1').after(h('p', { class: 'small' }, h('a', { href: '#/library' }, t('src.back'))));

  async function refresh() {
    try {
      const found = await api.get('/sources');
      clear(list, found.length ? found.map((s) => sourceView(s, { owner, refresh, error })) : h('p', { class: 'muted' }, t('src.none')));
      list.setAttribute('aria-busy', 'false');
    } catch (err) {
      if (err.status !== 404) return showError(error, err);
      clear(list, h('p', { class: 'muted' }, t('src.unavailable'))); // a shape without sources
      form?.remove();
    }
  }
  refresh();
}

function when(at) {
  return new Date(at * 1000).toLocaleString(getLanguage(), { dateStyle: 'medium', timeStyle: 'short' });
}

// "3 added · 1 changed · 0 deleted", with renames, errors and a bound that stopped it.
function counts(s) {
  const parts = [t('src.added', { n: s.added }), t('src.changed', { n: s.changed }), t('src.deleted', { n: s.deleted })];
  if (s.renamed) parts.push(t('src.renamed', { n: s.renamed }));
  const errors = s.error_count ?? s.errorCount;
  if (errors) parts.push(t(errors === 1 ? 'src.error' : 'src.errors', { n: errors }));
  return parts.join(' · ');
}

function lastSyncView(last) {
  if (!last) return h('p', { class: 'muted small last-sync' }, t('src.never'));
  const errors = Object.entries(last.errors || {});
  return h('div', { class: 'last-sync' },
    h('p', { class: 'small' }, h('strong', {}, t('src.lastSync')), ' ',
      h('time', { datetime: new Date(last.at * 1000).toISOString() }, when(last.at)), ' — ',
      last.failed ? h('span', { class: 'error' }, t('src.failed', { why: last.failed })) : counts(last)),
    !last.failed && !last.complete ? h('p', { class: 'muted small' }, t('src.incomplete', { bound: last.stopped_by || '' })) : null,
    errors.length ? h('details', { class: 'sync-errors' },
      h('summary', {}, t('src.errorsOf', { n: last.error_count })),
      h('ul', { class: 'plain small' }, errors.map(([path, why]) => h('li', {}, h('span', { class: 'mono' }, path), ': ', h('span', { class: 'error' }, why))))) : null);
}

function sourceView(s, { owner, refresh, error }) {
  // what every kind has; a kind this page does not know still shows its name and folder
  const where = [[t('src.address'), s.settings.url], [t('src.folder'), `${s.folder}/`], [t('src.git.branch'), s.settings.branch]]
    .filter(([, value]) => typeof value === 'string' && value);
  const status = h('div', { class: 'sync-status', role: 'status', 'aria-live': 'polite' });
  const box = h('section', { class: 'card source-card', 'aria-label': s.name },
    h('h2', {}, s.name, h('span', { class: 'tag' }, kindName(s.kind)), s.paused ? h('span', { class: 'tag paused' }, t('src.paused')) : null),
    h('dl', { class: 'source-where small' }, where.map(([k, v]) => [h('dt', {}, k), h('dd', { class: 'mono' }, v)])),
    lastSyncView(s.lastSync), status);
  if (!owner) return box;

  const syncButton = h('button', { type: 'button', disabled: s.paused, onclick: syncNow }, t('src.syncNow'));
  async function syncNow() {
    showError(error, null);
    syncButton.disabled = true;
    clear(status, h('progress', { 'aria-label': t('src.syncing', { name: s.name }) }), h('span', { class: 'small' }, t('src.syncing', { name: s.name })));
    try {
      const r = await api.post(`/sources/${encodeURIComponent(s.name)}/sync`);
      const said = r.failed ? t('src.failed', { why: r.failed })
        : counts({ added: r.added.length, changed: r.changed.length, deleted: r.deleted.length, renamed: r.renamed.length, errorCount: Object.keys(r.errors).length });
      toast(t('src.synced', { name: s.name, what: said }));
      refreshStatus(); // what it added is being indexed: the footer counts it
      await refresh();
    } catch (err) {
      clear(status);
      syncButton.disabled = false;
      showError(error, err);
    }
  }
  const act = async (done) => {
    showError(error, null);
    try {
      await done;
    } catch (err) {
      showError(error, err);
    }
    refresh();
  };
  box.append(h('div', { class: 'row' }, syncButton,
    h('button', { type: 'button', class: 'ghost', onclick: () => act(api.request('PATCH', `/sources/${encodeURIComponent(s.name)}`, { paused: !s.paused })) },
      t(s.paused ? 'src.resume' : 'src.pause')),
    h('button', { type: 'button', class: 'ghost danger', onclick: () => removeDialog(s, act) }, t('src.remove'))));
  return box;
}

// Remove: with its documents (the default) or keeping them.
function removeDialog(s, act) {
  const titleId = `remove-${s.id}`;
  const dialog = h('dialog', { class: 'meta-dialog', 'aria-labelledby': titleId });
  const choice = (value, key, checked) => h('label', { class: 'check' },
    h('input', { type: 'radio', name: 'documents', value, checked }), t(key));
  const form = h('form', { method: 'dialog', onsubmit: (e) => {
    e.preventDefault();
    const keep = form.elements.documents.value === 'keep';
    dialog.close();
    act(api.del(`/sources/${encodeURIComponent(s.name)}?keepDocuments=${keep}`).then((r) => toast(t('src.removed', { name: s.name, n: r.deletedDocuments }))));
  } },
  h('h2', { id: titleId }, t('src.removeOf', { name: s.name })),
  h('fieldset', { class: 'plain-set' }, h('legend', {}, t('src.itsDocuments')),
    h('div', {}, choice('delete', 'src.deleteDocuments', true)), h('div', {}, choice('keep', 'src.keepDocuments', false))),
  h('div', { class: 'row' }, h('button', { type: 'submit', class: 'danger-fill' }, t('src.remove')),
    h('button', { type: 'button', class: 'ghost', onclick: () => dialog.close() }, t('common.cancel'))));
  dialog.append(form);
  dialog.addEventListener('close', () => dialog.remove());
  document.getElementById('main').append(dialog);
  dialog.showModal();
}

function addForm(refresh, listError) {
  const error = errorBox();
  const result = h('p', { class: 'test-result small', role: 'status', 'aria-live': 'polite' });
  const kind = h('select', { name: 'kind' }, Object.keys(KINDS).map((k) => h('option', { value: k }, kindName(k))));
  const name = h('input', { name: 'name', required: true, maxLength: 64, autocomplete: 'off' });
  const fields = h('div', { class: 'grid2 kind-fields' });
  let inputs = [];

  function drawFields() {
    const specs = [...KINDS[kind.value].fields, ...COMMON];
    const typed = Object.fromEntries(inputs.map(([spec, el]) => [spec.name, el.value])); // kept across kinds
    inputs = specs.map((spec) => {
      const el = input(spec);
      if (typed[spec.name] && spec.type !== 'secret') el.value = typed[spec.name];
      return [spec, el];
    });
    clear(fields, inputs.map(([spec, el]) => field(t(spec.label), el, spec.hint ? t(spec.hint) : null)));
    clear(result);
  }
  kind.addEventListener('change', drawFields);

  function body() {
    const out = { kind: kind.value };
    for (const [spec, el] of inputs) {
      const value = valueOf(spec, el);
      if (value !== undefined) out[spec.name] = value;
    }
    return out;
  }

  const testButton = h('button', { type: 'button', class: 'ghost', onclick: test }, t('src.test'));
  async function test() {
    showError(error, null);
    if (!inputs.every(([, el]) => el.reportValidity())) return;
    testButton.disabled = true;
    clear(result, t('src.testing'));
    try {
      const r = await api.post('/sources/test', body());
      clear(result, h('span', { class: r.ok ? 'ok' : 'error' }, t(r.ok ? 'src.testOk' : 'src.testFailed')), ' ', r.message);
    } catch (err) {
      clear(result);
      showError(error, err);
    } finally {
      testButton.disabled = false;
    }
  }

  async function add(e) {
    e.preventDefault();
    showError(error, null);
    showError(listError, null);
    try {
      await api.post('/sources', { ...body(), name: name.value.trim() });
      toast(t('src.addedSource', { name: name.value.trim() }));
      form.reset();
      inputs = [];
      drawFields();
      refresh();
    } catch (err) {
      showError(error, err);
    }
  }

  const form = h('form', { class: 'card add-source', onsubmit: add, 'aria-labelledby': 'add-source-title' },
    h('h2', { id: 'add-source-title' }, t('src.add')),
    h('div', { class: 'grid2' }, field(t('src.kind'), kind), field(t('src.name'), name, t('src.nameHint'))),
    fields, error, result,
    h('div', { class: 'row' }, testButton, h('button', { type: 'submit' }, t('src.addButton'))));
  drawFields();
  return form;
}
