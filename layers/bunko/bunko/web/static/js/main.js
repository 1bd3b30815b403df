// Start: config, language, session, then the page for the URL's hash.
import * as api from './api.js';
import { h } from './dom.js';
import * as i18n from './i18n.js';
import { page, renderTop, startStatus } from './layout.js';
import * as router from './router.js';
import * as session from './session.js';
import * as admin from './pages/admin.js';
import * as chat from './pages/chat.js';
import * as file from './pages/file.js';
import * as library from './pages/library.js';
import * as login from './pages/login.js';
import * as search from './pages/search.js';
import * as settings from './pages/settings.js';

function guarded(render) {
  return (params, path) => {
    if (!session.token()) {
      router.go('/login');
      return;
    }
    renderTop(path);
    document.getElementById('main').focus({ preventScroll: true });
    return render(params);
  };
}

router.route('/login', () => {
  if (session.token()) return router.go('/library');
  renderTop('');
  login.render();
});
router.route('/library', guarded(library.render));
router.route('/files/:id', guarded(file.render));
router.route('/files/:id/:chunk', guarded(file.render));
router.route('/search', guarded(search.render));
router.route('/chat', guarded(chat.render));
router.route('/settings', guarded(settings.render));
router.route('/admin', guarded(admin.render));
router.fallback((path) => {
  if (path === '/' || !session.token()) return router.go(session.token() ? '/library' : '/login');
  renderTop(path);
  page('notFound', h('p', {}, h('a', { href: '#/library' }, i18n.t('nav.library'))));
});

session.onChange((s) => {
  startStatus();
  if (!s) router.go('/login');
});
i18n.onChange(() => router.resolve());

await api.configure();
i18n.init();
session.load();
startStatus();
router.start();
