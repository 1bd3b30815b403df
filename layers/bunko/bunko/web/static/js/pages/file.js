// One file: its record and its chunks; #/files/<id>/<chunk> scrolls to and marks that chunk.
import * as api from '../api.js';
import { append, formatBytes, h } from '../dom.js';
import { t } from '../i18n.js';
import { errorBox, page, showError } from '../layout.js';

export async function render({ id, chunk }) {
  const error = errorBox();
  const main = page('file.title', error);
  try {
    const [file, detail] = await Promise.all([api.get(`/knowledge-bases/${id}`), api.get(`/knowledge-bases/${id}/chunks`)]);
    main.querySelector('h1').textContent = file.originalName;
    const wanted = chunk === undefined ? -1 : Number(chunk);
    const items = detail.chunks.map((c) => h('li', {
      id: `chunk-${c.index}`, class: c.index === wanted ? 'chunk cited' : 'chunk', tabindex: -1,
      'aria-current': c.index === wanted ? 'true' : null,
    }, h('div', { class: 'muted small' }, `#${c.index}${c.page ? ` · p.${c.page}` : ''}`), h('p', {}, c.content)));
    append(main, [
      h('p', { class: 'muted' }, `${t(`st.${file.status}`)} · ${formatBytes(file.size)} · ${file.chunkCount} ${t('lib.chunks')} · ${file.mode}`),
      file.error ? h('p', { class: 'error' }, file.error) : null,
      h('p', {}, h('a', { href: '#/library' }, `← ${t('nav.library')}`)),
      h('ol', { class: 'chunks', 'aria-label': t('file.chunks') }, items)]);
    const cited = main.querySelector('.cited');
    if (cited) {
      cited.scrollIntoView({ block: 'center' });
      cited.focus();
    }
  } catch (err) {
    showError(error, err);
  }
}
