// The frame around every page: navigation, language, sign out, calm status line, toasts; and the
// DOM helpers every page builds with (h, clear, field…), in this module so that the first
// screen's files fit in one round over the browser's six connections (see index.html).
import * as api from './api.js';
import { getLanguage, LANGUAGES, serverMessage, setLanguage, t } from './i18n.js';
import { session } from './api.js';

// Elements from data, never from HTML strings: text is always text (no XSS, no innerHTML).
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (key === 'class') el.className = value;
    else if (key in el && key !== 'list' && !key.includes('-')) el[key] = value;
    else el.setAttribute(key, value === true ? '' : value);
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// Text with the given runs wrapped in <mark>: [start, end) pairs in code points (the server's
// characters, not UTF-16 units), in order and not overlapping, as /search's `highlights`.
export function highlighted(text, spans) {
  const chars = Array.from(text);
  const out = [];
  let i = 0;
  for (const [start, end] of spans || []) {
    if (!(Number.isInteger(start) && Number.isInteger(end) && start >= i && end > start && end <= chars.length)) continue;
    if (start > i) out.push(chars.slice(i, start).join(''));
    out.push(h('mark', {}, chars.slice(start, end).join('')));
    i = end;
  }
  if (i < chars.length) out.push(chars.slice(i).join(''));
  return out;
}

export function field(label, input, hint) {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  input.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), input, hint ? h('small', { class: 'muted' }, hint) : null);
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

const PAGES = [
  ['/library', 'nav.library'],
  ['/search', 'nav.search'],
  ['/chat', 'nav.chat'],
  ['/settings', 'nav.settings'],
];

export function renderTop(active) {
  const top = document.getElementById('top');
  const user = session.get();
  top.hidden = !user;
  if (!user) return;
  const pages = user.user.isAdmin ? [...PAGES, ['/admin', 'nav.admin']] : PAGES;
  const links = pages.map(([path, key]) =>
    h('a', { href: `#${path}`, 'aria-current': active.startsWith(path) || (path === '/library' && active.startsWith('/sources')) ? 'page' : null }, t(key)),
  );
  clear(
    top,
    h('a', { class: 'brand', href: '#/library' }, 'Bunko'),
    h('nav', { 'aria-label': t('nav.main') }, links),
    h('div', { class: 'top-right' }, libraryPicker(), languagePicker(), h('span', { class: 'who' }, user.user.username),
      h('button', { type: 'button', class: 'ghost', onclick: signOut }, t('auth.signOut'))),
  );
}

// The library this tab works in, named in the header; switching starts again from its files.
function libraryPicker() {
  const current = session.library();
  const select = h('select', { class: 'lang library-pick', 'aria-label': t('lib.current'), onchange: (e) => {
    const chosen = libraries.find((l) => l.id === e.target.value);
    session.setLibrary(chosen && !chosen.personal ? { id: chosen.id, name: chosen.name, role: chosen.role } : null);
    location.replace(`${location.pathname}#/library`);
    location.reload();
  } }, h('option', { value: current ? current.id : '' }, current ? current.name : t('lib.own')));
  let libraries = [];
  api.get('/libraries').then((found) => {
    libraries = found;
    if (current && !found.some((l) => l.id === current.id)) {
      session.setLibrary(null); // removed from it meanwhile: back to one's own
      location.reload();
      return;
    }
    clear(select, found.map((l) => h('option', { value: l.id, selected: current ? l.id === current.id : l.personal },
      l.personal ? t('lib.own') : `${l.name}${l.role === 'owner' ? '' : ` (${t(`lib.role.${l.role}`)})`}`)));
  }).catch(() => {});
  return select;
}

export function languagePicker() {
  const select = h(
    'select',
    { class: 'lang', 'aria-label': t('lang.label'), onchange: (e) => setLanguage(e.target.value, true) },
    LANGUAGES.map(([code, name]) => h('option', { value: code, selected: code === getLanguage() }, name)),
  );
  return select;
}

async function signOut() {
  clearInterval(statusTimer);
  let providerLogout = null;
  try {
    providerLogout = await api.logout(); // after the requests on their way; clears the session either way
  } catch {
    // already invalid: signing out locally is all that is left
  }
  // signed in with the identity provider: end that session too (it sends the browser back)
  if (providerLogout && /^https?:\/\//.test(providerLogout)) {
    location.assign(providerLogout);
    return;
  }
  location.hash = '/login';
}

let statusTimer = null;
let tick = () => {};

export function refreshStatus() {
  tick();
}

export function startStatus() {
  const footer = document.getElementById('status');
  clearInterval(statusTimer);
  tick = async () => {
    if (!session.token()) return clear(footer);
    try {
      // The model that serves this workspace (its own model config, else the server's).
      const [s, m, e] = await Promise.all([api.get('/indexing_status'), api.get('/model_name'), api.get('/embedding-model')]);
      // pending: this library's files not indexed yet (queued counts the same jobs again, server-wide)
      const busy = s.status === 'indexing' ? t('status.indexing', { n: s.pending }) : t('status.idle');
      let model = e.serving.modelConfigId ? `${e.serving.name} (${e.serving.modelId})` : m.model_name || m.edition;
      const r = e.refined; // a stronger model refining in the background (BUNKO_REFINE_EMBEDDER)
      if (r && r.serving) model = r.name;
      else if (r) model += ` (${t('status.refining', { name: r.name, done: r.chunksRefined, total: r.chunksTotal })})`;
      clear(footer, h('span', {}, busy), ' · ', h('span', {}, t(s.documents === 1 ? 'status.doc' : 'status.docs', { n: s.documents })), ' · ',
        h('span', {}, `${t('status.model')}: ${model}`));
    } catch {
      clear(footer);
    }
  };
  tick();
  statusTimer = setInterval(tick, 5000);
}

export function toast(message) {
  const el = document.getElementById('toast');
  el.textContent = message;
  el.classList.add('show');
  setTimeout(() => el.classList.remove('show'), 4000);
}

// A page's heading plus the focus move a screen reader and a keyboard user expect.
export function page(titleKey, ...children) {
  const main = document.getElementById('main');
  document.title = `${t(titleKey)} · Bunko`;
  clear(main, h('h1', {}, t(titleKey)), ...children);
  return main;
}

export function errorBox() {
  return h('p', { class: 'error', role: 'alert', hidden: true });
}

export function showError(box, err) {
  box.textContent = err ? serverMessage(err.message || String(err)) : '';
  box.hidden = !err;
}
