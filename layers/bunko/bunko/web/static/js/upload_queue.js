// The upload queue: files go a few at a time, and a refusal for pace is not a failure. A 429
// (or a 503 that names a Retry-After) pauses the whole queue for the time the server named
// and sends the same file again, so a folder of hundreds of files lands without a person
// retrying anything. Only real refusals (a bad type, over the quota…) end as failed.

const AT_ONCE = 4; // uploads in flight: enough to keep the server busy, few enough to be fair
const DEFAULT_WAIT_S = 5; // a 503 without Retry-After while busy: a guess, then again

// Whether an error is the server asking to slow down (and how long, in seconds), or null.
// Whether sending the same file again may help: not for a refusal of the file itself (its
// type, its size, a bad field, a name taken), only for the network or the server.
export function retryable(err) {
  return !err || !(err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429);
}

export function paceWait(err) {
  if (!err) return null;
  if (err.status === 429) return Math.max(err.retryAfter ?? DEFAULT_WAIT_S, 1);
  if (err.status === 503 && err.retryAfter != null) return Math.max(err.retryAfter, 1);
  return null;
}

// `send(item)` uploads one item (resolves with the server's answer, rejects with ApiError);
// `changed()` runs after every step, for the page to redraw its summary and rows.
// Items move queued → sending → done | failed; an item may be queued again (retry).
export function createQueue({ send, changed }) {
  const waiting = [];
  const failed = new Set();
  let sending = 0;
  let done = 0; // since the queue was last idle
  let existing = 0; // of those, files the library held already (the same bytes, the same name)
  let resumeAt = 0; // ms timestamp: no new upload leaves before it
  let timer = null;

  function add(items) {
    if (idle()) done = existing = 0; // a new batch (failures not retried yet still show)
    for (const item of items) {
      item.state = 'queued';
      waiting.push(item);
    }
    pump();
    changed();
  }

  function retryFailed() {
    const again = [...failed].filter((item) => retryable(item.error));
    for (const item of again) failed.delete(item);
    add(again);
  }

  // Take an item out: a queued one is not sent, a failed one is forgotten.
  function remove(item) {
    const at = waiting.indexOf(item); // -1 when it is not waiting: splice nothing then
    if (at !== -1) waiting.splice(at, 1);
    failed.delete(item);
    item.state = 'removed';
    changed();
  }

  function pump() {
    clearTimeout(timer);
    const pause = resumeAt - Date.now();
    if (pause > 0) {
      timer = setTimeout(() => { changed(); pump(); }, Math.min(pause, 1000)); // a countdown a second at a time
      return;
    }
    while (sending < AT_ONCE && waiting.length) start(waiting.shift());
  }

  async function start(item) {
    sending += 1;
    item.state = 'sending';
    item.error = null;
    changed();
    try {
      item.result = await send(item);
      item.state = 'done';
      done += 1;
      if (item.result && item.result.existing) existing += 1;
    } catch (err) {
      const wait = paceWait(err);
      if (wait !== null && item.state !== 'removed') {
        item.state = 'queued'; // the server's pace, not the file: wait, then the same file again
        waiting.unshift(item);
        resumeAt = Math.max(resumeAt, Date.now() + wait * 1000);
      } else if (item.state !== 'removed') {
        item.state = 'failed';
        item.error = err;
        failed.add(item);
      }
    } finally {
      sending -= 1;
      pump();
      changed();
    }
  }

  function idle() {
    return sending === 0 && waiting.length === 0;
  }

  // What the summary line says: counts since the queue was last idle, and any pause left.
  function status() {
    const waitS = Math.max(0, Math.ceil((resumeAt - Date.now()) / 1000));
    const total = done + failed.size + waiting.length + sending;
    const canRetry = [...failed].some((item) => retryable(item.error));
    return { done, existing, failed: failed.size, canRetry, total, idle: idle(), waitS: idle() ? 0 : waitS };
  }

  return { add, remove, retryFailed, status };
}
