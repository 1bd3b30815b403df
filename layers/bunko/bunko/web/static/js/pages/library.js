// Library: drag-and-drop upload with a progress bar per file, options per upload with the
// recommended mode, and the file list with live status (pending → indexing → completed/failed).
import * as api from '../api.js';
import { clear, field, formatBytes, h } from '../dom.js';
import { t } from '../i18n.js';
import { errorBox, page, refreshStatus, showError } from '../layout.js';

// While a file is pending or indexing the list is polled (on AWS each poll is an API Gateway
// + Lambda + DynamoDB call): 1 s after a change, then twice as long each time nothing
// changed, up to 15 s. Not while the tab is hidden (it polls again when shown), not after
// the person left the page (render() clears the timer).
const POLL_FIRST_MS = 1000;
const POLL_MAX_MS = 15000;
let poll = null; // the next poll's timer
let pollDelay = POLL_FIRST_MS;
let polledStatuses = ''; // what the last answer said, to tell a change from no change

export function render() {
  clearTimeout(poll);
  const picked = [];
  const input = h('input', { type: 'file', multiple: true, id: 'files', class: 'visually-hidden' });
  const queue = h('ul', { class: 'queue', 'aria-label': t('lib.queue') });
  const chunkSize = h('input', { type: 'number', min: 50, max: 20000, placeholder: '1000', name: 'chunkSize' });
  const chunkOverlap = h('input', { type: 'number', min: 0, max: 10000, placeholder: '200', name: 'chunkOverlap' });
  const modeSelect = (name) => h('select', { 'aria-label': `${t('lib.mode')}: ${name}` }, h('option', { value: 'fast' }, t('lib.fast')), h('option', { value: 'precise' }, t('lib.precise')));
  const category = h('input', { name: 'category', maxLength: 100 });
  const uploadButton = h('button', { type: 'submit', disabled: true }, t('lib.upload'));
  const list = h('div', { class: 'files' });
  const listError = errorBox();

  function add(files) {
    for (const file of files) {
      const bar = h('progress', { max: 1, value: 0, 'aria-label': file.name });
      const note = h('span', { class: 'muted small' });
      const mode = modeSelect(file.name);
      const item = { file, bar, note, mode };
      const remove = h('button', { type: 'button', class: 'ghost', 'aria-label': `${t('lib.remove')}: ${file.name}`, onclick: () => {
        const at = picked.indexOf(item); // -1 once its upload has started
        if (at !== -1) picked.splice(at, 1);
        item.row.remove();
        uploadButton.disabled = picked.length === 0;
      } }, '×');
      item.row = h('li', {}, h('span', { class: 'name' }, file.name), h('span', { class: 'row' }, h('span', { class: 'muted small' }, formatBytes(file.size)), mode, remove), bar, note);
      picked.push(item);
      queue.append(item.row);
      recommend(item);
    }
    uploadButton.disabled = picked.length === 0;
  }

  async function recommend(item) {
    try {
      const r = await api.get(`/api/vision/recommend-mode?file=${encodeURIComponent(item.file.name)}&size=${item.file.size}`);
      item.mode.value = r.recommendedMode; // the advice is the default; the person may change it
      item.note.textContent = `${t('lib.recommended')}: ${t(`lib.${r.recommendedMode}`)} — ${r.reason}`;
    } catch {
      // advice only: the upload works without it
    }
  }

  async function uploadAll(e) {
    e.preventDefault();
    uploadButton.disabled = true;
    const items = picked.splice(0);
    let direct = false;
    await Promise.all(items.map(async (item) => {
      try {
        const sent = await api.upload(item.file, {
          chunkSize: chunkSize.value, chunkOverlap: chunkOverlap.value, mode: item.mode.value, category: category.value,
        }, (p) => (item.bar.value = p));
        item.bar.value = 1;
        item.mode.disabled = true;
        if (sent && sent.direct) {
          // Sent straight to storage: listed once storage has reported it, so the row stays.
          direct = true;
          item.note.textContent = t('lib.uploadedDirect');
        } else {
          item.note.textContent = t('lib.uploaded');
          setTimeout(() => item.row.remove(), 1500);
        }
      } catch (err) {
        item.row.classList.add('failed');
        item.note.textContent = '';
        const message = err.reason ? t(`lib.direct.${err.reason}`, { detail: err.detail }) : err.message;
        item.note.append(h('span', { class: 'error', role: 'alert' }, message));
      }
    }));
    refresh();
    if (direct) for (const ms of [3000, 10000]) setTimeout(refresh, ms);
  }

  const drop = h('label', { class: 'drop', for: 'files' }, h('strong', {}, t('lib.drop')), h('span', { class: 'muted' }, t('lib.dropHint')));
  for (const type of ['dragenter', 'dragover']) drop.addEventListener(type, (e) => { e.preventDefault(); drop.classList.add('over'); });
  for (const type of ['dragleave', 'drop']) drop.addEventListener(type, () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => { e.preventDefault(); add(e.dataTransfer.files); });
  input.addEventListener('change', () => { add(input.files); input.value = ''; });

  const form = h('form', { class: 'card', onsubmit: uploadAll },
    input, drop, queue,
    h('div', { class: 'grid4' }, field(t('lib.chunkSize'), chunkSize), field(t('lib.chunkOverlap'), chunkOverlap), field(t('lib.category'), category)),
    h('div', { class: 'row' }, uploadButton));

  // `polled`: called by the poll's timer. Any other call (the page opening, an upload, a
  // delete, the tab shown again) starts the backoff again from its first step.
  async function refresh(polled = false) {
    clearTimeout(poll);
    if (!document.body.contains(list)) return; // left the page
    const byTimer = polled === true;
    if (byTimer && document.visibilityState === 'hidden') {
      // one listener however often this runs (the same function): polls again when shown
      document.addEventListener('visibilitychange', refresh, { once: true });
      return;
    }
    let files;
    try {
      files = await api.get('/knowledge-bases');
      showError(listError, null);
    } catch (err) {
      showError(listError, err);
      // while it was polling, keep trying, gently
      if (byTimer || list.dataset.pollMs) schedule(Math.min(pollDelay * 2, POLL_MAX_MS));
      return;
    }
    refreshStatus();
    clear(list, files.length ? table(files, refresh) : h('p', { class: 'muted' }, t('lib.empty')));
    const statuses = files.map((f) => `${f.id}:${f.status}`).join();
    const same = byTimer && statuses === polledStatuses;
    polledStatuses = statuses;
    if (files.some((f) => f.status === 'pending' || f.status === 'indexing')) schedule(same ? Math.min(pollDelay * 2, POLL_MAX_MS) : POLL_FIRST_MS);
    else delete list.dataset.pollMs;
  }

  function schedule(ms) {
    clearTimeout(poll); // a refresh that overlapped another leaves one timer, not two
    pollDelay = ms;
    list.dataset.pollMs = ms; // the next poll's delay, for a person (and a test) to read
    poll = setTimeout(refresh, ms, true);
  }

  async function clearAll() {
    if (!confirm(t('lib.clearConfirm'))) return;
    try {
      await api.del('/knowledge-bases/clear');
    } catch (err) {
      showError(listError, err);
    }
    refresh();
  }

  page('lib.title', form,
    h('div', { class: 'row spread' }, h('h2', {}, t('lib.files')), h('button', { type: 'button', class: 'ghost danger', onclick: clearAll }, t('lib.clear'))),
    listError, list);
  refresh();
}

function table(files, refresh) {
  const rows = files.map((f) => h('tr', {},
    h('td', {}, h('a', { href: `#/files/${f.id}` }, f.originalName), f.category ? h('span', { class: 'tag' }, f.category) : null),
    h('td', {}, h('span', { class: `badge ${f.status}` }, t(`st.${f.status}`)), f.error ? h('div', { class: 'error small' }, f.error) : null),
    h('td', { class: 'num' }, f.chunkCount),
    h('td', { class: 'num' }, formatBytes(f.size)),
    h('td', {}, h('button', {
      type: 'button', class: 'ghost danger', 'aria-label': `${t('lib.delete')} ${f.originalName}`,
      onclick: async () => { await api.del(`/knowledge-bases/${f.id}`).catch(() => {}); refresh(); },
    }, t('lib.delete')))));
  return h('div', { class: 'scroll' }, h('table', {},
    h('thead', {}, h('tr', {}, h('th', {}, t('lib.name')), h('th', {}, t('lib.status')), h('th', { class: 'num' }, t('lib.chunksHead')), h('th', { class: 'num' }, t('lib.size')), h('th', {}, h('span', { class: 'visually-hidden' }, t('lib.actions'))))),
    h('tbody', {}, rows)));
}
