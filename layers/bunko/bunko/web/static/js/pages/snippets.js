// Copy-ready MCP client settings for a new key (Claude Desktop, Claude Code, Cursor, VS Code).
import { h } from '../layout.js';
import { t } from '../i18n.js';

export function agentSnippets(key, origin) {
  const url = `${origin}/mcp`;
  const auth = { Authorization: `Bearer ${key}` };
  const snippets = [
    ['Claude Desktop', JSON.stringify({ mcpServers: { bunko: { command: 'npx', args: ['-y', 'mcp-remote', url, '--header', `Authorization: Bearer ${key}`] } } }, null, 2)],
    ['Claude Code', `claude mcp add --transport http bunko ${url} --header "Authorization: Bearer ${key}"`],
    ['Cursor', JSON.stringify({ mcpServers: { bunko: { url, headers: auth } } }, null, 2)],
    ['VS Code', JSON.stringify({ servers: { bunko: { type: 'http', url, headers: auth } } }, null, 2)],
  ];
  return h('div', { class: 'snippets' }, snippets.map(([name, text]) => h('details', {},
    h('summary', {}, name),
    h('pre', { tabindex: 0, 'aria-label': `${name} ${t('key.config')}` }, h('code', {}, text)),
    h('button', { type: 'button', class: 'ghost', onclick: () => navigator.clipboard?.writeText(text) }, `${t('key.copy')} (${name})`))));
}
