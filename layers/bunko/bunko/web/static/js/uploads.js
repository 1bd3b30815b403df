// Uploads (the library page's): one file with progress through POST /upload, or straight to
// storage through POST /uploads/presign. Loaded with the library page, not the first screen.
import { ApiError, headers, messageOf, post, retryAfterOf, settings } from './api.js';

// Upload one file with progress (fetch cannot report upload progress; XHR can). `fields` are
// /upload's form fields (chunkSize, chunkOverlap, mode, category, metadata as JSON text).
// Resolves with the file's record from POST /upload, or, for a file sent straight to storage, with
// {direct: true, path, key}: the file is indexed once storage reports it, and shows up in
// GET /knowledge-bases from then on.
export async function upload(file, fields, onProgress) {
  const { base, presignAbove } = await settings();
  if (presignAbove !== null && file.size > presignAbove) {
    try {
      return await uploadDirect(file, fields, onProgress);
    } catch (err) {
      // a server that cannot sign uploads (404: not mounted, 503: no signer) takes the form
      if (!(err instanceof NoSigner)) throw err;
    }
  }
  return uploadForm(base, file, fields, onProgress);
}

function uploadForm(base, file, fields, onProgress) {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    form.append('file', file);
    for (const [k, v] of Object.entries(fields)) if (v !== '' && v != null) form.append(k, v);
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${base}/upload`);
    for (const [name, value] of Object.entries(headers())) xhr.setRequestHeader(name, value);
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
      // X-Bunko-Existing: the library held these very bytes under this name already
      if (xhr.status >= 200 && xhr.status < 300) resolve(body && xhr.getResponseHeader('X-Bunko-Existing') ? { ...body, existing: true } : body);
      else reject(new ApiError(xhr.status, messageOf(body, xhr.status), null, '', retryAfterOf(xhr.getResponseHeader('Retry-After'))));
    });
    xhr.addEventListener('error', () => reject(new ApiError(0, 'network error')));
    xhr.send(form);
  });
}

const NUMBER_FIELDS = new Set(['chunkSize', 'chunkOverlap']);

class NoSigner extends Error {}

// POST /uploads/presign with the upload's options (signed into the URL, applied at ingest),
// then PUT the file to storage with exactly the signed headers and no Authorization header.
async function uploadDirect(file, fields, onProgress) {
  const body = { path: file.name, size: file.size };
  if (file.type) body.contentType = file.type;
  for (const [k, v] of Object.entries(fields)) {
    if (v === '' || v == null) continue;
    // metadata goes as the JSON object /uploads/presign takes (written ahead as its sidecar);
    // numbers as JSON numbers; anything else as typed, for the server to name the field
    if (k === 'metadata') body.metadata = JSON.parse(v);
    else body[k] = NUMBER_FIELDS.has(k) && /^\d+$/.test(String(v)) ? Number(v) : v;
  }
  let signed;
  try {
    signed = await post('/uploads/presign', body);
  } catch (err) {
    if (err.status === 404 || err.status === 503) throw new NoSigner();
    throw err;
  }
  await putToStorage(file, signed, onProgress);
  return { direct: true, path: signed.path, key: signed.key };
}

// An archive to import (Settings): where a request's body cannot hold it (config's
// presignUploadsAbove, on AWS), PUT to storage first through POST /libraries/import/upload.
// Resolves with the upload's name for POST /libraries/import, or null: send it as the form's
// file (a smaller archive, or a server that takes every archive in the request).
export async function archiveUpload(file, onProgress = () => {}) {
  const { presignAbove } = await settings();
  if (presignAbove === null || file.size <= presignAbove) return null;
  let signed;
  try {
    signed = await post('/libraries/import/upload', { size: file.size });
  } catch (err) {
    if (err.status === 404 || err.status === 503) return null; // not mounted here
    throw err;
  }
  await putToStorage(file, signed, onProgress);
  return signed.upload;
}

function putToStorage(file, signed, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(signed.method || 'PUT', signed.url);
    for (const [k, v] of Object.entries(signed.headers || {})) xhr.setRequestHeader(k, v);
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    });
    xhr.addEventListener('load', () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve();
      else reject(storageError(xhr.status, xhr.responseText));
    });
    // A browser hides why a cross-origin request failed: a bucket whose CORS rules do not
    // list this page's origin looks exactly like a network failure (status 0).
    xhr.addEventListener('error', () => reject(new ApiError(0,
      `storage did not accept the upload from ${location.origin}: the bucket's CORS rules may `
      + 'not allow this origin (an administrator adds it with bunko:corsOrigins), or the '
      + 'network failed', 'blocked', location.origin)));
    xhr.addEventListener('abort', () => reject(new ApiError(0, 'upload cancelled', 'aborted')));
    xhr.send(file);
  });
}

// S3 answers errors as XML: <Error><Code>…</Code><Message>…</Message></Error>.
function storageError(status, text) {
  let code = '';
  let detail = '';
  try {
    const xml = new DOMParser().parseFromString(text || '', 'application/xml');
    code = xml.querySelector('Error > Code')?.textContent.trim() || '';
    detail = (xml.querySelector('Error > Message')?.textContent.trim() || '').replace(/\.$/, '');
  } catch {
    // not XML: the status says enough
  }
  const said = [code, detail].filter(Boolean).join(': ') || `HTTP ${status}`;
  if (code === 'SignatureDoesNotMatch') {
    return new ApiError(status, `storage refused the upload's signature (${said}): the signed `
      + 'headers were changed on the way (a proxy or an extension?); upload the file again',
    'signature', said);
  }
  if (/expired/i.test(detail) || code === 'ExpiredToken') {
    return new ApiError(status, `the upload link expired before the file was sent (${said}); `
      + 'upload the file again', 'expired', said);
  }
  if (code === 'EntityTooLarge') {
    return new ApiError(status, `storage refused the file as too large (${said})`, 'tooLarge', said);
  }
  if (status === 403) {
    return new ApiError(status, `storage refused the upload (${said}): the server may not be `
      + 'allowed to write to its bucket; tell an administrator', 'denied', said);
  }
  return new ApiError(status, `storage refused the upload (${said})`, 'storage', said);
}

