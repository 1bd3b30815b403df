// Search: query, category filter, hits with similarity / vector_score / text_score, the
// engines that found them and the matched passage highlighted; a hit opens its chunk in the file.
import * as api from '../api.js';
import { clear, h, highlighted } from '../dom.js';
import { t } from '../i18n.js';
import { errorBox, page, showError } from '../layout.js';

const score = (x) => (typeof x === 'number' ? x.toFixed(3) : '—');

export async function render() {
  const q = h('input', { type: 'search', name: 'q', 'aria-label': t('search.label'), placeholder: t('search.placeholder'), required: true, maxLength: 2000 });
  const category = h('select', { name: 'category', 'aria-label': t('search.category') }, h('option', { value: '' }, t('search.all')));
  const results = h('div', { class: 'results', 'aria-live': 'polite' });
  const error = errorBox();
  const form = h('form', { role: 'search', class: 'card row', onsubmit: run }, q, category, h('button', { type: 'submit' }, t('search.button')));

  async function run(e) {
    e.preventDefault();
    showError(error, null);
    const params = new URLSearchParams({ q: q.value });
    if (category.value) params.set('category', category.value);
    try {
      const body = await api.get(`/search?${params}`);
      const terms = [q.value.trim(), ...q.value.trim().split(/\s+/)];
      clear(results, body.items.length ? h('ol', { class: 'hits' }, body.items.map((item) => hit(item, terms))) : h('p', { class: 'muted' }, t('search.none')));
    } catch (err) {
      showError(error, err);
    }
  }

  page('search.title', form, error, results);
  q.focus();
  try {
    const { categories } = await api.get('/search/categories');
    category.append(...categories.map((c) => h('option', { value: c }, c)));
  } catch {
    // no filter then
  }
}

function hit(item, terms) {
  return h('li', { class: 'card hit' },
    h('div', { class: 'row spread' },
      h('a', { href: `#/files/${item.document_id}/${item.chunk_index}` }, item.name || item.path),
      h('span', { class: 'scores small' },
        h('span', { title: 'similarity' }, `similarity ${score(item.similarity)}`),
        h('span', { title: 'vector_score' }, `vector ${score(item.vector_score)}`),
        h('span', { title: 'text_score' }, `text ${score(item.text_score)}`),
        // Which engines found it: "keyword" alone while the file's vectors are computed.
        item.engines ? h('span', { class: 'engines', title: 'engines' }, `${t('search.engines')} ${item.engines.join(' + ')}`) : null)),
    item.category ? h('span', { class: 'tag' }, item.category) : null,
    h('p', { class: 'passage' }, highlighted(item.content, terms)));
}
