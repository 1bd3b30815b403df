// The REST client: base URL from config.json, the bearer token, and errors as the error body's
// message ({statusCode, message, error}; a validation message is a list).
import * as session from './session.js';

let base = '';
let configured = Promise.resolve();

// Read config.json in the background: the first screen renders meanwhile, requests wait for it.
export function configure() {
  configured = fetch('config.json', { cache: 'no-cache' })
    .then((res) => (res.ok ? res.json() : {}))
    .then((config) => { base = (config.apiBaseUrl || '').replace(/\/$/, ''); })
    .catch(() => { base = ''; });
  return configured;
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function messageOf(body, status) {
  const msg = body && body.message;
  if (Array.isArray(msg)) return msg.join('; ');
  if (typeof msg === 'string' && msg) return msg;
  return `HTTP ${status}`;
}

function headers(extra = {}) {
  const t = session.token();
  return t ? { Authorization: `Bearer ${t}`, ...extra } : extra;
}

async function fail(res) {
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (res.status === 401 && session.token()) session.set(null); // expired or signed out elsewhere
  return new ApiError(res.status, messageOf(body, res.status));
}

// Requests on their way with the token, and whether the session is closing: a request that
// reached the server after the sign-out revoked its token would be answered 401.
const inFlight = new Set();
let closing = false;

async function send(method, path, body) {
  await configured;
  const init = { method, headers: headers() };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(base + path, init);
  if (!res.ok) throw await fail(res);
  return res.status === 204 ? null : res.json();
}

export async function request(method, path, body) {
  if (closing) throw new ApiError(0, 'signing out');
  const sent = send(method, path, body);
  inFlight.add(sent);
  try {
    return await sent;
  } finally {
    inFlight.delete(sent);
  }
}

// Sign out: no new request leaves (a page's poll included), the ones on their way land, then
// POST /auth/logout revokes the token. Uploads and chat streams are not waited for.
export async function logout() {
  closing = true;
  try {
    await Promise.allSettled([...inFlight]);
    await send('POST', '/auth/logout', {});
  } finally {
    session.set(null); // before any request may leave again
    closing = false;
  }
}

export const get = (path) => request('GET', path);
export const post = (path, body) => request('POST', path, body ?? {});
export const put = (path, body) => request('PUT', path, body);
export const del = (path) => request('DELETE', path);

// multipart upload with progress (fetch cannot report upload progress; XHR can).
export async function upload(file, fields, onProgress) {
  await configured;
  return new Promise((resolve, reject) => {
    const form = new FormData();
    form.append('file', file);
    for (const [k, v] of Object.entries(fields)) if (v !== '' && v != null) form.append(k, v);
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${base}/upload`);
    const t = session.token();
    if (t) xhr.setRequestHeader('Authorization', `Bearer ${t}`);
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    });
    xhr.addEventListener('load', () => {
      let body = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = null;
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body);
      else reject(new ApiError(xhr.status, messageOf(body, xhr.status)));
    });
    xhr.addEventListener('error', () => reject(new ApiError(0, 'network error')));
    xhr.send(form);
  });
}

// POST /chat/stream: calls onEvent({type, data}) per SSE event until [DONE] or abort.
export async function chatStream(body, onEvent, signal) {
  await configured;
  const res = await fetch(`${base}/chat/stream`, {
    method: 'POST',
    headers: headers({ 'Content-Type': 'application/json', Accept: 'text/event-stream' }),
    body: JSON.stringify(body),
    signal,
  });
  if (!res.ok) throw await fail(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (!data) continue; // a keep-alive comment
      if (data === '[DONE]') return;
      onEvent(JSON.parse(data));
    }
  }
}
