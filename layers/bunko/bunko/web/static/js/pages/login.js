// Sign in / create account.
import * as api from '../api.js';
import { field, h } from '../dom.js';
import { getLanguage, languageFromSettings, t } from '../i18n.js';
import { errorBox, languagePicker, page, showError } from '../layout.js';
import * as session from '../session.js';

export function render() {
  const username = h('input', { name: 'username', autocomplete: 'username', required: true, maxLength: 64 });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true, maxLength: 256 });
  const error = errorBox();
  const busy = (on) => form.querySelectorAll('button').forEach((b) => (b.disabled = on));

  async function signIn(created) {
    const body = await api.post('/auth/login', { username: username.value, password: password.value });
    session.set({ token: body.access_token, user: body.user });
    // A new account keeps the language it was created in; later sign-ins follow the saved one.
    if (created) await api.put('/user-settings', { language: getLanguage() }).catch(() => {});
    else await languageFromSettings();
    location.hash = '/library';
  }

  async function submit(create) {
    showError(error, null);
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

  const form = h(
    'form',
    { class: 'card narrow', onsubmit: (e) => { e.preventDefault(); submit(false); } },
    field(t('auth.username'), username),
    field(t('auth.password'), password, t('auth.passwordHint')),
    error,
    h('div', { class: 'row' },
      h('button', { type: 'submit' }, t('auth.signIn')),
      h('button', { type: 'button', class: 'secondary', onclick: () => submit(true) }, t('auth.create'))),
  );
  page('auth.title', h('p', { class: 'muted' }, t('auth.intro')), form, h('p', {}, languagePicker()));
  username.focus();
}
