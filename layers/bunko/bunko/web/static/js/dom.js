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

// Text with each case-insensitive occurrence of the terms wrapped in <mark>.
export function highlighted(text, terms) {
  const words = terms.filter((t) => t.length > 0).map((t) => t.toLowerCase());
  if (!words.length) return [text];
  const lower = text.toLowerCase();
  const out = [];
  let i = 0;
  while (i < text.length) {
    let best = -1;
    let len = 0;
    for (const w of words) {
      const at = lower.indexOf(w, i);
      if (at !== -1 && (best === -1 || at < best || (at === best && w.length > len))) {
        best = at;
        len = w.length;
      }
    }
    if (best === -1) break;
    if (best > i) out.push(text.slice(i, best));
    out.push(h('mark', {}, text.slice(best, best + len)));
    i = best + len;
  }
  if (i < text.length) out.push(text.slice(i));
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
