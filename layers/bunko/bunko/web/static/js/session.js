// Who is signed in: the access token and user, kept in sessionStorage; a new tab gets its own
// from the browser's session (api.resumeSession), and starts in the library last chosen.
const KEY = 'bunko.session';
let current = null;
const listeners = new Set();

export function load() {
  try {
    current = JSON.parse(sessionStorage.getItem(KEY)) || null;
  } catch {
    current = null;
  }
  return current;
}

export function get() {
  return current;
}

export function token() {
  return current ? current.token : null;
}

export function set(session) {
  current = session;
  if (session) sessionStorage.setItem(KEY, JSON.stringify(session));
  else {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(LIBRARY_KEY); // the next one to sign in starts in their own
    localStorage.removeItem(LAST_KEY);
  }
  listeners.forEach((fn) => fn(current));
}

export function onChange(fn) {
  listeners.add(fn);
}

// The library this tab works in ({id, name, role}); null: the user's own. Every request
// names it (api.js, X-Bunko-Library); kept per tab, like the session.
const LIBRARY_KEY = 'bunko.library';

export function library() {
  try {
    return JSON.parse(sessionStorage.getItem(LIBRARY_KEY)) || null;
  } catch {
    return null;
  }
}

export function setLibrary(chosen) {
  if (chosen) sessionStorage.setItem(LIBRARY_KEY, JSON.stringify(chosen));
  else sessionStorage.removeItem(LIBRARY_KEY);
  if (chosen) localStorage.setItem(LAST_KEY, JSON.stringify(chosen));
  else localStorage.removeItem(LAST_KEY);
}

// A tab opened from another (a link to a file, a new window) works in the library last chosen.
const LAST_KEY = 'bunko.library.last';
export function resumeLibrary() {
  const last = localStorage.getItem(LAST_KEY);
  if (last && !sessionStorage.getItem(LIBRARY_KEY)) sessionStorage.setItem(LIBRARY_KEY, last);
}

// Where a signed-out visit was going (#/files/…): opened after the sign-in.
const NEXT_KEY = 'bunko.next';
export function rememberNext(path) {
  if (path && path !== '/' && path !== '/login') sessionStorage.setItem(NEXT_KEY, path);
}
export function takeNext() {
  const next = sessionStorage.getItem(NEXT_KEY);
  sessionStorage.removeItem(NEXT_KEY);
  return next && next.startsWith('/') ? next : '/library';
}
