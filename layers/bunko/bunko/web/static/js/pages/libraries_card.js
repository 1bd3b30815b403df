// Settings → Libraries: the shared libraries one belongs to, with one's role; create one;
// in those one owns, add members by name, change their role, remove them, delete the library.
import * as api from '../api.js';
import { clear, errorBox, field, formatBytes, h, renderTop, showError, toast } from '../layout.js';
import { t } from '../i18n.js';
import { session } from '../api.js';
import { answerSections } from './answer_marks.js';

const ROLES = ['viewer', 'editor', 'owner'];
const path = (id, rest = '') => `/libraries/${encodeURIComponent(id)}${rest}`;

export function librariesCard() {
  const error = errorBox();
  const list = h('div', { class: 'libraries' });
  const name = h('input', { required: true, maxLength: 64, autocomplete: 'off' });

  async function refresh() {
    try {
      const shared = (await api.get('/libraries')).filter((l) => !l.personal);
      clear(list, shared.length ? shared.map(libraryView) : h('p', { class: 'muted' }, t('libs.none')));
      renderTop(location.hash.slice(1)); // the header's library menu lists the same libraries
    } catch (err) {
      showError(error, err);
    }
  }

  function libraryView(lib) {
    const members = h('ul', { class: 'plain' });
    const names = new Map(); // user id → username, for the activity's "by"
    const box = h('section', { class: 'library-card', 'aria-label': lib.name },
      h('h3', {}, lib.name, h('span', { class: 'tag' }, t(`lib.role.${lib.role}`))), members);
    const act = async (done, message) => {
      showError(error, null);
      try {
        await done;
        if (message) toast(message);
      } catch (err) {
        showError(error, err);
      }
      refresh();
    };
    const loaded = api.get(path(lib.id, '/members')).then((found) => {
      for (const m of found) names.set(m.userId, m.username);
      return found;
    });
    loaded.then((found) => clear(members, found.map((m) => h('li', { class: 'row spread' },
      h('span', {}, m.username),
      lib.role === 'owner'
        ? h('span', { class: 'row' },
          h('select', { 'aria-label': `${t('libs.role')} ${m.username}`, onchange: (e) => act(api.put(path(lib.id, '/members'), { username: m.username, role: e.target.value })) },
            ROLES.map((r) => h('option', { value: r, selected: r === m.role }, t(`lib.role.${r}`)))),
          h('button', { type: 'button', class: 'ghost danger', 'aria-label': `${t('libs.remove')} ${m.username}`, onclick: () => act(api.del(path(lib.id, `/members/${encodeURIComponent(m.userId)}`))) }, t('libs.remove')))
        : h('span', { class: 'muted small' }, t(`lib.role.${m.role}`)))))).catch((err) => showError(error, err));
    if (lib.role === 'owner') {
      const who = h('input', { required: true, maxLength: 64, autocomplete: 'off' });
      const role = h('select', {}, ROLES.map((r) => h('option', { value: r }, t(`lib.role.${r}`))));
      box.append(
        h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); act(api.put(path(lib.id, '/members'), { username: who.value.trim(), role: role.value })); } },
          field(t('libs.username'), who), field(t('libs.role'), role), h('button', { type: 'submit' }, t('libs.add'))),
        h('button', { type: 'button', class: 'ghost danger', onclick: () => {
          if (!confirm(t('libs.confirm', { name: lib.name }))) return;
          if (session.library()?.id === lib.id) session.setLibrary(null);
          act(api.del(path(lib.id)));
        } }, t('libs.delete')),
        exportSection(lib),
        activity(lib, names, loaded),
        ...answerSections(lib, (err) => showError(error, err)));
    }
    return box;
  }

  // The library's audit trail (GET /audit, owners only): the last 20 events, loaded when opened.
  // `membersLoaded` settles once `names` is filled: opened before that, the rows would show ids.
  function activity(lib, names, membersLoaded) {
    const body = h('div', {});
    const who = (e) => (e.userId ? names.get(e.userId) || e.userId
      : e.apiKeyId ? t('libs.activityKey', { name: names.get(e.keyMaker) || e.keyMaker || '' }) : '—');
    const details = h('details', { class: 'activity', ontoggle: async () => {
      if (!details.open) return;
      try {
        const [events] = await Promise.all([api.getIn(lib.id, '/audit?limit=20'), membersLoaded.catch(() => null)]);
        clear(body, events.length
          ? h('table', { class: 'activity-table' }, h('tbody', {}, events.map((e) => h('tr', { class: e.outcome },
            h('td', { class: 'small muted' }, new Date(e.at).toLocaleString()),
            h('td', {}, e.action), h('td', {}, `${e.outcome} ${e.status}`), h('td', {}, who(e)),
            h('td', { class: 'small muted' }, e.client || '')))))
          : h('p', { class: 'muted' }, t('libs.activityNone')));
      } catch (err) {
        showError(error, err);
      }
    } }, h('summary', {}, t('libs.activity')), body);
    return details;
  }

  // Export (owners): POST …/export starts it; its progress is polled until the archive's link
  // (good for a few minutes, no token needed: a browser's download sends none) is there.
  function exportSection(lib) {
    const conversations = h('input', { type: 'checkbox' });
    const status = h('p', { class: 'small muted', role: 'status' });
    const button = h('button', { type: 'button', class: 'ghost', onclick: async () => {
      showError(error, null);
      button.disabled = true;
      clear(status, t('libs.exporting', { done: 0, total: '…' }));
      try {
        let job = await api.sendIn(lib.id, 'POST', path(lib.id, '/export'), { conversations: conversations.checked });
        while (job.status === 'running') {
          await new Promise((done) => setTimeout(done, 500));
          job = await api.getIn(lib.id, path(lib.id, `/export/${encodeURIComponent(job.id)}`));
          clear(status, t('libs.exporting', { done: job.done, total: job.total }));
        }
        if (job.status !== 'done') throw new Error(t('libs.moveFailed', { error: job.error || '' }));
        clear(status, h('a', { href: api.absolute(job.download), download: '', class: 'button' },
          t('libs.download', { name: `${lib.name}.bunko.zip`, size: formatBytes(job.bytes) })));
      } catch (err) {
        clear(status);
        showError(error, err);
      } finally {
        button.disabled = false;
      }
    } }, t('libs.exportStart'));
    return h('details', { class: 'move' }, h('summary', {}, t('libs.export')),
      h('p', { class: 'small muted' }, t('libs.exportHint')),
      h('label', { class: 'row' }, conversations, t('libs.exportConversations')),
      h('div', { class: 'row' }, button), status);
  }

  // Import: the archive is uploaded and checked whole (a refusal makes nothing), then read
  // into a new library of the person's, documents first, then their indexing.
  function importForm() {
    const file = h('input', { type: 'file', accept: '.zip,application/zip', required: true });
    const named = h('input', { maxLength: 64, autocomplete: 'off' });
    const status = h('p', { class: 'small muted', role: 'status' });
    const submit = h('button', { type: 'submit' }, t('libs.importButton'));
    const progress = (job) => t(job.phase === 'indexing' ? 'libs.indexing' : 'libs.importing', { done: job.done, total: job.total });
    async function send(e) {
      e.preventDefault();
      showError(error, null);
      if (!file.files.length) return;
      submit.disabled = true;
      clear(status, t('libs.uploading'));
      try {
        const form = new FormData();
        // on AWS a large archive goes to storage first (a request's body stops at 4 MiB)
        const { archiveUpload } = await import('../uploads.js');
        const upload = await archiveUpload(file.files[0]);
        if (upload) form.append('upload', upload);
        else form.append('file', file.files[0]);
        if (named.value.trim()) form.append('name', named.value.trim());
        let job = await api.postForm('/libraries/import', form);
        refresh(); // the new library is listed at once; its documents arrive
        while (job.status === 'running') {
          clear(status, progress(job));
          await new Promise((done) => setTimeout(done, 500));
          job = await api.request('GET', `/libraries/import/${encodeURIComponent(job.id)}`, undefined, false, true);
        }
        if (job.status !== 'done') throw new Error(t('libs.moveFailed', { error: job.error || '' }));
        const message = t('libs.imported', { added: job.result.added, name: job.result.libraryName });
        clear(status, message);
        toast(message);
        file.value = '';
        named.value = '';
        refresh();
      } catch (err) {
        clear(status);
        showError(error, err);
      } finally {
        submit.disabled = false;
      }
    }
    return h('form', { class: 'import-library', onsubmit: send, 'aria-label': t('libs.import') },
      h('h3', {}, t('libs.import')),
      h('div', { class: 'row' }, field(t('libs.importFile'), file), field(t('libs.importName'), named), submit),
      status);
  }

  async function create(e) {
    e.preventDefault();
    showError(error, null);
    try {
      await api.post('/libraries', { name: name.value.trim() });
      name.value = '';
      refresh();
    } catch (err) {
      showError(error, err);
    }
  }

  refresh();
  return h('div', { class: 'card' }, h('h2', {}, t('libs.title')), list,
    h('form', { class: 'row', onsubmit: create }, field(t('libs.name'), name), h('button', { type: 'submit' }, t('libs.create'))),
    importForm(), error);
}
