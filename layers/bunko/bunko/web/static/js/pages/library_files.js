// The library's file list for hundreds of files: search by name, sort, a page of PAGE_SIZE at
// a time (all server-side: GET /knowledge-bases?q=&sort=&order=&limit=&offset=, the total in
// X-Total-Count), type and date columns, each file's metadata as chips, the metadata filter
// bar (filter_bar.js, sent as `filter`), Edit metadata, Download of the original, Delete
// after a confirm.
// While a shown file is pending or indexing the page is polled: 1 s after a change, then
// twice as long each time nothing changed, up to 15 s (on AWS each poll is an API Gateway +
// Lambda + DynamoDB call); not while the tab is hidden, not after the person left the page.
// Each file shows where it came from when that is not a hand upload: a source's name (GET
// /sources, asked only once a listed file has one) or the door (an agent, the drop folder).
import * as api from '../api.js';
import { clear, errorBox, formatBytes, h, refreshStatus, showError } from '../layout.js';
import { getLanguage, t } from '../i18n.js';
import { openOriginal } from './citations.js';
import { metadataChips } from './metadata_editor.js';

const PAGE_SIZE = 25; // a phone screen or two, never a 5,000 px list
const POLL_FIRST_MS = 1000;
const POLL_MAX_MS = 15000;
const SEARCH_PAUSE_MS = 250; // typing: ask once the person pauses
// The sort menu's choices: [value, sort, order, label key].
const ORDERS = [
  ['newest', 'date', 'desc', 'lib.sort.newest'], ['oldest', 'date', 'asc', 'lib.sort.oldest'],
  ['name', 'name', 'asc', 'lib.sort.name'], ['nameDesc', 'name', 'desc', 'lib.sort.nameDesc'],
  ['largest', 'size', 'desc', 'lib.sort.largest'], ['smallest', 'size', 'asc', 'lib.sort.smallest'],
  ['type', 'type', 'asc', 'lib.sort.type'],
];

let poll = null; // the next poll's timer, one for the whole app
// Doors whose files say so (a hand upload, the default, says nothing).
const DOORS = new Set(['agent', 'drop', 's3', 'cli']);

export function stopPolling() {
  clearTimeout(poll);
}

// The list with its controls; `refresh()` reloads the page shown (after an upload).
// `filterBar`: the metadata filter bar (filter_bar.js) shown under the search and sort,
// whose filter the list applies; `edit(file)`: opens the file's metadata editor.
export function fileList({ readOnly = false, filterBar = null, edit = null } = {}) {
  const view = { q: '', order: 'newest', offset: 0 };
  let pollDelay = POLL_FIRST_MS;
  let polledStatuses = ''; // what the last answer said, to tell a change from no change
  let typing = null;
  let sourceNames = null; // connector:<id> → the source's name, once a file needs it
  const sourcesAsked = new Set(); // the sources GET /sources was asked about

  const search = h('input', { type: 'search', placeholder: t('lib.searchPlaceholder'), 'aria-label': t('lib.searchFiles') });
  const sort = h('select', { 'aria-label': t('lib.sortBy') }, ORDERS.map(([value, , , key]) => h('option', { value }, t(key))));
  const list = h('div', { class: 'files' });
  const pager = h('nav', { class: 'pager row', 'aria-label': t('lib.pages') });
  const listError = errorBox();

  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => { view.q = search.value.trim(); view.offset = 0; refresh(); }, SEARCH_PAUSE_MS);
  });
  sort.addEventListener('change', () => { view.order = sort.value; view.offset = 0; refresh(); });

  function path() {
    const [, by, order] = ORDERS.find(([value]) => value === view.order);
    const params = new URLSearchParams({ sort: by, order, limit: PAGE_SIZE, offset: view.offset });
    if (view.q) params.set('q', view.q);
    const filter = filterBar && filterBar.filter();
    if (filter) params.set('filter', JSON.stringify(filter));
    return `/knowledge-bases?${params}`;
  }

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
    let page;
    try {
      page = await api.getPage(path());
      showError(listError, null);
    } catch (err) {
      showError(listError, err);
      // while it was polling, keep trying, gently
      if (byTimer || list.dataset.pollMs) schedule(Math.min(pollDelay * 2, POLL_MAX_MS));
      return;
    }
    if (!page.items.length && view.offset > 0 && page.total > 0) {
      view.offset = Math.max(0, Math.floor((page.total - 1) / PAGE_SIZE) * PAGE_SIZE); // the page emptied (a delete)
      return refresh();
    }
    refreshStatus();
    // a source not named yet (added since, or removed): asked once more, not at each poll
    const unnamed = page.items.map((f) => f.source || '').filter((s) => s.startsWith('connector:') && !sourcesAsked.has(s));
    if (unnamed.length) {
      unnamed.forEach((s) => sourcesAsked.add(s));
      sourceNames = await api.get('/sources')
        .then((found) => new Map(found.map((s) => [s.source, s.name]))).catch(() => sourceNames || new Map());
    }
    const filtered = Boolean(filterBar && filterBar.filter());
    const empty = filtered ? t('filter.noFiles') : view.q ? t('lib.noMatch', { q: view.q }) : t('lib.empty');
    // A redraw (a poll, a save) keeps the keyboard on the control it was on.
    const focused = list.contains(document.activeElement) ? handle(document.activeElement) : null;
    clear(list, page.items.length ? table(page.items, { remove: readOnly ? null : remove, download, edit: readOnly ? null : edit, sourceNames }) : h('p', { class: 'muted' }, empty));
    if (focused) [...list.querySelectorAll('a, button')].find((el) => handle(el) === focused)?.focus();
    clear(pager, ...pagerParts(page.total));
    const statuses = page.items.map((f) => `${f.id}:${f.status}`).join();
    const same = byTimer && statuses === polledStatuses;
    polledStatuses = statuses;
    if (page.items.some((f) => f.status === 'pending' || f.status === 'indexing')) schedule(same ? Math.min(pollDelay * 2, POLL_MAX_MS) : POLL_FIRST_MS);
    else delete list.dataset.pollMs;
  }

  function schedule(ms) {
    clearTimeout(poll); // a refresh that overlapped another leaves one timer, not two
    pollDelay = ms;
    list.dataset.pollMs = ms; // the next poll's delay, for a person (and a test) to read
    poll = setTimeout(refresh, ms, true);
  }

  function pagerParts(total) {
    if (!total) return [];
    const from = view.offset + 1;
    const to = Math.min(view.offset + PAGE_SIZE, total);
    const go = (offset) => () => { view.offset = offset; refresh(); };
    return [
      h('button', { type: 'button', class: 'ghost', disabled: view.offset === 0, onclick: go(Math.max(0, view.offset - PAGE_SIZE)) }, t('lib.previous')),
      h('span', { class: 'muted', 'aria-live': 'polite' }, t('lib.range', { from, to, total })),
      h('button', { type: 'button', class: 'ghost', disabled: to >= total, onclick: go(view.offset + PAGE_SIZE) }, t('lib.next')),
    ];
  }

  function download(file) {
    openOriginal({ documentId: file.id }).catch((err) => showError(listError, err));
  }

  async function remove(file) {
    if (!confirm(t('lib.deleteConfirm', { name: file.originalName }))) return;
    try {
      await api.del(`/knowledge-bases/${file.id}`);
    } catch (err) {
      showError(listError, err);
    }
    refresh();
  }

  // A new filter starts again at the first page.
  function filtered() {
    view.offset = 0;
    refresh();
  }

  const element = h('div', { class: 'file-list' },
    h('div', { class: 'row list-tools' }, search, sort), filterBar ? filterBar.element : null, listError, list, pager);
  return { element, refresh, filtered, listError };
}

// Where a file came from, when not by hand: its source's name, or its door.
export function sourceTag(file, names) {
  const source = file.source || '';
  if (source.startsWith('connector:')) {
    const name = names && names.get(source);
    return h('a', { class: 'tag source-tag', href: '#/sources', title: t('lib.fromSource', { name: name || source }) }, `⇄ ${name || t('lib.removedSource')}`);
  }
  return DOORS.has(source) ? h('span', { class: 'tag source-tag' }, t(`lib.door.${source}`)) : null;
}

function table(files, { remove, download, edit, sourceNames }) {
  const rows = files.map((f) => h('tr', {},
    h('td', { class: 'name' }, h('a', { href: `#/files/${f.id}` }, f.originalName), f.category ? h('span', { class: 'tag' }, f.category) : null, sourceTag(f, sourceNames),
      metadataChips(f.metadata, f.originalName)),
    h('td', { class: 'type' }, typeOf(f)),
    h('td', { class: 'date' }, h('time', { datetime: f.createdAt, title: new Date(f.createdAt).toLocaleString(getLanguage()) }, dateOf(f.createdAt))),
    h('td', { class: 'status' }, h('span', { class: `badge ${f.status}` }, t(`st.${f.status}`)), f.error ? h('div', { class: 'error small' }, f.error) : null),
    h('td', { class: 'num chunks' }, f.chunkCount),
    h('td', { class: 'num size' }, formatBytes(f.size)),
    h('td', { class: 'actions' },
      edit ? h('button', {
        type: 'button', class: 'ghost', 'aria-label': t('meta.editOf', { name: f.originalName }), 'data-edit': f.id,
        onclick: () => edit(f),
        // On a phone the pencil alone: three labelled buttons would push the actions onto a
        // line of their own in every card (the aria-label names it either way).
      }, h('span', { class: 'wide-label' }, t('meta.edit')), h('span', { class: 'narrow-label', 'aria-hidden': 'true' }, '✎')) : null,
      h('button', {
        type: 'button', class: 'ghost', 'aria-label': `${t('lib.download')} ${f.originalName}`,
        onclick: () => download(f),
      }, t('lib.download')),
      remove ? h('button', {
        type: 'button', class: 'ghost danger', 'aria-label': `${t('lib.delete')} ${f.originalName}`,
        onclick: () => remove(f),
      }, t('lib.delete')) : null)));
  const head = (key, cls) => h('th', cls ? { class: cls } : {}, t(key));
  return h('div', { class: 'scroll' }, h('table', { class: 'files-table' },
    h('thead', {}, h('tr', {}, head('lib.name'), head('lib.type', 'type'), head('lib.added', 'date'), head('lib.status'),
      head('lib.chunksHead', 'num chunks'), head('lib.size', 'num'), h('th', {}, h('span', { class: 'visually-hidden' }, t('lib.actions'))))),
    h('tbody', {}, rows)));
}

// The same control in a redrawn list: its label names its file, a link its address.
const handle = (el) => el.getAttribute('aria-label') || el.getAttribute('href') || '';

// What a person calls the type: the extension (PDF, DOCX, MD), else the MIME subtype.
function typeOf(file) {
  const ext = /\.([a-z0-9]{1,8})$/i.exec(file.originalName || file.name || '');
  if (ext) return ext[1].toUpperCase();
  return (file.mimetype || '').split('/').pop().split(/[.+;-]/).pop().toUpperCase();
}

function dateOf(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const day = date.toLocaleDateString(getLanguage(), { year: 'numeric', month: 'short', day: 'numeric' });
  const time = date.toLocaleTimeString(getLanguage(), { hour: '2-digit', minute: '2-digit' });
  return [day, h('span', { class: 'time' }, ` ${time}`)]; // a phone's card shows the day (the time: in the title)
}
