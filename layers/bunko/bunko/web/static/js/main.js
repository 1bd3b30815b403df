// Start: config, language, session, then the page for the URL's hash.
import * as api from './api.js';
import { h, page, renderTop, startStatus } from './layout.js';
import * as i18n from './i18n.js';
import { session } from './api.js';
import * as login from './pages/login.js';

const { oidc } = login;

// Hash routes (#/library, #/files/<id>): no server fallback needed, works from S3 as is.
const routes = [];
let notFound = null;
const router = {
  route(pattern, render) {
    const names = [];
    const re = new RegExp(
      `^${pattern.replace(/:(\w+)/g, (_, n) => {
        names.push(n);
        return '([^/]+)';
      })}$`,
    );
    routes.push({ re, names, render });
  },
  fallback(render) {
    notFound = render;
  },
  current() {
    return location.hash.replace(/^#/, '') || '/';
  },
  go(path) {
    if (router.current() === path) router.resolve();
    else location.hash = path;
  },
  resolve() {
    const path = router.current();
    for (const r of routes) {
      const m = r.re.exec(path);
      if (m) {
        const params = Object.fromEntries(r.names.map((n, i) => [n, decodeURIComponent(m[i + 1])]));
        return r.render(params, path);
      }
    }
    return notFound && notFound(path);
  },
  start() {
    window.addEventListener('hashchange', router.resolve);
    router.resolve();
  },
};

// Pages load when first opened: the first screen (sign in) fetches only what it shows.
const pages = {
  admin: () => import('./pages/admin.js'),
  chat: () => import('./pages/chat.js'),
  file: () => import('./pages/file.js'),
  library: () => import('./pages/library.js'),
  search: () => import('./pages/search.js'),
  settings: () => import('./pages/settings.js'),
  sources: () => import('./pages/sources.js'),
};

// The pages' styles, once, with the first page after sign-in (the sign-in screen needs only
// app.css); the page waits for them, so nothing shows unstyled.
let pageStyles = null;
function stylesForPages() {
  pageStyles ??= new Promise((resolve) => {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = '/static/pages.css';
    link.onload = link.onerror = resolve;
    document.head.append(link);
  });
  return pageStyles;
}

function guarded(name) {
  return async (params, path) => {
    if (!session.token()) {
      session.rememberNext(path);
      router.go('/login');
      return;
    }
    renderTop(path);
    const [module] = await Promise.all([pages[name](), stylesForPages()]);
    if (router.current() !== path) return; // the user moved on while it loaded
    document.getElementById('main').focus({ preventScroll: true });
    return module.render(params);
  };
}

router.route('/login', () => {
  if (session.token()) return router.go('/library');
  renderTop('');
  login.render();
});
router.route('/library', guarded('library'));
router.route('/files/:id', guarded('file'));
router.route('/files/:id/:chunk', guarded('file'));
router.route('/sources', guarded('sources'));
router.route('/search', guarded('search'));
router.route('/chat', guarded('chat'));
router.route('/settings', guarded('settings'));
router.route('/admin', guarded('admin'));
router.fallback((path) => {
  if (!session.token()) session.rememberNext(path);
  if (path === '/' || !session.token()) return router.go(session.token() ? '/library' : '/login');
  renderTop(path);
  stylesForPages();
  page('notFound', h('p', {}, h('a', { href: '#/library' }, i18n.t('nav.library'))));
});

session.onChange((s) => {
  startStatus();
  if (!s) router.go('/login');
});
let routing = false;
i18n.onChange(() => routing && router.resolve());

function start(path) {
  if (path) history.replaceState(history.state, '', `#${path}`);
  routing = true;
  router.start();
}

api.configure();
session.load();
// English is in i18n.js; another language's words are fetched before the first screen.
await i18n.init();
// Back from the identity provider: the fragment leaves the address before the router sees it.
const back = oidc.fromAddress();
startStatus();
if (back) {
  page('auth.signingIn');
  oidc.signIn(back.token).then((signedIn) => {
    if (signedIn) api.keepSession();
    start(signedIn ? '/library' : '/login');
  });
} else if (oidc.currentNotice()) {
  if (session.token()) oidc.clearNotice(); // signed in already: nothing happened to them
  start(session.token() ? '/library' : '/login');
} else if (!session.token()) {
  // A new tab or window of a browser signed in elsewhere: no sign-in page, the link it opened.
  api.resumeSession().then(async (resumed) => {
    if (resumed) {
      session.resumeLibrary();
      session.set({ token: resumed.access_token, user: resumed.user });
      await i18n.languageFromSettings();
    }
    start(null);
  });
} else {
  start(null);
  i18n.languageFromSettings(); // a reload: the saved choice may have changed elsewhere
}
// The first screen is on the page (tests/bench/bench_web.py reads this mark).
performance.mark('bunko:first-render');
