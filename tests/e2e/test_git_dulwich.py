"""The Git port read with dulwich (bunko/adapters/git_dulwich.py), against a real repository
served over Git's smart HTTP protocol on a local socket: each request passes the guard, a
second fetch asks only for what changed, and a fetch stops at its bounds (bytes, time) with
the copies kept within theirs (other copies go first, least recently fetched first); behind
the proxy the environment names, the fetch goes through it, and the guard still checks the
remote's URLs."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bunko.adapters.git_dulwich import DulwichRepos
from bunko.errors import UpstreamError, ValidationError
from tests.e2e.forward_proxy import forward_proxy
from tests.e2e.git_repo import Repo
from tests.e2e.git_smart_http import SmartGitOverHttp
from tests.self_signed_https import self_signed_https


@pytest.fixture
def pages_over_smart_http(tmp_path: Path):
    repo = Repo(tmp_path / "repo")
    for n in range(40):
        # varied text, so the pack does not compress to nothing
        repo.write(f"docs/page{n}.md", "".join(f"line {n * 997 + i * 31}\n" for i in range(300)))
    repo.commit("first")
    s = SmartGitOverHttp(repo, tmp_path / "served")
    yield s
    s.close()


def _repos(root: Path, guarded: list[str] | None = None, **bounds: float) -> DulwichRepos:
    def guard(url: str, allow_private: bool) -> str:
        if guarded is not None:
            guarded.append(url)
        return url

    limits = {"max_fetch_bytes": 1 << 30, "max_disk_bytes": 1 << 31, **bounds}
    return DulwichRepos(root, guard, local_paths=False, **limits)  # type: ignore[arg-type]


def _guard_refusing_the_pack(url: str, allow_private: bool) -> str:
    """An outbound guard that lets the refs through and refuses the pack's request."""
    if "git-upload-pack" in url and "info/refs" not in url:
        raise ValidationError("source: refused by the guard")
    return url


def _refusing_the_pack(tmp_path) -> DulwichRepos:
    """Remote copies fetched through `_guard_refusing_the_pack`, remote URLs only."""
    return DulwichRepos(
        tmp_path / "copies",
        _guard_refusing_the_pack,
        local_paths=False,
        max_fetch_bytes=1 << 30,
        max_disk_bytes=1 << 31,
    )


def test_every_request_is_guarded_and_a_second_fetch_brings_only_what_changed(
    tmp_path, pages_over_smart_http
):
    served = pages_over_smart_http
    guarded: list[str] = []
    repos = _repos(tmp_path / "copies", guarded)
    first = repos.fetch("k", served.url, "main", allow_private=True)
    asked = [served.url + path.removeprefix("/served.git") for _, path, _ in served.log]
    assert asked and set(asked) <= set(guarded)
    assert len(repos.tree("k", first)) == 40
    full = served.bytes_served

    served.repo.write("docs/page0.md", "changed\n")
    served.repo.commit("second")
    served.update()
    before = len(served.log)
    second = repos.fetch("k", served.url, "main", allow_private=True)
    again = sum(n for _, _, n in served.log[before:])
    assert again * 5 < full, (again, full)  # one blob, two trees, a commit
    assert [(c.status, c.path) for c in repos.diff("k", first, second)] == [("M", "docs/page0.md")]


def test_a_fetch_stops_at_its_byte_bound_and_keeps_no_half_copy(tmp_path, pages_over_smart_http):
    served = pages_over_smart_http
    repos = _repos(tmp_path / "copies", max_fetch_bytes=2_000)
    with pytest.raises(UpstreamError, match="passed 2,000 bytes"):
        repos.fetch("k", served.url, "main", allow_private=True)
    assert not list((tmp_path / "copies" / "k.git" / "objects" / "pack").glob("*.pack"))


def test_a_fetch_stops_at_its_time_bound_or_the_sync_s(tmp_path, pages_over_smart_http):
    served = pages_over_smart_http
    repos = _repos(tmp_path / "copies", max_fetch_seconds=0)
    with pytest.raises(UpstreamError, match="took over 0 s"):
        repos.fetch("k", served.url, "main", allow_private=True)
    # The sync's own time left (on AWS: the invocation's) bounds it too.
    with pytest.raises(UpstreamError, match="took over 0 s"):
        _repos(tmp_path / "other").fetch(
            "k", served.url, "main", allow_private=True, max_seconds=-3
        )


def test_the_copies_stay_within_their_disk_bound(tmp_path, pages_over_smart_http):
    served = pages_over_smart_http
    root = tmp_path / "copies"
    roomy = _repos(root)
    for key in ("old", "recent"):
        roomy.fetch(key, served.url, "main", allow_private=True)
    os.utime(root / "old.git", (1, 1))  # fetched long ago
    one = sum(f.stat().st_size for f in (root / "recent.git").rglob("*") if f.is_file())
    # Short of room for both copies and a fetch (of at most two copies' bytes): the least
    # recently fetched goes first.
    tight = _repos(root, max_fetch_bytes=2 * one, max_disk_bytes=4 * one - 1)
    tight.fetch("new", served.url, "main", allow_private=True)
    assert sorted(p.name for p in root.iterdir()) == ["new.git", "recent.git"]
    # A bound smaller than one copy: the fetch is refused, not the disk filled.
    with pytest.raises(UpstreamError, match="kept for Git copies"):
        _repos(root, max_fetch_bytes=one, max_disk_bytes=one // 2).fetch(
            "new", served.url, "main", allow_private=True
        )


def test_a_refusing_guard_stops_the_fetch_and_local_paths_are_refused_here(
    tmp_path, pages_over_smart_http
):
    served = pages_over_smart_http

    repos = _refusing_the_pack(tmp_path)
    with pytest.raises(ValidationError, match="refused by the guard"):
        repos.fetch("k", served.url, "main", allow_private=True)
    assert all("info/refs" in path for _, path, _ in served.log)  # the pack was never asked
    for remote in (str(served.repo.root), "file://" + str(served.repo.root)):
        with pytest.raises(ValidationError, match="only https"):
            repos.fetch("k", remote, "main", allow_private=True)


def test_a_fetch_goes_through_the_proxy_the_environment_names(
    tmp_path, pages_over_smart_http, monkeypatch
):
    with forward_proxy(monkeypatch) as proxy:
        served = pages_over_smart_http
        monkeypatch.setenv("HTTP_PROXY", f"http://bunko:s%40cret@{urlsplit(proxy.url).netloc}")
        guarded: list[str] = []
        repos = _repos(tmp_path / "copies", guarded)
        head = repos.fetch("k", served.url, "main", allow_private=True)
        assert len(repos.tree("k", head)) == 40
        through = [url for _, url, _ in proxy.log]
        assert any(url.endswith("/git-upload-pack") for url in through), through
        assert len(through) == len(served.log)  # every request went through it
        assert set(through) <= set(guarded)  # the guard saw each one's target, not the proxy
        login = "Basic " + base64.b64encode(b"bunko:s@cret").decode()
        assert {auth for _, _, auth in proxy.log} == {login}

        # A host NO_PROXY lists is fetched directly.
        monkeypatch.setenv("NO_PROXY", "example.org, 127.0.0.1")
        served.repo.write("docs/page0.md", "changed\n")
        served.repo.commit("second")
        served.update()
        asked = len(served.log)
        repos.fetch("k", served.url, "main", allow_private=True)
        assert len(served.log) > asked and len(proxy.log) == len(through)


def test_behind_a_proxy_the_guard_still_checks_each_target(
    tmp_path, pages_over_smart_http, monkeypatch
):
    with forward_proxy(monkeypatch) as proxy:
        served = pages_over_smart_http
        monkeypatch.setenv("http_proxy", proxy.url)

        repos = _refusing_the_pack(tmp_path)
        with pytest.raises(ValidationError, match="refused by the guard"):
            repos.fetch("k", served.url, "main", allow_private=True)
        assert proxy.log and all("info/refs" in url for _, url, _ in proxy.log)
        assert all(url.startswith(served.url) for _, url, _ in proxy.log)


def test_an_https_remote_behind_a_proxy_is_tunnelled_and_its_certificate_checked(
    tmp_path, monkeypatch
):
    """Behind HTTPS_PROXY an https remote is reached through the proxy's CONNECT tunnel, and
    TLS runs end to end: a remote whose certificate no CA signed is refused."""
    with forward_proxy(monkeypatch) as proxy, self_signed_https(tmp_path) as url:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        with pytest.raises(UpstreamError, match="CERTIFICATE_VERIFY_FAILED"):
            _repos(tmp_path / "copies").fetch("k", url + "served.git", "main", allow_private=True)
        target = url.removeprefix("https://").rstrip("/")
        assert proxy.log and {(method, where) for method, where, _ in proxy.log} == {
            ("CONNECT", target)
        }
