// Library: drag-and-drop upload of one file or a folder of hundreds, with a progress bar per
// file, options per upload with the recommended mode and metadata for the files, one summary
// line ("80 uploaded", "2 failed — Retry"), and the file list below (library_files.js) with
// its metadata filter bar (filter_bar.js) and each file's "Edit metadata" (metadata_dialog.js).
import * as api from '../api.js';
import { clear, field, formatBytes, h, page, showError } from '../layout.js';
import { serverMessage, t } from '../i18n.js';
import { session } from '../api.js';
import { createQueue } from '../upload_queue.js';
import { upload } from '../uploads.js';
import { filterBar } from './filter_bar.js';
import { fileList, stopPolling } from './library_files.js';
import { editMetadata } from './metadata_dialog.js';
import { rowEditor } from './metadata_editor.js';

const DONE_ROW_MS = 1500; // an uploaded row stays this long, then leaves the queue
const ADVICE_AT_ONCE = 2; // mode advice requests in flight, however many files were dropped
const LIST_EVERY_MS = 3000; // while a batch uploads, the list below catches up this often

// The keys of a Markdown file's front matter (a leading --- block), to say before the upload
// which metadata the file brings itself; the server reads the values (domain/front_matter).
const FRONT = /^(?:\uFEFF)?---[ \t]*\r?\n([\s\S]*?)^(?:---|\.\.\.)[ \t]*$/m;
async function frontMatterKeys(file) {
  if (!/\.(md|markdown)$/i.test(file.name)) return [];
  try {
    const block = FRONT.exec(await file.slice(0, 64 * 1024).text());
    if (!block || block.index !== 0) return [];
    return [...block[1].matchAll(/^([^\s#:-][^:\n]*?):(?:\s|$)/gm)].map((m) => m[1].trim()).filter((k) => k !== 'category');
  } catch {
    return [];
  }
}

// What the server reads (parsing/mime.py): by extension, or a declared text type.
const READABLE = /\.(txt|text|log|md|markdown|html?|xhtml|csv|tsv|json|pdf|docx|pptx|xlsx)$/i;
const IMAGE = /\.(png|jpe?g|gif|webp|bmp|tiff?|heic|svg)$/i;
function readable(file) {
  return READABLE.test(file.name) || /^text\/|^application\/json$/.test(file.type || '');
}
function refusal(file) {
  const ext = (/\.([^.]+)$/.exec(file.name)?.[1] || '').toUpperCase();
  return t(IMAGE.test(file.name) ? 'lib.notImage' : ext ? 'lib.notType' : 'lib.notFile', { ext, types: t('lib.types') });
}

export function render() {
  stopPolling();
  const picked = []; // chosen, not yet sent
  const input = h('input', { type: 'file', multiple: true, id: 'files', class: 'visually-hidden' });
  const queueList = h('ul', { class: 'queue', 'aria-label': t('lib.queue') });
  const summary = h('div', { class: 'upload-summary row', role: 'status', 'aria-live': 'polite', hidden: true });
  const chunkSize = h('input', { type: 'number', min: 50, max: 20000, placeholder: '1000', name: 'chunkSize' });
  const chunkOverlap = h('input', { type: 'number', min: 0, max: 10000, placeholder: '200', name: 'chunkOverlap' });
  const modeSelect = (name) => h('select', { class: 'mode', 'aria-label': `${t('lib.mode')}: ${name}` }, h('option', { value: 'fast' }, t('lib.fast')), h('option', { value: 'precise' }, t('lib.precise')));
  const category = h('input', { name: 'category', maxLength: 100 });
  const uploadButton = h('button', { type: 'submit', disabled: true }, t('lib.upload'));
  const uploadMeta = rowEditor();
  const uploadMetaError = h('p', { class: 'error', role: 'alert', hidden: true });
  const bar = filterBar({ scope: 'library', onChange: () => files.filtered() });
  const files = fileList({
    readOnly: session.library()?.role === 'viewer',
    filterBar: bar,
    edit: (file) => editMetadata(file, { saved: () => { files.refresh(); bar.reload(); } }),
  });
  let direct = false; // a file went straight to storage: it is listed once storage reports it
  let wasIdle = true;
  let listedAt = Date.now();

  const queue = createQueue({
    send: (item) => upload(item.file, {
      chunkSize: item.options.chunkSize, chunkOverlap: item.options.chunkOverlap, mode: item.mode.value, category: item.options.category,
      metadata: item.metadata,
    }, (p) => (item.bar.value = p)),
    changed,
  });

  function changed() {
    for (const item of allItems) drawItem(item);
    drawSummary();
    const { idle, done } = queue.status();
    if (!idle && done > 0 && Date.now() - listedAt > LIST_EVERY_MS) {
      listedAt = Date.now(); // a long batch shows its files as they land, not only at the end
      files.refresh();
    }
    if (idle && !wasIdle) {
      files.refresh();
      bar.reload(); // the keys the new files brought
      if (direct) for (const ms of [3000, 10000]) setTimeout(files.refresh, ms);
      direct = false;
    }
    wasIdle = idle;
  }

  // Rows redraw only when their state changed (a drop of 500 files redraws a few at a time).
  const allItems = new Set();
  function drawItem(item) {
    if (item.drawn === item.state) return;
    item.drawn = item.state;
    const { state, row, note, remove } = item;
    row.classList.toggle('failed', state === 'failed');
    row.classList.toggle('waiting', state === 'queued');
    item.mode.disabled = state !== 'picked';
    remove.hidden = state === 'sending' || state === 'done';
    if (state === 'queued') { item.bar.value = 0; clear(note, t('lib.waiting')); }
    if (state === 'sending') clear(note, t('lib.sending'));
    if (state === 'failed') {
      const err = item.error;
      const message = err.reason ? t(`lib.direct.${err.reason}`, { detail: err.detail }) : serverMessage(err.message);
      clear(note, h('span', { class: 'error', role: 'alert' }, message));
    }
    if (state === 'done') {
      item.bar.value = 1;
      if (item.result && item.result.direct) {
        direct = true;
        clear(note, t('lib.uploadedDirect')); // stays until the list shows it
      } else if (item.result && item.result.existing) {
        clear(note, t('lib.existing')); // stays: nothing new was added
      } else {
        clear(note, t('lib.uploaded'));
        setTimeout(() => forget(item), DONE_ROW_MS);
      }
    }
  }

  function forget(item) {
    item.row.remove();
    allItems.delete(item);
  }

  function drawSummary() {
    const s = queue.status();
    summary.hidden = s.total === 0;
    if (!s.idle) {
      const parts = [t('lib.progress', { done: s.done, total: s.total })];
      if (s.waitS > 0) parts.push(t('lib.paced', { s: s.waitS }));
      clear(summary, h('span', {}, parts.join(' · ')));
    } else {
      const added = s.done - s.existing;
      const parts = [added || !s.existing ? t('lib.summaryDone', { n: added }) : null,
        s.existing ? t('lib.summaryExisting', { n: s.existing }) : null].filter(Boolean);
      clear(summary,
        s.failed === 0 ? h('span', { class: 'ok' }, parts.join(' · ')) : null,
        s.failed && s.done ? h('span', {}, `${parts.join(' · ')} · `) : null,
        s.failed ? h('span', { class: 'error' }, t('lib.summaryFailed', { n: s.failed })) : null,
        // Retry only where sending again may help (the network, the server), never for a refusal
        s.failed && s.canRetry ? [' — ', h('button', { type: 'button', class: 'ghost', onclick: () => queue.retryFailed() }, t('lib.retry'))] : null);
    }
  }

  function add(chosen) {
    const fresh = [];
    for (const file of chosen) {
      if (!readable(file)) { // said at once, never sent, no Retry: the file cannot be read
        const gone = h('button', { type: 'button', class: 'ghost', 'aria-label': `${t('lib.remove')}: ${file.name}`, onclick: () => row.remove() }, '×');
        const row = h('li', { class: 'failed' }, h('span', { class: 'name' }, file.name), h('span', { class: 'row' }, h('span', { class: 'muted small' }, formatBytes(file.size)), gone),
          h('span', { class: 'error', role: 'alert' }, refusal(file)));
        queueList.append(row);
        continue;
      }
      const item = { file, state: 'picked', drawn: 'picked' };
      item.bar = h('progress', { max: 1, value: 0, 'aria-label': file.name });
      item.note = h('span', { class: 'muted small' });
      item.mode = modeSelect(file.name);
      item.remove = h('button', { type: 'button', class: 'ghost', 'aria-label': `${t('lib.remove')}: ${file.name}`, onclick: () => drop(item) }, '×');
      item.front = h('span', { class: 'muted small front', hidden: true });
      item.advice = h('span', { class: 'muted small advice' });
      item.row = h('li', {}, h('span', { class: 'name' }, file.name), h('span', { class: 'row' }, h('span', { class: 'muted small' }, formatBytes(file.size)), item.mode, item.remove), item.bar, item.note, item.advice, item.front);
      frontMatterKeys(file).then((keys) => {
        if (!keys.length) return;
        item.front.textContent = t('meta.fromFile', { keys: keys.join(', ') });
        item.front.hidden = false;
      });
      picked.push(item);
      allItems.add(item);
      fresh.push(item);
      queueList.append(item.row);
    }
    uploadButton.disabled = picked.length === 0;
    advise(fresh);
  }

  // × takes this very item out, wherever it is: chosen, waiting its turn, or failed.
  function drop(item) {
    const at = picked.indexOf(item);
    if (at !== -1) picked.splice(at, 1);
    else queue.remove(item);
    forget(item);
    uploadButton.disabled = picked.length === 0;
    drawSummary();
  }

  // The recommended mode per file, a couple of requests at a time.
  async function advise(items) {
    const todo = [...items];
    const worker = async () => {
      for (let item = todo.shift(); item; item = todo.shift()) {
        if (item.state !== 'picked') continue;
        try {
          const r = await api.get(`/api/vision/recommend-mode?file=${encodeURIComponent(item.file.name)}&size=${item.file.size}`);
          if (item.state !== 'picked') continue;
          item.mode.value = r.recommendedMode; // the advice is the default; the person may change it
          item.advice.textContent = `${t('lib.recommended')}: ${t(`lib.${r.recommendedMode}`)} — ${r.reason}`;
        } catch {
          // advice only: the upload works without it
        }
      }
    };
    await Promise.all(Array.from({ length: ADVICE_AT_ONCE }, worker));
  }

  function uploadAll(e) {
    e.preventDefault();
    // The metadata as it is now goes with these files (a later edit is for the next ones).
    let metadata;
    try {
      metadata = uploadMeta.value();
      showError(uploadMetaError, null);
    } catch (err) {
      showError(uploadMetaError, err);
      metaBox.open = true;
      return;
    }
    const text = Object.keys(metadata).length ? JSON.stringify(metadata) : '';
    const items = picked.splice(0);
    const options = { chunkSize: chunkSize.value, chunkOverlap: chunkOverlap.value, category: category.value };
    for (const item of items) Object.assign(item, { metadata: text, options });
    // This batch took the form's metadata and category: the next one starts blank.
    uploadMeta.reset();
    category.value = '';
    metaBox.open = false;
    uploadButton.disabled = true; // until more files are chosen
    showError(files.listError, null);
    queue.add(items);
  }

  const dropZone = h('label', { class: 'drop', for: 'files' }, h('strong', {}, t('lib.drop')), h('span', { class: 'muted' }, t('lib.dropHint')));
  for (const type of ['dragenter', 'dragover']) dropZone.addEventListener(type, (e) => { e.preventDefault(); dropZone.classList.add('over'); });
  for (const type of ['dragleave', 'drop']) dropZone.addEventListener(type, () => dropZone.classList.remove('over'));
  dropZone.addEventListener('drop', (e) => { e.preventDefault(); add(e.dataTransfer.files); });
  input.addEventListener('change', () => { add(input.files); input.value = ''; });

  const metaBox = h('details', { class: 'upload-meta' },
    h('summary', {}, t('meta.forUpload')),
    h('p', { class: 'muted small' }, t('meta.uploadHint'), ' ', t('meta.uploadOnce')),
    uploadMeta.element);
  // The engine's knobs (chunking, and each file's reading mode with its advice) stay folded:
  // the defaults and the advice fit nearly every file.
  const advanced = h('details', { class: 'advanced', ontoggle: () => form.classList.toggle('show-advanced', advanced.open) },
    h('summary', {}, t('lib.advanced')), h('p', { class: 'muted small' }, t('lib.advancedHint')),
    h('div', { class: 'grid4' }, field(t('lib.chunkSize'), chunkSize), field(t('lib.chunkOverlap'), chunkOverlap)));
  const form = h('form', { class: 'card', onsubmit: uploadAll },
    input, dropZone, summary, queueList,
    h('div', { class: 'grid4' }, field(t('lib.category'), category)),
    metaBox, advanced, uploadMetaError,
    h('div', { class: 'row' }, uploadButton));

  async function clearAll() {
    if (!confirm(t('lib.clearConfirm'))) return;
    try {
      await api.del('/knowledge-bases/clear');
    } catch (err) {
      showError(files.listError, err);
    }
    files.refresh();
  }

  // A viewer of a shared library reads it: no upload, no delete (the server refuses them too).
  const shared = session.library();
  const readOnly = shared?.role === 'viewer';
  const main = page('lib.title', readOnly ? h('p', { class: 'muted' }, t('lib.readOnly', { name: shared.name })) : form,
    h('div', { class: 'row spread' }, h('h2', {}, t('lib.files')), readOnly ? null : h('button', { type: 'button', class: 'ghost danger', onclick: clearAll }, t('lib.clear'))),
    files.element);
  if (shared) main.querySelector('h1').append(' · ', h('span', { class: 'library-name' }, shared.name));
  // Where this library's files come from: the server's drop folder fills one library, and
  // each sub-folder an admin mapped fills its own.
  const source = h('p', { class: 'muted small source', hidden: true });
  main.querySelector('h1').after(source);
  // Its sources (websites, Git repositories): a page of their own (sources.js).
  source.after(h('p', { class: 'small sources-link' }, h('a', { href: '#/sources' }, t('src.manage'))));
  api.get('/drop-folder').then((d) => {
    if (!d.available) return;
    const subs = (d.subfoldersHere || []).map((name) => `${name}/`).join(', ');
    if (subs) source.textContent = t(d.feedsThisLibrary ? 'lib.fedByDropAndSub' : 'lib.fedBySub', { folders: subs });
    else source.textContent = t(d.feedsThisLibrary ? 'lib.fedByDrop' : 'lib.fedByUploads');
    source.hidden = false;
  }).catch(() => {});
  files.refresh();
}
