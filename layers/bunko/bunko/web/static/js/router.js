// Hash routes (#/library, #/files/<id>): no server fallback needed, works from S3 as is.
const routes = [];
let notFound = null;

export function route(pattern, render) {
  const names = [];
  const re = new RegExp(
    `^${pattern.replace(/:(\w+)/g, (_, n) => {
      names.push(n);
      return '([^/]+)';
    })}$`,
  );
  routes.push({ re, names, render });
}

export function fallback(render) {
  notFound = render;
}

export function current() {
  return location.hash.replace(/^#/, '') || '/';
}

export function go(path) {
  if (current() === path) resolve();
  else location.hash = path;
}

export function resolve() {
  const path = current();
  for (const r of routes) {
    const m = r.re.exec(path);
    if (m) {
      const params = Object.fromEntries(r.names.map((n, i) => [n, decodeURIComponent(m[i + 1])]));
      return r.render(params, path);
    }
  }
  return notFound && notFound(path);
}

export function start() {
  window.addEventListener('hashchange', resolve);
  resolve();
}
