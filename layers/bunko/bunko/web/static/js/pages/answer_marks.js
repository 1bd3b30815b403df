// Answers people mark (docs/answers.md). Under each answer in Chat: thumbs up / down and an
// optional comment, sent with POST /answers/{answerId}/mark (the id the answer's sources event
// carried). In Settings, in each library one owns: its marked answers (GET /answers/marked),
// the questions it could not answer (GET /answers/missing) and whether it collects them.
import * as api from '../api.js';
import { clear, h } from '../layout.js';
import { t } from '../i18n.js';

const COMMENT_CHARS = 1000;

// `turn`: the chat's answer ({ answerId, mark }); what was chosen is kept on it, so the
// buttons draw the same after the chat redraws the answer.
export function markButtons(turn, onError) {
  const status = h('p', { class: 'small muted', role: 'status' }, turn.mark ? t('marks.thanks') : '');
  const comment = h('input', { type: 'text', maxLength: COMMENT_CHARS, 'aria-label': t('marks.comment'), placeholder: t('marks.comment'), value: turn.comment || '' });
  const send = async (mark) => {
    try {
      await api.post(`/answers/${encodeURIComponent(turn.answerId)}/mark`, { mark, comment: comment.value.trim() || null });
      turn.mark = mark;
      turn.comment = comment.value.trim();
      for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset.mark === mark));
      status.textContent = t('marks.thanks');
    } catch (err) {
      onError(err);
    }
  };
  const buttons = ['up', 'down'].map((mark) => h('button', {
    type: 'button', class: 'ghost mark', 'data-mark': mark, 'aria-pressed': String(turn.mark === mark),
    onclick: () => send(mark),
  }, t(`marks.${mark}`))); // words, not emoji: a machine without an emoji font shows boxes
  return h('div', { class: 'answer-marks row' }, buttons, comment, status);
}

// Settings: the two lists and the setting, in `lib`'s card (owners only).
export function answerSections(lib, onError) {
  return [marked(lib, onError), missing(lib, onError)];
}

function lazy(summary, load) {
  const body = h('div', {});
  const details = h('details', { class: 'activity', ontoggle: () => { if (details.open) load(body); } }, h('summary', {}, summary), body);
  return details;
}

function marked(lib, onError) {
  return lazy(t('marks.marked'), async (body) => {
    try {
      const found = await api.getIn(lib.id, '/answers/marked?limit=20');
      clear(body, found.length ? h('ul', { class: 'plain marked-answers' }, found.map((a) => h('li', { class: `marked ${a.mark}` },
        h('p', {}, h('span', { class: `tag mark-${a.mark}` }, t(`marks.${a.mark}`)), ' ', h('strong', {}, a.question)),
        h('p', { class: 'small' }, a.answer.length > 300 ? `${a.answer.slice(0, 300)}…` : a.answer),
        a.comment ? h('p', { class: 'small comment' }, `“${a.comment}”`) : null,
        h('p', { class: 'small muted' }, [new Date(a.markedAt).toLocaleString(), ...new Set(a.sources.map((s) => s.fileName))].join(' · ')))))
        : h('p', { class: 'muted' }, t('marks.none')));
    } catch (err) {
      onError(err);
    }
  });
}

function missing(lib, onError) {
  const collect = h('input', { type: 'checkbox', onchange: async () => {
    try {
      await api.sendIn(lib.id, 'PUT', '/answers/settings', { collectMissing: collect.checked });
    } catch (err) {
      onError(err);
    }
  } });
  return lazy(t('marks.missing'), async (body) => {
    try {
      const [groups, kept] = await Promise.all([api.getIn(lib.id, '/answers/missing?limit=20'), api.getIn(lib.id, '/answers/settings')]);
      collect.checked = kept.collectMissing;
      clear(body, h('label', { class: 'row' }, collect, t('marks.collect')),
        groups.length ? h('ul', { class: 'plain missing-questions' }, groups.map(groupView)) : h('p', { class: 'muted' }, t('marks.missingNone')));
    } catch (err) {
      onError(err);
    }
  });
}

function groupView(g) {
  const counts = [t('marks.times', { n: g.count }), g.refused ? t('marks.refused', { n: g.refused }) : null,
    g.markedDown ? t('marks.down.n', { n: g.markedDown }) : null].filter(Boolean).join(' · ');
  const weeks = Object.entries(g.weeks).map(([week, n]) => `${week}: ${n}`).join(', ');
  const others = g.questions.filter((q) => q !== g.question);
  return h('li', { class: 'missing' },
    h('p', {}, h('strong', {}, g.question)),
    h('p', { class: 'small muted' }, `${counts} · ${weeks}`),
    others.length ? h('p', { class: 'small' }, `${t('marks.also')}: ${others.join(' / ')}`) : null,
    g.nearest.length ? h('details', { class: 'nearest' }, h('summary', { class: 'small' }, t('marks.nearest')),
      h('ol', { class: 'small' }, g.nearest.map((p) => h('li', {}, h('span', { class: 'source-name' }, p.fileName),
        ` (${Number(p.score).toFixed(2)}) `, p.content.length > 200 ? `${p.content.slice(0, 200)}…` : p.content)))) : null);
}
