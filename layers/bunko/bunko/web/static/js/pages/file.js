// One file: its record and its chunks, a page at a time (GET …/chunks pages them, because a
// Lambda response stops at 6 MB). #/files/<id>/<chunk> opens the page holding that chunk,
// marks it and scrolls to it; two buttons load the pages before and after it.
import * as api from '../api.js';
import { append, errorBox, formatBytes, h, page, showError } from '../layout.js';
import { t } from '../i18n.js';
import { sourceTag } from './library_files.js';
import { metadataChips } from './metadata_editor.js';

// " · p.3" or " · p.3–5" (the pages a chunk runs over); "" for a file without pages.
const pages = (c) => (c.page ? ` · p.${c.page}${c.pageEnd && c.pageEnd !== c.page ? `–${c.pageEnd}` : ''}` : '');
const chunksOf = (id, query) => api.get(`/knowledge-bases/${encodeURIComponent(id)}/chunks?${new URLSearchParams(query)}`);

export async function render({ id, chunk }) {
  const error = errorBox();
  const main = page('file.title', error);
  // a chunk index from the URL; anything else opens the first page, as a bare #/files/<id> does
  const wanted = /^\d{1,9}$/.test(chunk ?? '') ? Number(chunk) : -1;
  try {
    const [file, first] = await Promise.all([
      api.get(`/knowledge-bases/${encodeURIComponent(id)}`),
      chunksOf(id, wanted >= 0 ? { chunk: wanted } : {})]);
    main.querySelector('h1').textContent = file.originalName;
    // a source's file says which (its name from GET /sources, asked only for such a file)
    const names = (file.source || '').startsWith('connector:')
      ? await api.get('/sources').then((found) => new Map(found.map((s) => [s.source, s.name]))).catch(() => new Map())
      : null;
    const { limit } = first;
    let from = first.offset; // the loaded chunks are positions [from, to) of `total`
    let to = first.offset;
    let total = first.total;
    const item = (c) => h('li', {
      id: `chunk-${c.index}`, class: c.index === wanted ? 'chunk cited' : 'chunk', tabindex: -1,
      'aria-current': c.index === wanted ? 'true' : null,
    }, h('div', { class: 'muted small' }, `#${c.index}${pages(c)}`), h('p', {}, c.content));
    const list = h('ol', { class: 'chunks', 'aria-label': t('file.chunks') });
    const shown = h('p', { class: 'muted small', 'aria-live': 'polite' });
    const earlier = h('button', { type: 'button', class: 'ghost', onclick: () => load(true) }, t('file.earlier'));
    const more = h('button', { type: 'button', class: 'ghost', onclick: () => load(false) }, t('file.more'));

    function update() {
      earlier.hidden = from <= 0;
      more.hidden = to >= total;
      shown.textContent = to > from ? t('file.shown', { shown: to - from, total }) : t('file.none');
    }

    // The page before `from` or the one from `to`; focus goes to the loaded chunk nearest
    // where the reader was, so the place is kept for the keyboard and the eye.
    async function load(back) {
      const button = back ? earlier : more;
      const offset = back ? Math.max(0, from - limit) : to;
      button.disabled = true;
      try {
        const body = await chunksOf(id, { offset, limit: back ? from - offset : limit });
        showError(error, null);
        total = body.total;
        const items = body.chunks.map(item);
        if (back) {
          list.prepend(...items);
          from = offset;
          items.at(-1)?.focus();
        } else {
          list.append(...items);
          to = offset + items.length;
          items[0]?.focus();
        }
      } catch (err) {
        showError(error, err);
      } finally {
        button.disabled = false;
        update();
      }
    }

    list.append(...first.chunks.map(item));
    to = first.offset + first.chunks.length;
    update();
    append(main, [
      h('p', { class: 'muted' }, `${t(`st.${file.status}`)} · ${formatBytes(file.size)} · ${file.chunkCount} ${t('lib.chunks')} · ${file.mode}`, sourceTag(file, names)),
      file.error ? h('p', { class: 'error' }, file.error) : null,
      metadataChips(file.metadata, file.originalName),
      h('p', {}, h('a', { href: '#/library' }, `← ${t('nav.library')}`)),
      shown, earlier, list, more]);
    const cited = main.querySelector('.cited');
    if (cited) {
      cited.scrollIntoView({ block: 'center' });
      cited.focus();
    }
  } catch (err) {
    showError(error, err);
  }
}
