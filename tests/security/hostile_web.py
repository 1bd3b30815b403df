"""For tests/security/test_web_escaping.py: payloads that announce themselves if they ever run,
a hostile OpenAI-compatible model server (chat answers carrying HTML, embeddings), a Chromium
tab with the server's CSP as shipped or stripped, and the check that nothing was injected."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import numpy as np

from tests.e2e.browser import DESKTOP, Tab, sync_api


# Each payload, if it ever ran, sets window.__xss to its own number (the report names it); an
# injected <img> also asks for xss-probe-<n>, which the tab sees even when CSP stops the handler.
def img(n: int) -> str:
    return f"<img src=xss-probe-{n} onerror=window.__xss={n}>"


def svg(n: int) -> str:
    return f'"><svg onload=window.__xss={n}>'


def script(n: int) -> str:
    return f"</script><script>window.__xss={n}</script>"


# A chat model taken over by a document (prompt injection) answers in raw HTML and Markdown,
# split across stream events in the middle of its tags.
HOSTILE_ANSWER = [
    "The motto is <im", "g src=xss-probe-40 onerror=window.__xss=40> [1]. ",
    "</script><scr", "ipt>window.__xss=41</script> Read [the manual](javascript:window.__xss=42)",
    ' or <a href="javascript:window.__xss=43">here</a> [1]. ',
    '<iframe srcdoc="<script>parent.__xss=44</script>"></iframe>',
]  # fmt: skip


@contextmanager
def hostile_model_server() -> Iterator[str]:
    """An OpenAI-compatible server on loopback (its /v1 base URL): /chat/completions streams
    HOSTILE_ANSWER, /embeddings answers hashed bag-of-words vectors."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            if self.path.endswith("/embeddings"):
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [{"object": "embedding", "index": i, "embedding": _vector(t)}
                        for i, t in enumerate(texts)]  # fmt: skip
                answer = {"object": "list", "data": data, "model": body.get("model"),
                          "usage": {"prompt_tokens": 1, "total_tokens": 1}}  # fmt: skip
                payload = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for n, piece in enumerate(HOSTILE_ANSWER):
                last = n == len(HOSTILE_ANSWER) - 1
                chunk = {"id": "chatcmpl-hostile", "object": "chat.completion.chunk",
                         "created": 0, "model": body.get("model", "m"),
                         "choices": [{"index": 0, "delta": {"content": piece},
                                      "finish_reason": "stop" if last else None}]}  # fmt: skip
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _vector(text: str, size: int = 64) -> list[float]:
    v = np.zeros(size)
    for word in text.lower().split():
        v[int(hashlib.sha256(word.encode()).hexdigest(), 16) % size] += 1.0
    v[0] += 0.01  # never the zero vector
    return (v / np.linalg.norm(v)).tolist()


@dataclass
class HostileTab(Tab):
    dialogs: list[str] = field(default_factory=list)  # alert/confirm/prompt a payload opened
    probes: list[str] = field(default_factory=list)  # requests an injected element made

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        """A failed expectation inside first says whether a payload ran or was injected (an
        escaping bug shows as text missing from the page, and as this)."""
        try:
            yield
        except AssertionError:
            self.assert_clean(f"{name} (then an expectation failed)")
            raise

    def assert_clean(self, where: str) -> None:
        """No payload ran, no element or attribute came from data, and no dialog or probe."""
        ran = self.page.evaluate("window.__xss")
        assert ran is None, f"{where}: payload {ran} ran"
        injected = self.page.evaluate(INJECTED)
        assert injected == [], f"{where}: injected {injected}"
        assert self.dialogs == [], f"{where}: dialogs {self.dialogs}"
        assert self.probes == [], f"{where}: injected elements requested {self.probes}"
        blocked = [e for e in self.errors if "Content Security Policy" in e]
        assert blocked == [], f"{where}: the CSP blocked an injection: {blocked}"


# Everything in the document that data could have put there: scripts other than the app's,
# elements that load or run something (the app makes none), inline handlers, script URLs,
# links off this origin, styles and head elements that are not the app's.
INJECTED = """() => {
  const found = [];
  const URL_ATTRIBUTES = new Set(['href', 'src', 'srcset', 'action', 'formaction', 'xlink:href', 'data', 'poster', 'background', 'cite', 'ping']);
  const app = new URL('/static/js/main.js', location.href).href;
  const own = (url) => url.startsWith(new URL('/static/', location.href).href);
  for (const s of document.querySelectorAll('script')) if (s.src !== app) found.push(s.outerHTML.slice(0, 120));
  const risky = 'img, svg, math, iframe, frame, object, embed, base, style, video, audio, source, template, portal';
  for (const el of document.querySelectorAll(risky)) found.push(el.outerHTML.slice(0, 120));
  for (const el of document.querySelectorAll('link')) if (!own(el.href)) found.push(el.outerHTML.slice(0, 120));
  for (const el of document.querySelectorAll('meta')) if (!['charset', 'viewport', 'color-scheme'].some((n) => el.hasAttribute(n) || el.name === n)) found.push(el.outerHTML.slice(0, 120));
  for (const el of document.querySelectorAll('form[action], button[formaction], [srcdoc]')) found.push(el.outerHTML.slice(0, 120));
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      if (/^on/i.test(a.name)) found.push(`${el.tagName.toLowerCase()}[${a.name}]`);
      if (URL_ATTRIBUTES.has(a.name) && /^\\s*(javascript|vbscript|data):/i.test(a.value)) found.push(`${el.tagName.toLowerCase()}[${a.name}=${a.value.slice(0, 60)}]`);
    }
  }
  for (const a of document.querySelectorAll('a[href]')) if (a.origin !== location.origin) found.push(`a[href=${a.getAttribute('href').slice(0, 60)}]`);
  return found;
}"""


@contextmanager
def hostile_tab(chromium: sync_api.Browser, url: str, *, csp: bool) -> Iterator[HostileTab]:
    """A fresh context on `url`. csp=True: the server's headers as shipped; False: every
    document's Content-Security-Policy header removed, so only the app's escaping stands."""
    context = chromium.new_context(locale="en-US", viewport=DESKTOP)
    context.set_default_timeout(30_000)
    if not csp:
        context.route("**/*", _without_csp)
    page = context.new_page()
    opened = HostileTab(page)
    page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: opened.errors.append(f"uncaught: {exc}"))
    page.on("dialog", lambda d: (opened.dialogs.append(f"{d.type}: {d.message}"), d.dismiss()))
    page.on("request", lambda r: opened.probes.append(r.url) if _probe(r.url) else None)
    page.goto(url)
    try:
        yield opened
    finally:
        context.close()


def _probe(url: str) -> bool:
    """A request for …/xss-probe-<n> (an injected image), not one that names it elsewhere."""
    return urlsplit(url).path.rsplit("/", 1)[-1].startswith("xss-probe-")


def _without_csp(route) -> None:
    if route.request.resource_type != "document":
        route.continue_()  # the chat's event stream streams on, unbuffered
        return
    response = route.fetch()
    headers = {k: v for k, v in response.headers.items() if k.lower() != "content-security-policy"}
    route.fulfill(response=response, headers=headers)
