// Chat: answers stream in over POST /chat/stream; progress lines, a stop button, a Sources
// region beside each answer, citations [n] that open the cited passage, and the history kept
// in this browser (sessionStorage) and sent as `history`.
import * as api from '../api.js';
import { clear, h } from '../dom.js';
import { getLanguage, t } from '../i18n.js';
import { page } from '../layout.js';
import * as session from '../session.js';

const storeKey = () => `bunko.chat.${session.get()?.user?.id}`;
const load = () => { try { return JSON.parse(sessionStorage.getItem(storeKey())) || []; } catch { return []; } };
const save = (turns) => sessionStorage.setItem(storeKey(), JSON.stringify(turns));
// The seed sends progress lines as "content" too; they come before the answer and end in "...".
const isProgress = (text) => /(\.\.\.|…)\s*$/.test(text);

export function render() {
  let turns = load();
  let controller = null;
  const log = h('div', { class: 'chat-log' });
  const message = h('textarea', { name: 'message', rows: 2, 'aria-label': t('chat.message'), placeholder: t('chat.placeholder'), required: true, maxLength: 8000 });
  const send = h('button', { type: 'submit' }, t('chat.send'));
  const stop = h('button', { type: 'button', class: 'secondary', hidden: true, onclick: () => controller && controller.abort() }, t('chat.stop'));
  const dialog = h('dialog', { class: 'passage-dialog', 'aria-labelledby': 'passage-title' });
  const form = h('form', { class: 'chat-input', onsubmit: ask }, message, h('div', { class: 'row' }, send, stop));
  message.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); form.requestSubmit(); }
  });

  function draw() {
    clear(log, turns.length ? turns.map(view) : h('p', { class: 'muted' }, t('chat.empty')));
  }

  function view(turn) {
    if (turn.role === 'user') return h('div', { class: 'msg user' }, h('p', {}, turn.content));
    const sources = turn.sources || [];
    const body = h('div', { class: `answer${turn.nothing ? ' nothing' : ''}` }, withCitations(turn.content, sources));
    return h('div', { class: 'msg assistant' },
      turn.progress ? h('p', { class: 'progress muted small', role: 'status' }, turn.progress) : null,
      body,
      turn.error ? h('p', { class: 'error', role: 'alert' }, turn.error) : null,
      h('aside', { class: 'sources', role: 'region', 'aria-label': t('chat.sources') },
        h('h2', { class: 'small' }, t('chat.sources')),
        sources.length ? h('ol', {}, sources.map((s, i) => h('li', {}, h('button', { type: 'button', class: 'link', onclick: () => open(s, i + 1) }, `[${i + 1}] ${s.fileName}`))))
          : h('p', { class: 'muted small' }, turn.done ? t('chat.noSources') : '…')));
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

  function open(source, n) {
    const link = source.documentId ? h('a', { href: `#/files/${source.documentId}/${source.chunkIndex}`, onclick: () => dialog.close() }, t('chat.openFile')) : null;
    clear(dialog,
      h('h2', { id: 'passage-title' }, `[${n}] ${source.fileName}`),
      h('p', { class: 'muted small' }, `#${source.chunkIndex} · score ${Number(source.score).toFixed(3)}`),
      h('blockquote', { class: 'passage' }, source.content),
      h('div', { class: 'row' }, link, h('button', { type: 'button', onclick: () => dialog.close() }, t('common.close'))));
    dialog.showModal();
  }

  async function ask(e) {
    e.preventDefault();
    const text = message.value.trim();
    if (!text || controller) return;
    const history = turns.filter((x) => !x.error).map(({ role, content }) => ({ role, content }));
    const answer = { role: 'assistant', content: '', sources: [], progress: '', done: false };
    turns.push({ role: 'user', content: text }, answer);
    message.value = '';
    controller = new AbortController();
    send.disabled = true;
    stop.hidden = false;
    draw();
    const node = log.lastElementChild;
    let current = node;
    try {
      await api.chatStream({ message: text, history, userLanguage: getLanguage() }, (ev) => {
        if (ev.type === 'content' && !answer.content && isProgress(ev.data)) answer.progress = ev.data;
        else if (ev.type === 'content') answer.content += ev.data;
        else if (ev.type === 'sources') { answer.sources = ev.data; answer.nothing = ev.data.length === 0; }
        else if (ev.type === 'error') answer.error = ev.data;
        const fresh = view(answer);
        current.replaceWith(fresh);
        current = fresh;
        current.scrollIntoView({ block: 'end' });
      }, controller.signal);
    } catch (err) {
      answer.error = err.name === 'AbortError' ? t('chat.stopped') : err.message;
    } finally {
      answer.done = true;
      answer.progress = '';
      controller = null;
      send.disabled = false;
      stop.hidden = true;
      current.replaceWith(view(answer));
      save(turns);
    }
  }

  const reset = h('button', { type: 'button', class: 'ghost', onclick: () => { turns = []; save(turns); draw(); } }, t('chat.clear'));
  page('chat.title', h('div', { class: 'row spread' }, h('span', {}), reset), log, form, dialog);
  draw();
  message.focus();
}
