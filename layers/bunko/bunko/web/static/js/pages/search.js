// Search: query, category filter, the metadata filter bar (filter_bar.js), hits with
// similarity / vector_score / text_score, the engines that found them, their file's metadata
// and the matched passage highlighted; a hit opens its chunk in the file.
import * as api from '../api.js';
import { clear, errorBox, h, highlighted, page, showError } from '../layout.js';
import { t } from '../i18n.js';
import { filterBar } from './filter_bar.js';
import { metadataChips } from './metadata_editor.js';

const score = (x) => (typeof x === 'number' ? x.toFixed(3) : '—');

export async function render() {
  const q = h('input', { type: 'search', name: 'q', 'aria-label': t('search.label'), placeholder: t('search.placeholder'), required: true, maxLength: 2000 });
  const category = h('select', { name: 'category', 'aria-label': t('search.category') }, h('option', { value: '' }, t('search.all')));
  const results = h('div', { class: 'results', 'aria-live': 'polite' });
  const error = errorBox();
  const form = h('form', { role: 'search', class: 'row', onsubmit: run }, q, category, h('button', { type: 'submit' }, t('search.button')));
  let searched = false; // a changed filter runs the search shown again
  let asked = 0; // only the latest search's answer is shown
  const bar = filterBar({ scope: 'search', onChange: () => { if (searched && q.value.trim()) run(); } });

  async function run(e) {
    e?.preventDefault();
    showError(error, null);
    searched = true;
    const mine = ++asked;
    const params = new URLSearchParams({ q: q.value });
    if (category.value) params.set('category', category.value);
    const filter = bar.filter();
    if (filter) params.set('filter', JSON.stringify(filter));
    try {
      const body = await api.get(`/search?${params}`);
      if (mine !== asked) return;
      clear(results, body.items.length ? h('ol', { class: 'hits' }, body.items.map(hit)) : h('p', { class: 'muted' }, t('search.none')));
    } catch (err) {
      if (mine === asked) showError(error, err);
    }
  }

  page('search.title', h('div', { class: 'card search-card' }, form, bar.element), error, results);
  q.focus();
  try {
    const { categories } = await api.get('/search/categories');
    category.append(...categories.map((c) => h('option', { value: c }, c)));
  } catch {
    // no filter then
  }
}

function hit(item) {
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
    metadataChips(item.metadata, item.name || item.path),
    // the words the server's analyzer matched, whole (stems, Japanese bigrams joined)
    h('p', { class: 'passage' }, highlighted(item.content, item.highlights)));
}
