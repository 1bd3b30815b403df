// Sign-in with the organization's identity provider (OpenID Connect; the server is the relying
// party, /auth/oidc/*): whether the login page offers it, and the way back from it. The server
// sends the browser back to this page with `#oidc_token=<a Bunko access token>` or
// `#oidc_error=<why not>` in the fragment, which browsers never send to a server. main.js reads
// it before the router runs (which would take it for an unknown page), and it leaves the
// address at once: the token stays in no history entry, bookmark or copied link.
//
// Only a sign-in this tab started counts: the button marks the tab (sessionStorage) before it
// leaves. A link to this page with someone else's token in its fragment would otherwise sign
// the person in as someone else (login CSRF), and one with a made-up error would put its
// words on the login page.
import * as api from './api.js';
import { languageFromSettings } from './i18n.js';
import * as session from './session.js';

const STARTED = 'bunko.oidc.started';
const STARTED_FOR_MS = 15 * 60 * 1000; // the server's side of a sign-in lasts ten minutes
const TOKEN = /^[\w.~+/=-]{16,8192}$/; // a JWT (base64url parts and dots), nothing else
const REASON_MAX = 300;

let config = null;
let notice = null; // {key, vars}: what the login page says about the last sign-in

// GET /auth/oidc/config, once: {enabled, loginUrl, providerName}; a server without it (or out
// of reach) offers passwords only.
export function settings() {
  config ??= api.getAs('/auth/oidc/config')
    .then((c) => {
      if (!c || c.enabled !== true || typeof c.loginUrl !== 'string') return { enabled: false };
      const url = new URL(c.loginUrl, location.href);
      if (url.protocol !== 'https:' && url.protocol !== 'http:') return { enabled: false };
      return { enabled: true, loginUrl: url.href, providerName: c.providerName || url.hostname };
    })
    .catch(() => ({ enabled: false }));
  return config;
}

// The button was pressed: the way back is this tab's.
export function starting() {
  try {
    sessionStorage.setItem(STARTED, String(Date.now()));
  } catch {
    // no storage: the way back will be refused, and says so
  }
}

function startedHere() {
  let at = 0;
  try {
    at = Number(sessionStorage.getItem(STARTED));
    sessionStorage.removeItem(STARTED); // one sign-in, one way back
  } catch {
    return false;
  }
  const age = Date.now() - at;
  return at > 0 && age >= 0 && age < STARTED_FOR_MS;
}

// The way back from the identity provider, taken out of the address: {token}, or null (nothing
// to do, or a notice for the login page).
export function fromAddress() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (!params.has('oidc_token') && !params.has('oidc_error')) return null;
  history.replaceState(history.state, '', location.pathname + location.search);
  const token = params.get('oidc_token');
  if (!startedHere()) notice = { key: 'auth.oidcNotStarted', vars: {} };
  else if (token !== null && TOKEN.test(token)) return { token };
  else fail(params.get('oidc_error') || 'no token came back');
  return null;
}

// Keep the token as a password sign-in keeps its own ({token, user}, the user from GET /auth/me),
// in the person's own library and saved language. False (and a notice) when it does not work.
export async function signIn(token) {
  try {
    const user = await api.getAs('/auth/me', token);
    session.setLibrary(null); // the library another sign-in of this tab was working in
    session.set({ token, user });
    await languageFromSettings();
    return true;
  } catch (err) {
    fail(err.message);
    return false;
  }
}

function fail(reason) {
  const said = String(reason).trim();
  const short = said.length > REASON_MAX ? `${said.slice(0, REASON_MAX)}…` : said;
  notice = { key: 'auth.oidcFailed', vars: { reason: short } };
}

// What the login page shows (as text) until the next sign-in starts.
export function currentNotice() {
  return notice;
}

export function clearNotice() {
  notice = null;
}
