// Sign in / create account; and "Sign in with <the organization's identity provider>" above
// them when the server offers it (oidc.js).
import * as api from '../api.js';
import { clear, field, h } from '../dom.js';
import { getLanguage, languageFromSettings, t } from '../i18n.js';
import { errorBox, languagePicker, page, showError } from '../layout.js';
import * as oidc from '../oidc.js';
import * as session from '../session.js';

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
