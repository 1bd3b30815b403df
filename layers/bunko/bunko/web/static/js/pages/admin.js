// Admin: every user with what their library holds; create, promote or demote, reset a
// password, delete.
import * as api from '../api.js';
import { clear, errorBox, field, formatBytes, h, page, showError, toast } from '../layout.js';
import { t } from '../i18n.js';
import { session } from '../api.js';

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

// Which library the server's drop folder fills, and which sub-folders fill others: any of the
// admin's libraries.
function dropFolderCard() {
  const error = errorBox();
  const target = h('select', {});
  const subName = h('input', { required: true, maxLength: 100, autocomplete: 'off' });
  const subTarget = h('select', {});
  const mapped = h('ul', { class: 'plain sub-folders' });
  const hint = h('p', { class: 'muted small' });
  let names = new Map();
  const nameOf = (id) => names.get(id) ?? id;
  async function attempt(work) {
    showError(error, null);
    try {
      show(await work());
    } catch (err) {
      showError(error, err);
    }
  }
  function show(drop) {
    hint.textContent = t(drop.kind === 'bucket' ? 'admin.dropHintBucket' : 'admin.dropHint');
    for (const option of target.options) option.selected = option.value === drop.libraryId;
    clear(mapped, drop.subfolders.length ? drop.subfolders.map((sub) => h('li', { class: 'row spread' },
      h('span', {}, h('code', {}, `${sub.name}/`), ' → ', nameOf(sub.libraryId)),
      h('button', { type: 'button', class: 'ghost', 'aria-label': t('admin.dropSubRemove', { folder: sub.name }), onclick: () => attempt(async () => {
        const now = await api.del(`/drop-folder/subfolders/${encodeURIComponent(sub.name)}`);
        toast(t('admin.dropSubRemoved', { folder: sub.name }));
        return now;
      }) }, t('lib.remove')))) : h('li', { class: 'muted small' }, t('admin.dropSubNone')));
  }
  const whole = h('form', { onsubmit: (e) => {
    e.preventDefault();
    attempt(async () => {
      const now = await api.put('/drop-folder', { library: target.value });
      toast(t('admin.dropSaved', { name: nameOf(target.value) }));
      return now;
    });
  } }, h('div', { class: 'row bottom' }, field(t('admin.dropTarget'), target), h('button', { type: 'submit' }, t('common.save'))));
  const sub = h('form', { onsubmit: (e) => {
    e.preventDefault();
    attempt(async () => {
      const now = await api.put('/drop-folder', { library: subTarget.value, subfolder: subName.value.trim() });
      toast(t('admin.dropSubSaved', { folder: subName.value.trim(), name: nameOf(subTarget.value) }));
      subName.value = '';
      return now;
    });
  } }, h('div', { class: 'row bottom' }, field(t('admin.dropSubName'), subName), field(t('admin.dropSubTarget'), subTarget),
    h('button', { type: 'submit' }, t('admin.dropSubAdd'))));
  const card = h('section', { class: 'card', hidden: true, 'aria-labelledby': 'drop-folder-title' },
    h('h2', { id: 'drop-folder-title' }, t('admin.drop')), hint, whole,
    h('h3', {}, t('admin.dropSubs')), h('p', { class: 'muted small' }, t('admin.dropSubHint')), mapped, sub, error);
  Promise.all([api.get('/drop-folder'), api.get('/libraries')]).then(([drop, libraries]) => {
    if (!drop.available) return;
    names = new Map(libraries.map((l) => [l.id, l.personal ? t('lib.own') : l.name]));
    const options = () => libraries.map((l) => h('option', { value: l.id }, nameOf(l.id)));
    clear(target, options());
    clear(subTarget, options());
    show(drop);
    card.hidden = false;
  }).catch((err) => showError(error, err));
  return card;
}
