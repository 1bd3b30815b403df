"""Test a source's connection before (or without) a sync: one request to its place, through the
outbound guard its syncs pass, saying whether the place answers as its kind expects. Nothing
is written or kept.

- a website: a GET of its start URL (or sitemap); a redirect is told, not followed (one off
  the site is not ok: a sync does not follow it);
- a Git repository over http(s): a GET of `info/refs?service=git-upload-pack`, the first
  request of Git's HTTP protocol (smart and dumb servers both answer it), which lists the
  repository's branches: is the source's branch among them.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

from bunko.errors import UpstreamError
from bunko.ports.sources import WebFetcher
from bunko.services.sources.records import ConnectionCheck
from bunko.services.sources.web import same_site

_REFS_BYTES = 20_000_000  # a repository with very many refs lists them all


def check_web(
    fetcher: WebFetcher, url: str, *, allow_private: bool, max_bytes: int
) -> ConnectionCheck:
    try:
        answer = fetcher.get(url, {}, max_bytes=max_bytes, allow_private=allow_private)
    except UpstreamError as exc:
        return ConnectionCheck(False, f"no answer: {exc}", url=url)
    if answer.status in (301, 302, 303, 307, 308) and "location" in answer.headers:
        target = urljoin(url, answer.headers["location"])
        start = urlsplit(url)
        if not same_site(target, (start.scheme, start.netloc.lower())):  # a sync stops there
            said = f"answered {answer.status}: it redirects off the site, to {target}"
            return ConnectionCheck(False, said, answer.status, url)
        return ConnectionCheck(
            True, f"answered {answer.status}: it redirects to {target}", answer.status, url
        )
    if 200 <= answer.status < 300:
        kind = answer.headers.get("content-type", "").split(";")[0].strip() or "no type"
        return ConnectionCheck(
            True,
            f"answered {answer.status} ({kind}, {len(answer.body):,} bytes)",
            answer.status,
            url,
        )
    return ConnectionCheck(False, f"answered {answer.status}", answer.status, url)


def check_git_http(
    fetcher: WebFetcher, url: str, branch: str, *, allow_private: bool
) -> ConnectionCheck:
    refs = url.rstrip("/") + "/info/refs?service=git-upload-pack"
    try:
        answer = fetcher.get(refs, {}, max_bytes=_REFS_BYTES, allow_private=allow_private)
    except UpstreamError as exc:
        return ConnectionCheck(False, f"no answer: {exc}", url=url)
    if answer.status != 200:
        why = (
            "a password or token is needed"
            if answer.status in (401, 403)
            else "not a Git repository there"
        )
        return ConnectionCheck(False, f"answered {answer.status}: {why}", answer.status, url)
    heads = _branches(answer.body)
    if heads is None:
        return ConnectionCheck(False, "answered, but not as a Git repository does", 200, url)
    if branch in heads:
        return ConnectionCheck(
            True, f"a Git repository; branch {branch} is at {heads[branch][:12]}", 200, url
        )
    listed = ", ".join(sorted(heads)[:10]) or "none"
    return ConnectionCheck(
        False, f"a Git repository without the branch {branch} (branches: {listed})", 200, url
    )


def _branches(body: bytes) -> dict[str, str] | None:
    """branch → commit id from an info/refs answer: the smart protocol's pkt-lines, or the
    dumb protocol's `<id>\\t<ref>` lines; None when it is neither."""
    text = body.decode("utf-8", "replace")
    heads: dict[str, str] = {}
    smart = text.startswith("001e# service=git-upload-pack")
    for line in text.split("\n"):
        if smart:
            line = line[4:] if line.startswith("0000") else line  # the flush before the refs
            line = line[4:]  # the pkt-line's length
        ref_id, _, ref = line.partition(" " if smart else "\t")
        ref = ref.split("\0", 1)[0].strip()
        if len(ref_id) in (40, 64) and all(c in "0123456789abcdef" for c in ref_id):
            if ref.startswith("refs/heads/"):
                heads[ref.removeprefix("refs/heads/")] = ref_id
        elif line.strip() and not smart:
            return None
    if smart or heads:
        return heads
    return None
