// Settings: retrieval and chat preferences, the models in use, model configs (keys write-only),
// API keys for agents, the shared libraries one belongs to.
import * as api from '../api.js';
import { clear, errorBox, field, h, page, showError, toast } from '../layout.js';
import { getLanguage, LANGUAGES, setLanguage, t } from '../i18n.js';
import { session } from '../api.js';
import { librariesCard } from './libraries_card.js';
import { agentSnippets } from './snippets.js';

// Whose each setting is: the person's own (preferences, password) or the library's the tab
// works in (models, keys). A viewer is shown the library's models, not forms that would fail.
export function render() {
  const lib = session.library();
  const scope = { name: lib ? lib.name : null, canWrite: !lib || lib.role !== 'viewer' };
  const models = modelChoices(scope);
  page('set.title', userSettings(), passwordCard(), librariesCard(), models.form,
    scope.canWrite ? modelConfigs(models.load) : null, apiKeys(scope));
}

const whose = (scope) => h('p', { class: 'muted small whose' }, scope.name ? t('set.library', { name: scope.name }) : t('set.libraryOwn'));

// Change my password (POST /auth/change-password): every other session ends; this tab keeps
// going with the token the server returns.
function passwordCard() {
  const error = errorBox();
  const current = h('input', { type: 'password', required: true, maxLength: 256, autocomplete: 'current-password' });
  const fresh = h('input', { type: 'password', required: true, minLength: 8, maxLength: 256, autocomplete: 'new-password' });
  const again = h('input', { type: 'password', required: true, minLength: 8, maxLength: 256, autocomplete: 'new-password' });
  async function change(e) {
    e.preventDefault();
    showError(error, null);
    if (fresh.value !== again.value) return showError(error, new Error(t('set.passwordMismatch')));
    try {
      const body = await api.post('/auth/change-password', { currentPassword: current.value, newPassword: fresh.value });
      session.set({ ...session.get(), token: body.access_token });
      current.value = fresh.value = again.value = '';
      toast(t('set.passwordChanged'));
    } catch (err) {
      showError(error, err);
    }
  }
  return h('form', { class: 'card', onsubmit: change }, h('h2', {}, t('set.password')),
    h('p', { class: 'muted small' }, t('set.passwordNote')),
    h('div', { class: 'grid4' }, field(t('set.currentPassword'), current), field(t('set.newPassword'), fresh, t('auth.passwordHint')),
      field(t('set.repeatPassword'), again)),
    error, h('div', { class: 'row' }, h('button', { type: 'submit' }, t('set.changePassword'))));
}

function userSettings() {
  const error = errorBox();
  const inputs = {
    topK: h('input', { type: 'number', min: 1, max: 100 }),
    similarityThreshold: h('input', { type: 'number', min: 0, max: 1, step: 0.01 }),
    enableRerank: h('input', { type: 'checkbox' }),
    enableFullTextSearch: h('input', { type: 'checkbox' }),
    temperature: h('input', { type: 'number', min: 0, max: 2, step: 0.1 }),
    maxTokens: h('input', { type: 'number', min: 1, max: 32768 }),
    language: h('select', {}, LANGUAGES.map(([c, name]) => h('option', { value: c }, name))),
  };
  const form = h('form', { class: 'card', onsubmit: saveAll },
    h('h2', {}, t('set.retrieval')), h('p', { class: 'muted small whose' }, t('set.mine')),
    h('div', { class: 'grid4' }, Object.entries(inputs).map(([k, el]) => (el.type === 'checkbox' ? h('label', { class: 'check' }, el, t(`set.${k}`)) : field(t(`set.${k}`), el)))),
    error, h('div', { class: 'row' }, h('button', { type: 'submit' }, t('common.save'))));
  api.get('/user-settings').then((s) => {
    for (const [k, el] of Object.entries(inputs)) el.type === 'checkbox' ? (el.checked = s[k]) : (el.value = s[k]);
    if (!s.languageChosen) inputs.language.value = getLanguage(); // the page's: the browser's
  }).catch((err) => showError(error, err));

  async function saveAll(e) {
    e.preventDefault();
    showError(error, null);
    const body = {};
    for (const [k, el] of Object.entries(inputs)) body[k] = el.type === 'checkbox' ? el.checked : el.type === 'number' ? Number(el.value) : el.value;
    try {
      await api.putMine('/user-settings', body);
      toast(t('common.saved'));
      setLanguage(body.language, false);
    } catch (err) {
      showError(error, err);
    }
  }
  return form;
}

// Which configs chat, rerank and the workspace's embeddings use (aurak's selected*Id). A new
// embedding model is built in the background while the old one serves: shown until it is done.
function modelChoices(scope) {
  const error = errorBox();
  const remember = (e) => { e.target.dataset.picked = e.target.value; };
  const pick = {
    selectedLLMId: h('select', { onchange: remember }),
    selectedRerankId: h('select', { onchange: remember }),
    selectedEmbeddingId: h('select', { onchange: remember }),
  };
  const none = { selectedLLMId: 'models.offline', selectedRerankId: 'models.noRerank', selectedEmbeddingId: 'models.serverDefault' };
  const type = { selectedLLMId: 'llm', selectedRerankId: 'rerank', selectedEmbeddingId: 'embedding' };
  const state = h('p', { class: 'muted', role: 'status' });
  let timer = null;
  async function load() {
    try {
      const [configs, saved] = await Promise.all([api.get('/model-configs'), api.get('/user-settings')]);
      if (!scope.canWrite) {
        clear(inUse, Object.keys(pick).map((k) => {
          const c = configs.find((m) => m.id === saved[k]);
          return h('li', {}, h('strong', {}, `${t(`models.${k}`)}: `), c ? `${c.name} · ${c.modelId}` : t(none[k]));
        }));
        await showEmbedding();
        return;
      }
      for (const [k, el] of Object.entries(pick)) {
        // A choice picked but not yet saved survives the list being refreshed (a config
        // added on this page refreshes it while the person may already be choosing).
        const picked = el.dataset.picked;
        clear(el, h('option', { value: '' }, t(none[k])),
          configs.filter((c) => c.type === type[k]).map((c) => h('option', { value: c.id }, `${c.name} · ${c.modelId}`)));
        el.value = [...el.options].some((o) => o.value === picked) ? picked : saved[k] || '';
      }
      await showEmbedding();
    } catch (err) {
      showError(error, err);
    }
  }
  const label = (m) => (m.modelConfigId ? `${m.name} (${m.modelId})` : m.name || t('models.keywordOnly'));
  async function showEmbedding() {
    clearTimeout(timer);
    const m = await api.get('/embedding-model');
    const r = m.refined; // a stronger model refining in the background (BUNKO_REFINE_EMBEDDER)
    const parts = [t('models.serving', { name: r && r.serving ? r.name : label(m.serving) })];
    const b = m.building;
    if (b && b.error) parts.push(t('models.failed', { name: label(b), error: b.error }));
    else if (b) parts.push(t('models.building', { name: label(b), done: b.chunksDone, total: b.chunksTotal }));
    if (r && r.serving) parts.push(t('models.refined', { name: label(m.serving), total: r.chunksTotal }));
    else if (r) parts.push(t('models.refining', { name: r.name, done: r.chunksRefined, total: r.chunksTotal }));
    state.textContent = parts.join(' · ');
    if (((b && !b.error) || (r && !r.serving)) && state.isConnected) timer = setTimeout(() => showEmbedding().catch((err) => showError(error, err)), 2000);
  }
  async function save(e) {
    e.preventDefault();
    showError(error, null);
    const body = Object.fromEntries(Object.entries(pick).map(([k, el]) => [k, el.value || null]));
    try {
      await api.put('/user-settings', body);
      for (const el of Object.values(pick)) delete el.dataset.picked; // saved: the server's now
      toast(t('common.saved'));
      await showEmbedding();
    } catch (err) {
      showError(error, err);
    }
  }
  const inUse = h('ul', { class: 'plain', 'aria-label': t('set.inUse') });
  load();
  const form = scope.canWrite
    ? h('form', { class: 'card', onsubmit: save }, h('h2', {}, t('models.title')), whose(scope),
      h('div', { class: 'grid4' }, Object.entries(pick).map(([k, el]) => field(t(`models.${k}`), el))),
      state, error, h('div', { class: 'row' }, h('button', { type: 'submit' }, t('models.use'))))
    : h('section', { class: 'card' }, h('h2', {}, t('models.title')), whose(scope),
      h('p', { class: 'muted small' }, t('set.readOnly', { name: scope.name })), inUse, state, error);
  return { form, load };
}

function modelConfigs(changed) {
  const error = errorBox();
  const list = h('ul', { class: 'plain' });
  const f = {
    name: h('input', { required: true, maxLength: 100 }),
    provider: h('select', {}, ['openai', 'gemini', 'bedrock', 'local'].map((p) => h('option', { value: p }, p))),
    modelId: h('input', { required: true, maxLength: 200 }),
    type: h('select', {}, ['llm', 'embedding', 'rerank'].map((p) => h('option', { value: p }, p))),
    baseUrl: h('input', { type: 'url', placeholder: 'https://' }),
    apiKey: h('input', { type: 'password', autocomplete: 'off' }),
  };
  let editing = null; // the config being edited, or null to add one
  const submit = h('button', { type: 'submit' }, t('mc.add'));
  const cancel = h('button', { type: 'button', class: 'secondary', hidden: true, onclick: () => edit(null) }, t('common.cancel'));
  function edit(config) {
    editing = config;
    for (const [k, el] of Object.entries(f)) el.value = config && k !== 'apiKey' ? config[k] ?? '' : k === 'provider' ? 'openai' : k === 'type' ? 'llm' : '';
    f.apiKey.placeholder = config && config.hasApiKey ? t('mc.keepKey') : '';
    submit.textContent = config ? t('common.save') : t('mc.add');
    cancel.hidden = !config;
    if (config) f.name.focus();
  }
  async function refresh() {
    try {
      const configs = await api.get('/model-configs');
      clear(list, configs.length ? configs.map((c) => h('li', { class: 'row spread' },
        h('span', {}, h('strong', {}, c.name), ` ${c.provider} · ${c.modelId} · ${c.type}`, c.hasApiKey ? h('span', { class: 'tag' }, t('mc.hasKey')) : null),
        h('span', { class: 'row' },
          h('button', { type: 'button', class: 'ghost', 'aria-label': `${t('common.edit')} ${c.name}`, onclick: () => edit(c) }, t('common.edit')),
          h('button', { type: 'button', class: 'ghost danger', 'aria-label': `${t('common.delete')} ${c.name}`, onclick: async () => {
            await api.del(`/model-configs/${c.id}`).catch((err) => showError(error, err));
            if (editing && editing.id === c.id) edit(null);
            refresh();
            changed();
          } }, t('common.delete'))))) : h('li', { class: 'muted' }, t('mc.none')));
    } catch (err) {
      showError(error, err);
    }
  }
  async function create(e) {
    e.preventDefault();
    showError(error, null);
    const body = Object.fromEntries(Object.entries(f).map(([k, el]) => [k, el.value.trim() || null]));
    try {
      if (editing) {
        if (!body.apiKey) delete body.apiKey; // left empty: keep the stored key
        await api.put(`/model-configs/${editing.id}`, body);
      } else {
        await api.post('/model-configs', body);
      }
      edit(null); // clears the form, the key included: write-only, never shown again
      refresh();
      changed();
    } catch (err) {
      showError(error, err);
    }
  }
  refresh();
  return h('form', { class: 'card', onsubmit: create }, h('h2', {}, t('mc.title')), whose({ name: session.library()?.name }), list,
    h('div', { class: 'grid4' }, Object.entries(f).map(([k, el]) => field(t(`mc.${k}`), el))),
    error, h('div', { class: 'row' }, submit, cancel));
}

function apiKeys(scope) {
  const error = errorBox();
  const list = h('ul', { class: 'plain' });
  const shown = h('div', { class: 'once', hidden: true });
  const name = h('input', { maxLength: 100, name: 'keyName' });
  // A viewer may make a key with their own rights there, kb:read, and nothing more.
  const offered = scope.canWrite ? ['kb:read', 'kb:write', 'agent:research'] : ['kb:read'];
  const scopes = offered.map((s) => h('input', { type: 'checkbox', value: s, checked: s === 'kb:read', disabled: !scope.canWrite }));
  async function refresh() {
    if (!scope.canWrite) return clear(list); // listing keys is the editors' and owners'
    try {
      const keys = await api.get('/api-keys');
      const live = keys.filter((k) => !k.revokedAt);
      clear(list, live.length ? live.map((k) => h('li', { class: 'row spread' },
        h('span', {}, h('strong', {}, k.name || k.prefix), ` ${k.prefix}… · ${k.scopes.join(', ')}`),
        h('button', { type: 'button', class: 'ghost danger', 'aria-label': `${t('key.revoke')} ${k.name || k.prefix}`, onclick: async () => {
          await api.del(`/api-keys/${k.id}`).catch((err) => showError(error, err));
          refresh();
        } }, t('key.revoke')))) : h('li', { class: 'muted' }, t('key.none')));
    } catch (err) {
      showError(error, err);
    }
  }
  async function create(e) {
    e.preventDefault();
    showError(error, null);
    try {
      const key = await api.post('/api-keys', { name: name.value, scopes: scopes.filter((c) => c.checked).map((c) => c.value) });
      const secret = h('input', { readOnly: true, value: key.key, 'aria-label': t('key.secret'), class: 'mono' });
      const copy = h('button', { type: 'button', onclick: () => navigator.clipboard?.writeText(key.key).then(() => toast(t('key.copied'))) }, t('key.copy'));
      clear(shown, h('p', { class: 'warn' }, t('key.once')), h('div', { class: 'row' }, secret, copy), agentSnippets(key.key, location.origin));
      shown.hidden = false;
      name.value = '';
      refresh();
    } catch (err) {
      showError(error, err);
    }
  }
  refresh();
  return h('form', { class: 'card', onsubmit: create }, h('h2', {}, t('key.title')), whose(scope),
    scope.canWrite ? null : h('p', { class: 'muted small' }, t('key.readOnly', { name: scope.name })), list,
    h('div', { class: 'grid4' }, field(t('key.name'), name),
      h('fieldset', {}, h('legend', {}, t('key.scopes')), scopes.map((c) => h('label', { class: 'check' }, c, c.value)))),
    error, h('div', { class: 'row' }, h('button', { type: 'submit' }, t('key.create'))), shown);
}
