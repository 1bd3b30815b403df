// Elements from data, never from HTML strings: text is always text (no XSS, no innerHTML).
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (key === 'class') el.className = value;
    else if (key in el && key !== 'list' && !key.includes('-')) el[key] = value;
    else el.setAttribute(key, value === true ? '' : value);
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// Text with the given runs wrapped in <mark>: [start, end) pairs in code points (the server's
// characters, not UTF-16 units), in order and not overlapping, as /search's `highlights`.
export function highlighted(text, spans) {
  const chars = Array.from(text);
  const out = [];
  let i = 0;
  for (const [start, end] of spans || []) {
    if (!(Number.isInteger(start) && Number.isInteger(end) && start >= i && end > start && end <= chars.length)) continue;
    if (start > i) out.push(chars.slice(i, start).join(''));
    out.push(h('mark', {}, chars.slice(start, end).join('')));
    i = end;
  }
  if (i < chars.length) out.push(chars.slice(i).join(''));
  return out;
}

export function field(label, input, hint) {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  input.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), input, hint ? h('small', { class: 'muted' }, hint) : null);
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
