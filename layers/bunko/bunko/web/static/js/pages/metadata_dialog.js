// "Edit metadata" for one file: a modal dialog with the row editor; Save replaces the file's
// metadata (PUT /knowledge-bases/:id/metadata). A refusal (400) is shown beside the form in the
// server's words, and the dialog stays open to fix it. A dialog, not a row in the list: the
// list redraws while files index, and what is being typed must not go with it.
import * as api from '../api.js';
import { errorBox, h, showError, toast } from '../layout.js';
import { t } from '../i18n.js';
import { rowEditor } from './metadata_editor.js';

export function editMetadata(file, { saved = () => {} } = {}) {
  const editor = rowEditor(file.metadata);
  const error = errorBox();
  const save = h('button', { type: 'submit' }, t('common.save'));
  const titleId = `meta-title-${file.id}`;
  const dialog = h('dialog', { class: 'meta-dialog', 'aria-labelledby': titleId });

  async function submit(e) {
    e.preventDefault();
    showError(error, null);
    let metadata;
    try {
      metadata = editor.value();
    } catch (err) {
      showError(error, err);
      return;
    }
    save.disabled = true;
    try {
      const record = await api.put(`/knowledge-bases/${encodeURIComponent(file.id)}/metadata`, { metadata });
      dialog.close();
      toast(t('meta.saved'));
      saved(record);
    } catch (err) {
      showError(error, err);
    } finally {
      save.disabled = false;
    }
  }

  dialog.append(h('form', { class: 'meta-form', onsubmit: submit },
    h('h2', { id: titleId }, t('meta.dialogTitle', { name: file.originalName })),
    h('p', { class: 'muted small' }, t('meta.hint')),
    editor.element,
    error,
    h('div', { class: 'row' }, save, h('button', { type: 'button', class: 'ghost', onclick: () => dialog.close() }, t('common.cancel')))));
  // Back to the file's own Edit button (redrawn meanwhile, perhaps) once the dialog closes.
  dialog.addEventListener('close', () => {
    dialog.remove();
    document.querySelector(`button[data-edit="${CSS.escape(file.id)}"]`)?.focus();
  });
  document.getElementById('main').append(dialog);
  dialog.showModal();
  editor.first()?.focus();
}
