// The chat page's list of kept conversations (GET /conversations, most recent first): open one,
// rename it in place, delete it after a confirmation, load more. Each entry is a link to
// ?conversation=<id>#/chat, so it opens in another tab too.
import * as api from '../api.js';
import { clear, h } from '../layout.js';
import { getLanguage, t } from '../i18n.js';

const PAGE = 50;

export const titleOf = (c) => (c && c.title) || t('conv.untitled');

export function hrefOf(id) {
  const url = new URL(location.href);
  url.searchParams.set('conversation', id);
  url.hash = '/chat';
  return url.pathname + url.search + url.hash;
}

const when = (iso) => {
  try {
    return new Date(iso).toLocaleString(getLanguage(), { dateStyle: 'short', timeStyle: 'short' });
  } catch {
    return iso;
  }
};

// handlers: open(id), deleted(id), renamed(conversation), failed(error)
export function conversationList(handlers) {
  let items = [];
  let current = null;
  let more = false;
  const list = h('ul', { class: 'conv-items' });
  const empty = h('p', { class: 'muted small' }, t('conv.none'));
  const moreButton = h('button', { type: 'button', class: 'ghost', hidden: true, onclick: loadMore }, t('conv.more'));
  const count = h('span', { class: 'muted small' });
  const element = h('details', { class: 'conversations' },
    h('summary', {}, h('span', { class: 'conv-heading' }, t('conv.list')), ' ', count),
    h('nav', { 'aria-label': t('conv.list') }, list, empty, moreButton));
  // Open beside the chat on a wide screen; folded above it on a phone.
  element.open = window.matchMedia('(min-width: 761px)').matches;

  function draw() {
    clear(list, items.map(entry));
    empty.hidden = items.length > 0;
    moreButton.hidden = !more;
    count.textContent = items.length ? `(${items.length}${more ? '+' : ''})` : '';
  }

  function entry(c) {
    const link = h('a', {
      href: hrefOf(c.id), class: 'conv-link', 'aria-current': c.id === current ? 'page' : null,
      onclick: (e) => { e.preventDefault(); handlers.open(c.id); },
    }, titleOf(c));
    const rename = h('button', { type: 'button', class: 'ghost small', 'aria-label': t('conv.renameOf', { title: titleOf(c) }), onclick: () => editing(c, li) }, t('conv.rename'));
    const remove = h('button', { type: 'button', class: 'ghost small danger', 'aria-label': t('conv.deleteOf', { title: titleOf(c) }), onclick: () => removeOne(c) }, t('common.delete'));
    const li = h('li', { class: c.id === current ? 'current' : null },
      link, h('span', { class: 'muted small' }, when(c.updatedAt)), h('div', { class: 'row conv-actions' }, rename, remove));
    return li;
  }

  function editing(c, li) {
    const input = h('input', { type: 'text', value: c.title || '', maxLength: 200, required: true, 'aria-label': t('conv.titleLabel') });
    const form = h('form', {
      class: 'row conv-rename',
      onsubmit: async (e) => {
        e.preventDefault();
        try {
          const renamed = await api.request('PATCH', `/conversations/${c.id}`, { title: input.value });
          items = items.map((x) => (x.id === c.id ? renamed : x));
          draw();
          handlers.renamed(renamed);
        } catch (err) {
          handlers.failed(err);
        }
      },
    }, input, h('button', { type: 'submit' }, t('common.save')),
    h('button', { type: 'button', class: 'ghost', onclick: draw }, t('common.cancel')));
    input.addEventListener('keydown', (e) => { if (e.key === 'Escape') draw(); });
    li.replaceWith(h('li', { class: 'editing' }, form));
    input.focus();
    input.select();
  }

  async function removeOne(c) {
    if (!confirm(t('conv.deleteConfirm', { title: titleOf(c) }))) return;
    try {
      await api.del(`/conversations/${c.id}`);
      items = items.filter((x) => x.id !== c.id);
      draw();
      handlers.deleted(c.id);
    } catch (err) {
      handlers.failed(err);
    }
  }

  async function loadMore() {
    try {
      const next = await api.get(`/conversations?limit=${PAGE}&offset=${items.length}`);
      const known = new Set(items.map((c) => c.id));
      items = items.concat(next.filter((c) => !known.has(c.id)));
      more = next.length === PAGE;
      draw();
    } catch (err) {
      handlers.failed(err);
    }
  }

  return {
    element,
    // The first page again (after a question: titles and order change).
    async refresh() {
      try {
        const first = await api.get(`/conversations?limit=${PAGE}`);
        items = first;
        more = first.length === PAGE;
        draw();
      } catch (err) {
        handlers.failed(err);
      }
    },
    select(id) {
      current = id;
      draw();
    },
    find: (id) => items.find((c) => c.id === id) || null,
  };
}
