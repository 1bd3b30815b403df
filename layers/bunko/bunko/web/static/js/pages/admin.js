// Admin: every user with what their library holds; create, promote or demote, reset a
// password, delete.
import * as api from '../api.js';
import { clear, field, formatBytes, h } from '../dom.js';
import { t } from '../i18n.js';
import { errorBox, page, showError, toast } from '../layout.js';
import * as session from '../session.js';

export function render() {
  // Not an admin (an old link, a typed address): nothing here they may do.
  if (!session.get()?.user?.isAdmin) return page('admin.title', h('p', { class: 'card' }, t('admin.only')));
  const error = errorBox();
  const list = h('ul', { class: 'plain' });
  const username = h('input', { required: true, maxLength: 64, autocomplete: 'off' });
  const password = h('input', { type: 'password', required: true, maxLength: 256, autocomplete: 'new-password' });
  const isAdmin = h('input', { type: 'checkbox' });
  async function refresh() {
    try {
      const users = await api.get('/users');
      clear(list, users.map((u) => h('li', { class: 'row spread user-row' },
        h('span', {}, h('strong', {}, u.username), u.isAdmin ? h('span', { class: 'tag' }, 'admin') : null,
          h('span', { class: 'muted small user-usage' }, t('admin.usage', { documents: u.documents ?? 0, size: formatBytes(u.bytes ?? 0) }),
            (u.libraries || []).map((l) => ` · ${l.name} (${t(`lib.role.${l.role}`)})`).join(''))),
        h('span', { class: 'row' },
          h('button', { type: 'button', class: 'ghost', onclick: () => act(api.request('PATCH', `/users/${u.id}`, { isAdmin: !u.isAdmin })) },
            u.isAdmin ? t('admin.removeAdmin') : t('admin.makeAdmin')),
          h('button', { type: 'button', class: 'ghost', 'aria-label': `${t('admin.resetPassword')} ${u.username}`, onclick: () => resetPassword(u) }, t('admin.resetPassword')),
          h('button', { type: 'button', class: 'ghost danger', 'aria-label': `${t('common.delete')} ${u.username}`, onclick: () => {
            if (confirm(t('admin.confirm', { name: u.username }))) act(api.del(`/users/${u.id}`));
          } }, t('common.delete'))))));
    } catch (err) {
      showError(error, err);
    }
  }
  async function act(done) {
    showError(error, null);
    try {
      await done;
    } catch (err) {
      showError(error, err);
    }
    refresh();
  }
  // A dialog, not prompt(): the new password is typed into a password field, never shown.
  function resetPassword(u) {
    const fresh = h('input', { type: 'password', required: true, minLength: 8, maxLength: 256, autocomplete: 'new-password' });
    const said = errorBox();
    const dialog = h('dialog', { class: 'meta-dialog', 'aria-label': t('admin.resetOf', { name: u.username }) });
    const close = () => { dialog.close(); dialog.remove(); };
    const form = h('form', { onsubmit: async (e) => {
      e.preventDefault();
      showError(said, null);
      try {
        await api.post(`/users/${u.id}/password`, { password: fresh.value });
        close();
        toast(t('admin.passwordReset', { name: u.username }));
      } catch (err) {
        showError(said, err);
      }
    } },
    h('h2', {}, t('admin.resetOf', { name: u.username })),
    field(t('set.newPassword'), fresh, t('admin.resetHint')), said,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, t('admin.resetPassword')),
      h('button', { type: 'button', class: 'secondary', onclick: close }, t('common.cancel'))));
    dialog.append(form);
    dialog.addEventListener('cancel', () => dialog.remove());
    document.body.append(dialog);
    dialog.showModal();
    fresh.focus();
  }
  async function create(e) {
    e.preventDefault();
    showError(error, null);
    try {
      await api.post('/users', { username: username.value, password: password.value, isAdmin: isAdmin.checked });
      username.value = password.value = '';
      refresh();
    } catch (err) {
      showError(error, err);
    }
  }
  page('admin.title', h('div', { class: 'card' }, list), dropFolderCard(),
    h('form', { class: 'card', onsubmit: create }, h('h2', {}, t('admin.add')),
      h('div', { class: 'grid4' }, field(t('auth.username'), username), field(t('auth.password'), password),
        h('label', { class: 'check' }, isAdmin, 'admin')),
      error, h('div', { class: 'row' }, h('button', { type: 'submit' }, t('admin.create')))));
  refresh();
}

// Which library the server's drop folder fills: any of the admin's libraries.
function dropFolderCard() {
  const error = errorBox();
  const target = h('select', {});
  const card = h('form', { class: 'card', hidden: true, onsubmit: async (e) => {
    e.preventDefault();
    showError(error, null);
    try {
      await api.put('/drop-folder', { library: target.value });
      toast(t('admin.dropSaved', { name: target.selectedOptions[0].textContent }));
    } catch (err) {
      showError(error, err);
    }
  } }, h('h2', {}, t('admin.drop')), h('p', { class: 'muted small' }, t('admin.dropHint')),
  h('div', { class: 'row bottom' }, field(t('admin.dropTarget'), target), h('button', { type: 'submit' }, t('common.save'))), error);
  Promise.all([api.get('/drop-folder'), api.get('/libraries')]).then(([drop, libraries]) => {
    if (!drop.available) return;
    clear(target, libraries.map((l) => h('option', { value: l.id, selected: l.id === drop.libraryId }, l.personal ? t('lib.own') : l.name)));
    card.hidden = false;
  }).catch((err) => showError(error, err));
  return card;
}
