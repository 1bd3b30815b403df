// Chat: answers stream in over POST /chat/stream; progress lines, a stop button, a Sources
// region beside each answer, citations [n] that open the cited passage. Conversations are kept
// on the server (/conversations): the open one is named in the address
// (?conversation=<id>#/chat), so any tab resumes it; the list beside the chat opens, renames
// and deletes them. Each question goes with `conversationId`: the server answers from the
// stored turns and saves the question and the finished answer with its sources. The metadata
// filter bar above the message box (filter_bar.js) limits the files answers come from; each
// question sent with a filter says so under it.
import * as api from '../api.js';
import { clear, errorBox, h, page, showError, toast } from '../layout.js';
import { getLanguage, t } from '../i18n.js';
import { byFile, markedPassage, originalButton, pageLabel } from './citations.js';
import { markButtons } from './answer_marks.js';
import { conversationList, titleOf } from './conversation_list.js';
import { filterBar } from './filter_bar.js';

const PARAM = 'conversation';
// The seed sends progress lines as "content" too; they come before the answer and end in "...".
const isProgress = (text) => /(\.\.\.|…)\s*$/.test(text);

function idInAddress() {
  return new URLSearchParams(location.search).get(PARAM);
}

// Without a navigation: the router listens to the hash only, and the page stays as it is.
function putInAddress(id) {
  const url = new URL(location.href);
  if (id) url.searchParams.set(PARAM, id);
  else url.searchParams.delete(PARAM);
  history.replaceState(history.state, '', url);
}

const stored = (m) => ({ role: m.role, content: m.content, sources: m.sources || [], done: true,
  nothing: m.role === 'assistant' && !(m.sources || []).length });

export function render() {
  let turns = [];
  let currentId = null;
  let controller = null;
  let shown = 0; // which conversation the log shows: a late answer never lands in another
  const log = h('div', { class: 'chat-log' });
  const heading = h('h2', { class: 'conv-title' });
  const problem = errorBox();
  const message = h('textarea', { name: 'message', rows: 2, 'aria-label': t('chat.message'), placeholder: t('chat.placeholder'), required: true, maxLength: 8000 });
  const send = h('button', { type: 'submit' }, t('chat.send'));
  const stop = h('button', { type: 'button', class: 'secondary', hidden: true, onclick: () => controller && controller.abort() }, t('chat.stop'));
  const fresh = h('button', { type: 'button', class: 'ghost', onclick: () => startNew() }, t('chat.clear'));
  const dialog = h('dialog', { class: 'passage-dialog', 'aria-labelledby': 'passage-title' });
  const bar = filterBar({ scope: 'chat' });
  const form = h('form', { class: 'chat-input', onsubmit: ask }, problem, bar.element, message, h('div', { class: 'row' }, send, stop));
  message.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); form.requestSubmit(); }
  });
  const conversations = conversationList({
    open: (id) => { if (id !== currentId) openConversation(id); },
    deleted: (id) => { if (id === currentId) startNew(); toast(t('conv.deleted')); },
    renamed: (c) => { if (c.id === currentId) heading.textContent = titleOf(c); },
    failed: (err) => showError(problem, err),
  });

  function draw() {
    clear(log, turns.length ? turns.map(view) : h('p', { class: 'muted' }, t('chat.empty')));
  }

  function view(turn) {
    if (turn.role === 'user') {
      return h('div', { class: 'msg user' }, h('p', {}, turn.content),
        turn.filter ? h('p', { class: 'small filter-used' }, t('filter.used', { what: turn.filter })) : null);
    }
    const sources = turn.sources || [];
    const body = h('div', { class: `answer${turn.nothing ? ' nothing' : ''}` }, withCitations(turn.content, sources));
    return h('div', { class: 'msg assistant' },
      turn.progress ? h('p', { class: 'progress muted small', role: 'status' }, turn.progress) : null,
      body,
      turn.error ? h('p', { class: 'error', role: 'alert' }, turn.error) : null,
      turn.done && turn.answerId ? markButtons(turn, (err) => showError(problem, err)) : null,
      h('aside', { class: 'sources', role: 'region', 'aria-label': t('chat.sources') },
        h('h2', { class: 'small' }, t('chat.sources')),
        sources.length ? sourceList(sources)
          : h('p', { class: 'muted small' }, turn.done ? t('chat.noSources') : '…')));
  }

  // One entry per file, its passages under it by number and page ("[1] p.4  [2] p.4").
  function sourceList(sources) {
    return h('ol', {}, byFile(sources).map((group) => h('li', { class: 'source-file' },
      h('span', { class: 'source-name' }, group.fileName),
      h('span', { class: 'source-passages' }, group.items.map(([n, s]) => h('button', {
        type: 'button', class: 'link', 'aria-label': `${t('chat.source')} ${n}: ${s.fileName} ${pageLabel(s)}`.trim(),
        onclick: () => open(s, n),
      }, `[${n}]${pageLabel(s) ? ` ${pageLabel(s)}` : ''}`))))));
  }

  function withCitations(text, sources) {
    const out = [];
    let last = 0;
    for (const m of text.matchAll(/\[(\d+)\]/g)) {
      const n = Number(m[1]);
      if (!sources[n - 1]) continue;
      out.push(text.slice(last, m.index), h('button', { type: 'button', class: 'cite', 'aria-label': `${t('chat.source')} ${n}: ${sources[n - 1].fileName}`, onclick: () => open(sources[n - 1], n) }, `[${n}]`));
      last = m.index + m[0].length;
    }
    out.push(text.slice(last));
    return out;
  }

  // The cited passage with the quoted sentences marked, the first in view; the passage in its file,
  // and the original at the quoted page.
  function open(source, n) {
    const link = source.documentId ? h('a', { href: `#/files/${source.documentId}/${source.chunkIndex}`, onclick: () => dialog.close() }, t('chat.openFile')) : null;
    const where = pageLabel(source);
    const failed = h('p', { class: 'error', role: 'alert', hidden: true });
    clear(dialog,
      h('h2', { id: 'passage-title' }, `[${n}] ${source.fileName}${where ? ` ${where}` : ''}`),
      h('p', { class: 'muted small' }, `#${source.chunkIndex} · score ${Number(source.score).toFixed(3)}`),
      markedPassage(source),
      failed,
      h('div', { class: 'row' }, link,
        source.documentId ? originalButton(source, (err) => { failed.hidden = false; failed.textContent = err.message; }) : null,
        h('button', { type: 'button', onclick: () => dialog.close() }, t('common.close'))));
    dialog.showModal();
    // the passage opens at the sentence the answer quoted first
    const first = dialog.querySelector('mark.quote.first');
    const box = first?.closest('blockquote');
    if (first && box) {
      box.scrollTop = Math.max(0, first.offsetTop - box.offsetTop - 8);
      first.scrollIntoView({ block: 'nearest' });
    }
  }

  // The newest message in view, above the pinned message box: scrolled just enough for its
  // end to clear the box, never so far that its start leaves the top of the screen (a long
  // answer is read from its start; it is followed while it streams until it fills the view).
  function reveal(node) {
    if (!node || !node.isConnected) return;
    const gap = 8;
    const box = form.getBoundingClientRect();
    const r = node.getBoundingClientRect();
    const below = r.bottom - (box.top - gap);
    if (below > 0) window.scrollBy(0, Math.max(0, Math.min(below, r.top - gap)));
  }

  function show(id, title, messages) {
    shown += 1;
    currentId = id;
    turns = messages.map(stored);
    heading.textContent = title;
    putInAddress(id);
    conversations.select(id);
    showError(problem, null);
    draw();
    requestAnimationFrame(() => reveal(log.lastElementChild));
  }

  function startNew() {
    if (controller) controller.abort();
    show(null, t('conv.untitled'), []);
    message.focus();
  }

  async function openConversation(id) {
    if (controller) controller.abort();
    try {
      const c = await api.get(`/conversations/${encodeURIComponent(id)}`);
      show(c.id, titleOf(c), c.messages);
    } catch (err) {
      show(null, t('conv.untitled'), []);
      showError(problem, err.status === 404 ? new Error(t('conv.missing')) : err);
    }
  }

  async function ask(e) {
    e.preventDefault();
    const text = message.value.trim();
    if (!text || controller) return;
    controller = new AbortController();
    send.disabled = true;
    stop.hidden = false;
    showError(problem, null);
    const mine = shown;
    const answer = { role: 'assistant', content: '', sources: [], progress: '', done: false };
    let current = null;
    let here = null;
    try {
      if (!currentId) {
        const made = await api.post('/conversations', {});
        if (mine !== shown) return;
        shown += 1;
        currentId = made.id;
        putInAddress(made.id);
        conversations.select(made.id);
      }
      here = shown;
      const filter = bar.filter();
      turns.push({ role: 'user', content: text, filter: filter ? bar.summary() : '' }, answer);
      message.value = '';
      draw();
      current = log.lastElementChild;
      reveal(current);
      const body = { message: text, conversationId: currentId, userLanguage: getLanguage() };
      if (filter) body.filter = filter;
      await api.chatStream(body, (ev) => {
        if (ev.type === 'content' && !answer.content && isProgress(ev.data)) answer.progress = ev.data;
        else if (ev.type === 'content') answer.content += ev.data;
        else if (ev.type === 'sources') { answer.sources = ev.data; answer.nothing = ev.data.length === 0; answer.answerId = ev.answerId; }
        else if (ev.type === 'error') answer.error = ev.data;
        if (here !== shown) return;
        const next = view(answer);
        current.replaceWith(next);
        current = next;
        reveal(current);
      }, controller.signal);
    } catch (err) {
      if (!current) showError(problem, err); // no conversation could be made (the limit?)
      answer.error = err.name === 'AbortError' ? t('chat.stopped') : err.message;
    } finally {
      answer.done = true;
      answer.progress = '';
      controller = null;
      send.disabled = false;
      stop.hidden = true;
      if (current && current.isConnected) {
        const last = view(answer);
        current.replaceWith(last);
        reveal(last);
      }
      if (current) {
        await conversations.refresh(); // the new title, and this conversation first
        const c = here === shown && conversations.find(currentId);
        if (c) heading.textContent = titleOf(c);
      }
    }
  }

  page('chat.title',
    h('div', { class: 'chat-layout' },
      conversations.element,
      h('section', { class: 'chat-main', 'aria-labelledby': 'conv-title' },
        h('div', { class: 'row spread chat-head' }, heading, fresh), log, form)),
    dialog);
  heading.id = 'conv-title';
  conversations.refresh();
  const wanted = idInAddress();
  if (wanted) openConversation(wanted);
  else show(null, t('conv.untitled'), []);
  message.focus();
}
