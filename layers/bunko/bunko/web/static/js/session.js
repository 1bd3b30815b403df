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
  else sessionStorage.removeItem(KEY);
  listeners.forEach((fn) => fn(current));
}

export function onChange(fn) {
  listeners.add(fn);
}
