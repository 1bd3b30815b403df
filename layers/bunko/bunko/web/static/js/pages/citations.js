// What a chat source says about where its evidence is: "p.4" (PDF), "slide 3", "sheet 2"; the
// passage with the quoted sentence marked; and the original file opened at that page.
import * as api from '../api.js';
import { h } from '../layout.js';
import { t } from '../i18n.js';

const SLIDES = /\.(pptx?|odp|key)$/i;
const SHEETS = /\.(xlsx?|ods|csv)$/i;
const PDF = /\.pdf$/i;

// "p.4", "slide 3", "sheet 2"; "" for a file without pages.
export function pageLabel(source) {
  if (source.page == null) return '';
  const kind = SLIDES.test(source.fileName) ? 'chat.slide' : SHEETS.test(source.fileName) ? 'chat.sheet' : 'chat.page';
  return t(kind, { n: source.page });
}

// Sources in the order the answer numbers them, gathered under their file: [{file, items}],
// items as [number, source].
export function byFile(sources) {
  const groups = new Map();
  sources.forEach((s, i) => {
    const key = s.documentId || s.fileName;
    if (!groups.has(key)) groups.set(key, { fileName: s.fileName, items: [] });
    groups.get(key).items.push([i + 1, s]);
  });
  return [...groups.values()];
}

// The passage as text nodes, each sentence the answer rests on in <mark class="quote">
// (`quotes`, in the answer's order; older answers carry `quote` alone), the first one quoted
// also marked `first`. quoteStart/quoteEnd count code points (the server's characters), so
// the passage is cut as code points, not UTF-16 units.
export function markedPassage(source) {
  const text = source.content || '';
  const chars = Array.from(text);
  const given = source.quotes?.length ? source.quotes : [source];
  const spans = [];
  given.forEach((q, order) => {
    const span = spanOf(q, text, chars);
    if (span && spans.every(([s, e]) => span[1] <= s || span[0] >= e)) spans.push([...span, order]);
  });
  const out = [];
  let i = 0;
  for (const [start, end, order] of spans.sort((a, b) => a[0] - b[0])) {
    out.push(chars.slice(i, start).join(''));
    out.push(h('mark', { class: order === 0 ? 'quote first' : 'quote' }, chars.slice(start, end).join('')));
    i = end;
  }
  out.push(chars.slice(i).join(''));
  return h('blockquote', { class: 'passage' }, out);
}

// [start, end) of a quote in code points: its offsets when they fit, else where its text is.
function spanOf(q, text, chars) {
  const { quoteStart: start, quoteEnd: end } = q;
  if (Number.isInteger(start) && Number.isInteger(end) && start >= 0 && end > start && end <= chars.length) return [start, end];
  const at = q.quote ? text.indexOf(q.quote) : -1;
  if (at < 0) return null;
  const from = Array.from(text.slice(0, at)).length;
  return [from, from + Array.from(q.quote).length];
}

// The original in a new tab, a PDF at the quoted page. The tab is opened at the click (a tab
// opened after an await is a blocked pop-up) and sent on once the short-lived link arrives.
export async function openOriginal(source) {
  const tab = window.open('', '_blank');
  try {
    const link = await api.get(`/knowledge-bases/${encodeURIComponent(source.documentId)}/original-link`);
    const url = api.absolute(link.url) + (PDF.test(link.fileName) && source.page ? `#page=${source.page}` : '');
    if (tab) {
      tab.opener = null;
      tab.location.href = url;
    } else {
      location.assign(url);
    }
  } catch (err) {
    if (tab) tab.close();
    throw err;
  }
}

export function originalButton(source, onError) {
  const label = source.page != null && PDF.test(source.fileName)
    ? t('chat.openOriginalAt', { page: pageLabel(source) })
    : t('chat.openOriginal');
  return h('button', { type: 'button', class: 'secondary', onclick: () => openOriginal(source).catch(onError) }, label);
}
