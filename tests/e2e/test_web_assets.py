"""The web app's files as the real server sends them (http/web.py): from memory, each with
its type, an ETag a browser revalidates with (304), HEAD, and nothing outside the package's
static folder, whatever the path says."""

from __future__ import annotations

import posixpath
import re
from pathlib import PurePosixPath

import httpx
import pytest

from bunko.http.web import STATIC
from tests.e2e.rest_harness import serve


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("web-assets") / "data") as rest:
        yield rest.url


def test_assets_carry_their_type_and_revalidate_by_etag(url):
    with httpx.Client(base_url=url) as client:
        page = client.get("/")
        assert page.headers["content-type"].startswith("text/html")
        assert page.headers["cache-control"] == "no-cache"
        assert page.content == (STATIC / "index.html").read_bytes()
        for path, kind in [
            ("/static/js/main.js", "text/javascript; charset=utf-8"),
            ("/static/app.css", "text/css; charset=utf-8"),
            ("/static/icon.svg", "image/svg+xml"),
        ]:
            sent = client.get(path)
            assert sent.status_code == 200 and sent.headers["content-type"] == kind, path
            assert sent.content == (STATIC / path.removeprefix("/static/")).read_bytes()
            assert sent.headers["x-content-type-options"] == "nosniff"  # the hardening's
            again = client.get(path, headers={"If-None-Match": sent.headers["etag"]})
            assert again.status_code == 304 and again.content == b""
            stale = client.get(path, headers={"If-None-Match": '"other"'})
            assert stale.status_code == 200
            head = client.head(path)
            assert head.status_code == 200 and head.content == b""
            assert head.headers["content-length"] == str(len(sent.content))
        assert client.post("/static/js/main.js").status_code == 405


@pytest.mark.parametrize(
    "path",
    [
        "/static/../pyproject.toml",
        "/static/%2e%2e/%2e%2e/web/__init__.py",
        "/static/..%2f__init__.py",
        "/static/js/",
        "/static/nothing.js",
        "/static//etc/passwd",
    ],
)
def test_nothing_outside_the_static_folder(url, path):
    with httpx.Client(base_url=url) as client:
        answer = client.get(httpx.URL(url + path))
        assert answer.status_code == 404, (path, answer.status_code)


def first_screen_files() -> tuple[set[str], set[str]]:
    """(the module graph main.js imports statically, closed over its imports; the files
    index.html names: stylesheets, the entry and its preloads), as paths under static/."""
    static_import = re.compile(r"^import\b[^'\"]*['\"](\.{1,2}/[^'\"]+)['\"];", re.M)
    graph, todo = set(), ["js/main.js"]
    while todo:
        path = todo.pop()
        if path in graph:
            continue
        graph.add(path)
        text = (STATIC / path).read_text(encoding="utf-8")
        base = PurePosixPath(path).parent
        for target in static_import.findall(text):
            todo.append(posixpath.normpath(str(base / target)))
    named = set(re.findall(r'(?:href|src)="/static/([^"]+\.(?:js|css))"', index_html()))
    return graph, named


def index_html() -> str:
    return (STATIC / "index.html").read_text(encoding="utf-8")


def test_the_sign_in_screen_fetches_six_files_named_up_front_within_60_kb():
    """Chromium opens six connections to a host: the first screen's stylesheet and its whole
    static module graph, all named in index.html (no module found only once another has
    arrived), fit in one round of six requests and the issue 49 budget."""
    graph, named = first_screen_files()
    assert graph <= named, graph - named  # every module the first screen runs is preloaded
    assert named == graph | {"app.css"}  # and nothing else is fetched before it
    assert len(named) <= 6, sorted(named)
    assert sum(len((STATIC / p).read_bytes()) for p in named) <= 60 * 1024
