// Sources: the library's connectors (GET /sources), each with its kind, where it reads, whether
// it is paused, and its last sync (when; added, changed, deleted; each file's error). Its owners
// add one (its kind's fields from KINDS below), test the connection first (POST /sources/test:
// one request, nothing kept), sync now (the request lasts the sync: a progress bar meanwhile,
// then what changed), pause or resume it, replace its credential, and remove it with or without
// its documents. A credential is write-only: the page sends it and shows only that one is kept
// (`hasCredential`); no answer holds it.
// Everyone else in the library sees the list only (the server refuses them too).
import * as api from '../api.js';
import { clear, errorBox, field, h, page, refreshStatus, showError, toast } from '../layout.js';
import { addEnglish, getLanguage, t } from '../i18n.js';
import words from '../lang/en_sources.js';
import { session } from '../api.js';

addEnglish(words);

// One row per kind of source: its fields, in the order shown. `name` is the request's field
// (POST /sources; the source's settings name it in snake_case); `type` is text, url, number,
// list (one value a line), choice (`options`: value → words; '' leaves the server's default),
// check (a box, ticked unless `checked: false`) or secret (write-only: never drawn from what
// the server holds, nor kept when the kind changes). `carry: false`: a value typed for another
// kind's field of that name is not carried into this one (a drive's API root is no website).
// A new kind is one more row here (and its words in i18n); nothing else in the page names one.
const CREDENTIAL = (hint, required = false) => ({ name: 'credential', type: 'secret', label: 'src.credential', hint, required });
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
  confluence: {
    fields: [
      { name: 'url', type: 'url', label: 'src.confluence.url', hint: 'src.confluence.urlHint', required: true, placeholder: 'https://team.atlassian.net/wiki' },
      { name: 'space', type: 'text', label: 'src.confluence.space', hint: 'src.confluence.spaceHint', required: true, placeholder: 'ENG' },
      { name: 'edition', type: 'choice', label: 'src.confluence.edition', hint: 'src.confluence.editionHint', options: { '': 'src.confluence.byHost', cloud: 'src.confluence.cloud', datacenter: 'src.confluence.datacenter' } },
      { name: 'attachments', type: 'check', label: 'src.confluence.attachments' },
      { name: 'maxPages', type: 'number', label: 'src.maxPages', placeholder: '500' },
      CREDENTIAL('src.confluence.credentialHint'),
    ],
  },
  sharepoint: {
    fields: [
      { name: 'driveId', type: 'text', label: 'src.sharepoint.driveId', hint: 'src.sharepoint.driveIdHint', required: true },
      { name: 'itemId', type: 'text', label: 'src.sharepoint.itemId', hint: 'src.sharepoint.itemIdHint' },
      CREDENTIAL('src.sharepoint.credentialHint', true),
      { name: 'url', type: 'url', label: 'src.apiRoot', hint: 'src.apiRootHint', placeholder: 'https://graph.microsoft.com/v1.0', carry: false },
      { name: 'maxFiles', type: 'number', label: 'src.maxFiles', placeholder: '5000' },
    ],
  },
  gdrive: {
    fields: [
      { name: 'folderId', type: 'text', label: 'src.gdrive.folderId', hint: 'src.gdrive.folderIdHint', required: true },
      { name: 'sharedDriveId', type: 'text', label: 'src.gdrive.sharedDriveId', hint: 'src.gdrive.sharedDriveIdHint' },
      { name: 'export', type: 'choice', label: 'src.gdrive.export', options: { text: 'src.gdrive.text', markdown: 'src.gdrive.markdown', docx: 'src.gdrive.docx' } },
      CREDENTIAL('src.gdrive.credentialHint', true),
      { name: 'url', type: 'url', label: 'src.apiRoot', hint: 'src.apiRootHint', placeholder: 'https://www.googleapis.com', carry: false },
      { name: 'maxFiles', type: 'number', label: 'src.maxFiles', placeholder: '5000' },
    ],
  },
};
// Fields every kind has, after its own.
const COMMON = [{ name: 'folder', type: 'text', label: 'src.folder', hint: 'src.folderHint' }];

export const kindName = (kind) => (KINDS[kind] ? t(`src.kind.${kind}`) : kind);
const secretOf = (kind) => KINDS[kind]?.fields.find((spec) => spec.type === 'secret');
const settingOf = (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`); // driveId → drive_id

function input(spec) {
  const props = { name: spec.name, required: spec.required || false, placeholder: spec.placeholder || '', autocomplete: 'off' };
  if (spec.type === 'list') return h('textarea', { ...props, rows: 2 });
  if (spec.type === 'number') return h('input', { ...props, type: 'number', min: 1 });
  if (spec.type === 'secret') return h('input', { ...props, type: 'password', autocomplete: 'new-password' });
  if (spec.type === 'check') return h('input', { name: spec.name, type: 'checkbox', checked: spec.checked !== false });
  if (spec.type === 'choice') return h('select', { name: spec.name }, Object.entries(spec.options).map(([value, key]) => h('option', { value }, t(key))));
  return h('input', { ...props, type: spec.type === 'url' ? 'url' : 'text', maxLength: spec.type === 'url' ? 2048 : 300 });
}

// A field's value as the request carries it; undefined when left empty.
function valueOf(spec, el) {
  if (spec.type === 'check') return el.checked;
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
  // its address, its kind's own words (a space, a drive, a branch), its folder; a kind this
  // page does not know still shows its name, address and folder
  const own = (KINDS[s.kind]?.fields || []).filter((spec) => spec.type === 'text' || spec.type === 'choice')
    .map((spec) => {
      const value = s.settings[settingOf(spec.name)];
      return [t(spec.label), spec.type === 'choice' && spec.options[value] ? t(spec.options[value]) : value];
    });
  const where = [[t('src.address'), s.settings.url], ...own, [t('src.folder'), `${s.folder}/`]]
    .filter(([, value]) => typeof value === 'string' && value);
  const status = h('div', { class: 'sync-status', role: 'status', 'aria-live': 'polite' });
  const box = h('section', { class: 'card source-card', 'aria-label': s.name },
    h('h2', {}, s.name, h('span', { class: 'tag' }, kindName(s.kind)), s.paused ? h('span', { class: 'tag paused' }, t('src.paused')) : null,
      s.hasCredential ? h('span', { class: 'tag credential' }, t('src.credentialKept')) : null),
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
    secretOf(s.kind) || s.hasCredential
      ? h('button', { type: 'button', class: 'ghost', onclick: () => credentialDialog(s, act) }, t(s.hasCredential ? 'src.replaceCredential' : 'src.setCredential'))
      : null,
    h('button', { type: 'button', class: 'ghost danger', onclick: () => removeDialog(s, act) }, t('src.remove'))));
  return box;
}

// Replace (or give) the source's credential: PUT /sources/{name}/credential. The one kept is
// never shown (the server never answers it); the field starts empty and goes with the dialog.
function credentialDialog(s, act) {
  const titleId = `credential-${s.id}`;
  const spec = secretOf(s.kind) || CREDENTIAL(null);
  const secret = input({ ...spec, required: true });
  const dialog = h('dialog', { class: 'meta-dialog', 'aria-labelledby': titleId });
  const form = h('form', { method: 'dialog', onsubmit: (e) => {
    e.preventDefault();
    const credential = secret.value.trim();
    if (!credential) return;
    dialog.close();
    act(api.put(`/sources/${encodeURIComponent(s.name)}/credential`, { credential }).then(() => toast(t('src.credentialSaved', { name: s.name }))));
  } },
  h('h2', { id: titleId }, t('src.credentialOf', { name: s.name })),
  s.hasCredential ? h('p', { class: 'muted small' }, t('src.credentialReplaces')) : null,
  field(t('src.newCredential'), secret, spec.hint ? t(spec.hint) : null),
  h('div', { class: 'row' }, h('button', { type: 'submit' }, t('src.saveCredential')),
    h('button', { type: 'button', class: 'ghost', onclick: () => dialog.close() }, t('common.cancel'))));
  dialog.append(form);
  dialog.addEventListener('close', () => dialog.remove());
  document.getElementById('main').append(dialog);
  dialog.showModal();
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
    // what was typed is kept across kinds, field by field (a secret never; a box, a choice
    // and a field that says `carry: false` start afresh)
    const typed = Object.fromEntries(inputs.filter(([spec]) => ['text', 'url', 'number', 'list'].includes(spec.type))
      .map(([spec, el]) => [spec.name, el.value]));
    inputs = specs.map((spec) => {
      const el = input(spec);
      if (typed[spec.name] && spec.carry !== false && spec.type !== 'secret') el.value = typed[spec.name];
      return [spec, el];
    });
    clear(fields, inputs.map(([spec, el]) => (spec.type === 'check'
      ? h('div', { class: 'field' }, h('label', { class: 'check' }, el, t(spec.label)))
      : field(t(spec.label), el, spec.hint ? t(spec.hint) : null))));
    clear(result);
  }
  kind.addEventListener('change', drawFields);

  // what the form holds as a request; a test of the connection carries the credential too
  // (the server uses it for the test's request, keeps it nowhere and never answers it)
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
