// Sign in / create account; and "Sign in with <the organization's identity provider>" above
// them when the server offers it (`oidc` below, which main.js also uses for the way back).
import * as api from '../api.js';
import { clear, errorBox, field, h, languagePicker, page, showError } from '../layout.js';
import { getLanguage, languageFromSettings, t } from '../i18n.js';
import { session } from '../api.js';

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

const STARTED = 'bunko.oidc.started';
const STARTED_FOR_MS = 15 * 60 * 1000; // the server's side of a sign-in lasts ten minutes
const TOKEN = /^[\w.~+/=-]{16,8192}$/; // a JWT (base64url parts and dots), nothing else
const REASON_MAX = 300;

let config = null;
let notice = null; // {key, vars}: what the login page says about the last sign-in

// GET /auth/oidc/config, once: {enabled, loginUrl, providerName}; a server without it (or out
// of reach) offers passwords only.
function settings() {
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
function starting() {
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
function fromAddress() {
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
async function signIn(token) {
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
function currentNotice() {
  return notice;
}

function clearNotice() {
  notice = null;
}

export const oidc = { settings, starting, fromAddress, signIn, currentNotice, clearNotice };

export function render() {
  const username = h('input', { name: 'username', autocomplete: 'username', required: true, maxLength: 64 });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true, maxLength: 256 });
  const error = errorBox();
  const busy = (on) => form.querySelectorAll('button').forEach((b) => (b.disabled = on));

  async function signIn(created) {
    const body = await api.post('/auth/login', { username: username.value, password: password.value });
    session.set({ token: body.access_token, user: body.user });
    api.keepSession(); // other tabs and windows of this browser start signed in
    // A new account keeps the language it was created in; later sign-ins follow the saved one.
    if (created) await api.putMine('/user-settings', { language: getLanguage() }).catch(() => {});
    else await languageFromSettings();
    location.hash = session.takeNext(); // where a signed-out link was going, else the library
  }

  async function submit(create) {
    showError(error, null);
    oidc.clearNotice();
    said.hidden = true;
    if (!form.reportValidity()) return;
    busy(true);
    try {
      if (create) await api.post('/auth/register', { username: username.value, password: password.value });
      await signIn(create);
    } catch (err) {
      showError(error, err);
    } finally {
      busy(false);
    }
  }

  const create = h('button', { type: 'button', class: 'secondary', hidden: true, onclick: () => submit(true) }, t('auth.create'));
  const closed = h('p', { class: 'muted small', hidden: true }, t('auth.signupClosed'));
  const form = h(
    'form',
    { onsubmit: (e) => { e.preventDefault(); submit(false); } },
    field(t('auth.username'), username),
    field(t('auth.password'), password, t('auth.passwordHint')),
    error,
    h('div', { class: 'row' },
      h('button', { type: 'submit' }, t('auth.signIn')),
      create),
  );
  // Shown only while the server takes new accounts (BUNKO_SIGNUP, or no admin yet).
  api.getAs('/auth/signup').then((s) => { create.hidden = !(s && s.open === true); closed.hidden = !create.hidden; })
    .catch(() => { closed.hidden = false; });
  // Why the last sign-in with the identity provider did not work: text, never markup.
  const notice = oidc.currentNotice();
  const said = h('p', { class: 'error', role: 'alert', hidden: !notice }, notice ? t(notice.key, notice.vars) : '');
  const provider = h('div', { class: 'provider', hidden: true });
  oidc.settings().then((offered) => {
    if (!offered.enabled) return;
    clear(provider,
      // a plain link: the browser goes to the server, which sends it on to the provider
      h('a', { class: 'button provider-button', href: offered.loginUrl, onclick: oidc.starting },
        t('auth.withProvider', { name: offered.providerName })),
      h('p', { class: 'or muted' }, h('span', {}, t('auth.orPassword'))));
    provider.hidden = false;
  });
  page('auth.title', h('p', { class: 'muted' }, t('auth.intro')),
    h('div', { class: 'card narrow' }, said, provider, form, closed), h('p', {}, languagePicker()));
  username.focus();
}
