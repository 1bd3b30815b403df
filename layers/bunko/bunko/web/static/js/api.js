// The REST client: base URL from config.json, the bearer token, and errors as the error body's
// message ({statusCode, message, error}; a validation message is a list); and `session`, who
// is signed in. One module, not two: the first screen's files fit in one round over the
// browser's six connections (see index.html).

// Who is signed in: the access token and user, kept in sessionStorage; a new tab gets its own
// from the browser's session (api.resumeSession), and starts in the library last chosen.
const SESSION_KEY = 'bunko.session';
let current = null;
const listeners = new Set();

function sessionLoad() {
  try {
    current = JSON.parse(sessionStorage.getItem(SESSION_KEY)) || null;
  } catch {
    current = null;
  }
  return current;
}

function sessionGet() {
  return current;
}

function sessionToken() {
  return current ? current.token : null;
}

function sessionSet(session) {
  current = session;
  if (session) sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
  else {
    sessionStorage.removeItem(SESSION_KEY);
    sessionStorage.removeItem(LIBRARY_KEY); // the next one to sign in starts in their own
    localStorage.removeItem(LAST_KEY);
  }
  listeners.forEach((fn) => fn(current));
}

function onChange(fn) {
  listeners.add(fn);
}

// The library this tab works in ({id, name, role}); null: the user's own. Every request
// names it (api.js, X-Bunko-Library); kept per tab, like the session.
const LIBRARY_KEY = 'bunko.library';

function library() {
  try {
    return JSON.parse(sessionStorage.getItem(LIBRARY_KEY)) || null;
  } catch {
    return null;
  }
}

function setLibrary(chosen) {
  if (chosen) sessionStorage.setItem(LIBRARY_KEY, JSON.stringify(chosen));
  else sessionStorage.removeItem(LIBRARY_KEY);
  if (chosen) localStorage.setItem(LAST_KEY, JSON.stringify(chosen));
  else localStorage.removeItem(LAST_KEY);
}

// A tab opened from another (a link to a file, a new window) works in the library last chosen.
const LAST_KEY = 'bunko.library.last';
function resumeLibrary() {
  const last = localStorage.getItem(LAST_KEY);
  if (last && !sessionStorage.getItem(LIBRARY_KEY)) sessionStorage.setItem(LIBRARY_KEY, last);
}

// Where a signed-out visit was going (#/files/…): opened after the sign-in.
const NEXT_KEY = 'bunko.next';
function rememberNext(path) {
  if (path && path !== '/' && path !== '/login') sessionStorage.setItem(NEXT_KEY, path);
}
function takeNext() {
  const next = sessionStorage.getItem(NEXT_KEY);
  sessionStorage.removeItem(NEXT_KEY);
  return next && next.startsWith('/') ? next : '/library';
}

export const session = {
  load: sessionLoad,
  get: sessionGet,
  token: sessionToken,
  set: sessionSet,
  onChange,
  library,
  setLibrary,
  resumeLibrary,
  rememberNext,
  takeNext,
};

let base = '';
// Files larger than this many bytes go straight to storage through POST /uploads/presign
// (config.json's presignUploadsAbove, set on AWS, where an API request body stops at 4 MiB);
// null: every file goes to POST /upload.
let presignAbove = null; // read by uploads.js
let configured = Promise.resolve();

// Read config.json in the background: the first screen renders meanwhile, requests wait for it.
export function configure() {
  configured = fetch('config.json', { cache: 'no-cache' })
    .then((res) => (res.ok ? res.json() : {}))
    .then((config) => {
      base = (config.apiBaseUrl || '').replace(/\/$/, '');
      const above = config.presignUploadsAbove;
      presignAbove = typeof above === 'number' && Number.isFinite(above) && above >= 0 ? above : null;
    })
    .catch(() => { base = ''; presignAbove = null; });
  return configured;
}

// `reason` names a failure the page can explain in the person's language, `detail` what the
// other end said (see putToStorage); `retryAfter`: the seconds a 429 or 503 asked to wait.
export class ApiError extends Error {
  constructor(status, message, reason = null, detail = '', retryAfter = null) {
    super(message);
    this.status = status;
    this.reason = reason;
    this.detail = detail;
    this.retryAfter = retryAfter;
  }
}

// Retry-After in seconds (a number, or an HTTP date); null when absent or unreadable.
export function retryAfterOf(value) {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

export function messageOf(body, status) {
  const msg = body && body.message;
  if (Array.isArray(msg)) return msg.join('; ');
  if (typeof msg === 'string' && msg) return msg;
  return `HTTP ${status}`;
}

// What uploads.js needs of this module: the configuration once read, and the headers.
export async function settings() {
  await configured;
  return { base, presignAbove };
}

// The token, and the library the tab works in (a name may be any script: ids are ASCII);
// `own`: the person's own library, whichever this tab works in (their own settings).
export function headers(extra = {}, own = false) {
  const t = session.token();
  const lib = own ? null : session.library();
  const named = lib ? { 'X-Bunko-Library': lib.id } : {};
  return t ? { Authorization: `Bearer ${t}`, ...named, ...extra } : extra;
}

// A GET in the library `libraryId` names, whichever the tab works in (Settings reads the
// audit trail of each library its person owns).
export async function getIn(libraryId, path) {
  await configured;
  const res = await fetch(base + path, { headers: headers({ 'X-Bunko-Library': libraryId }) });
  if (!res.ok) throw await fail(res);
  return res.json();
}

// A write in the library `libraryId` names (Settings changes each owned library's own settings).
export async function sendIn(libraryId, method, path, body) {
  await configured;
  const init = { method, headers: headers({ 'X-Bunko-Library': libraryId, 'Content-Type': 'application/json' }), body: JSON.stringify(body) };
  const res = await fetch(base + path, init);
  if (!res.ok) throw await fail(res);
  return res.json();
}

// A multipart POST in the person's own library (an archive to import: it names no library).
export async function postForm(path, form) {
  await configured;
  const res = await fetch(base + path, { method: 'POST', headers: headers({}, true), body: form });
  if (!res.ok) throw await fail(res);
  return res.json();
}

async function fail(res) {
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (res.status === 401 && session.token()) session.set(null); // expired or signed out elsewhere
  return new ApiError(res.status, messageOf(body, res.status), null, '', retryAfterOf(res.headers.get('Retry-After')));
}

// Requests on their way with the token, and whether the session is closing: a request that
// reached the server after the sign-out revoked its token would be answered 401.
const inFlight = new Set();
let closing = false;

async function send(method, path, body, withTotal = false, own = false) {
  await configured;
  const init = { method, headers: headers({}, own) };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(base + path, init);
  if (!res.ok) throw await fail(res);
  const data = res.status === 204 ? null : await res.json();
  if (!withTotal) return data;
  const total = Number(res.headers.get('X-Total-Count'));
  return { items: data, total: Number.isFinite(total) && res.headers.has('X-Total-Count') ? total : data.length };
}

export async function request(method, path, body, withTotal = false, own = false) {
  if (closing) throw new ApiError(0, 'signing out');
  const sent = send(method, path, body, withTotal, own);
  inFlight.add(sent);
  try {
    return await sent;
  } finally {
    inFlight.delete(sent);
  }
}

// Sign out: no new request leaves (a page's poll included), the ones on their way land, then
// POST /auth/logout revokes the token. Uploads and chat streams are not waited for. Returns
// the identity provider's sign-out address for a person who signed in with it (else null).
export async function logout() {
  closing = true;
  try {
    await Promise.allSettled([...inFlight]);
    const out = await send('POST', '/auth/logout', {});
    return out && typeof out.logoutUrl === 'string' ? out.logoutUrl : null;
  } finally {
    session.set(null); // before any request may leave again
    closing = false;
  }
}

// The browser's session (/auth/session): kept after a sign-in so that other tabs and windows
// start signed in; best effort (a server or deployment without it: one tab, one sign-in).
export function keepSession() {
  return request('POST', '/auth/session', {}).catch(() => null);
}

// A new tab: the session's access token and user, traded for the HttpOnly cookie with the
// CSRF token a page of this site can read; null when there is none (or it ended).
export async function resumeSession() {
  const csrf = document.cookie.split('; ').find((c) => c.startsWith('bunko_csrf='));
  if (!csrf) return null;
  await configured;
  try {
    const res = await fetch(`${base}/auth/session/resume`, { method: 'POST', headers: { 'X-CSRF-Token': csrf.slice(11) } });
    return res.ok ? await res.json() : null;
  } catch {
    return null;
  }
}

// A GET with the given token, or none, instead of the session's (and no library): what a sign-in
// asks before there is a session (GET /auth/oidc/config, GET /auth/me). A 401 here is about
// that token and leaves the session alone.
export async function getAs(path, token = null) {
  await configured;
  const res = await fetch(base + path, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!res.ok) throw new ApiError(res.status, messageOf(body, res.status));
  return body;
}

export const get = (path) => request('GET', path);
export const post = (path, body) => request('POST', path, body ?? {});
export const put = (path, body) => request('PUT', path, body);
export const del = (path) => request('DELETE', path);
// A person's own settings (PUT /user-settings): saved in their own library, where they may
// write, and theirs in every library (the server keys them by user).
export const putMine = (path, body) => request('PUT', path, body, false, true);
// A paged list: {items, total} (total from X-Total-Count, else the items' count).
export const getPage = (path) => request('GET', path, undefined, true);

// POST /chat/stream: calls onEvent({type, data}) per SSE event until [DONE] or abort.
export async function chatStream(body, onEvent, signal) {
  await configured;
  const res = await fetch(`${base}/chat/stream`, {
    method: 'POST',
    headers: headers({ 'Content-Type': 'application/json', Accept: 'text/event-stream' }),
    body: JSON.stringify(body),
    signal,
  });
  if (!res.ok) throw await fail(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (!data) continue; // a keep-alive comment
      if (data === '[DONE]') return;
      onEvent(JSON.parse(data));
    }
  }
}

// A URL the API answered (a path on this API, or already absolute) as one a new tab can open.
export function absolute(url) {
  return /^https?:\/\//i.test(url) ? url : base + url;
}
