// Who is signed in: the access token and user, kept in sessionStorage (gone when the tab closes).
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
}
