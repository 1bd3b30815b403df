"""Test a source's connection before (or without) a sync: one request to its place, through the
outbound guard its syncs pass, saying whether the place answers as its kind expects. Nothing
is written or kept.

- a website: a GET of its start URL (or sitemap); a redirect is told, not followed (one off
  the site is not ok: a sync does not follow it);
- a Git repository over http(s): a GET of `info/refs?service=git-upload-pack`, the first
  request of Git's HTTP protocol (smart and dumb servers both answer it), which lists the
  repository's branches: is the source's branch among them;
- Confluence, SharePoint/OneDrive, Google Drive: with the credential given to the test (never
  kept, never in the answer), the request their sync starts from, through the connector's own
  ApiClient: Confluence Cloud's space lookup (REST v2 `spaces?keys=`), Data Center's space
  listing (REST v1, one page); Graph's drive (or folder item) GET; Drive's files.get of the
  folder. A credential to exchange for a token first (SharePoint's client credentials, a Google
  service account's key) costs that exchange too (tokens.py): two requests, as the message says.
  A throttled answer is not waited out (a test asks once).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from bunko.errors import BunkoError, UpstreamError
from bunko.ports.sources import WebAnswer, WebFetcher
from bunko.services.sources.api import ApiClient, CredentialRejected
from bunko.services.sources.confluence_api import auth_headers, edition_of, site_base
from bunko.services.sources.gdrive import FOLDER, rate_limited
from bunko.services.sources.records import ConnectionCheck, SyncReport
from bunko.services.sources.tokens import access_token
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


# -- the services read with a credential ----------------------------------------------------

_WHAT = {"confluence": "space", "sharepoint": "drive", "gdrive": "folder"}
_NOT_FOUND = (400, 404, 410)  # Graph answers 400 to a malformed drive or item id


def check_service(
    kind: str,
    settings: dict[str, Any],
    credential: str | None,
    fetcher: WebFetcher,
    *,
    allow_private: bool,
) -> ConnectionCheck:
    """Whether a Confluence space, a SharePoint drive (or folder) or a Drive folder answers to
    `credential` as its sync needs; the answer never holds the credential."""
    url = settings["url"]
    if credential is None and kind != "confluence":  # a Confluence space may be open to anyone
        return ConnectionCheck(
            False, f"no credential given: a {kind} source is read with one; nothing asked", url=url
        )
    report = SyncReport()
    try:
        if kind == "confluence":
            found = _confluence(settings, credential, fetcher, report, allow_private)
        else:
            assert credential is not None
            found = _drive(kind, settings, credential, fetcher, report, allow_private)
    except CredentialRejected as exc:
        if report.requests == 0:  # refused before any request: the credential's own shape
            said = f"the credential is not usable: {exc}; nothing asked"
        elif credential is None:
            said = f"the site refused an anonymous visitor: give a credential ({exc})"
        else:
            said = f"credential rejected: {exc}"
        found = ConnectionCheck(False, said, exc.http_status, url)
    except BunkoError as exc:
        found = ConnectionCheck(False, f"no answer: {exc}", url=url)
    if report.requests > 1:
        found.message += f" ({report.requests} requests: the token exchange, then the check)"
    found.message = _without(found.message, credential)
    return found


def _without(message: str, credential: str | None) -> str:
    """The message with no part of the credential in it (a service may quote what it got)."""
    if not credential:
        return message
    secrets = [credential.strip()]
    try:
        parsed = json.loads(credential)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        secrets += [v for v in parsed.values() if isinstance(v, str)]
    if ":" in credential:
        secrets += credential.split(":", 1)
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 6:
            message = message.replace(secret, "[credential]")
    return message


def _client(
    fetcher: WebFetcher,
    report: SyncReport,
    allow_private: bool,
    headers: dict[str, str],
    limited: Callable[[WebAnswer], bool] | None = None,
) -> ApiClient:
    # retries=0: one request, a throttled answer told rather than waited out
    return ApiClient(
        fetcher,
        report,
        allow_private=allow_private,
        headers=headers,
        retries=0,
        rate_limited=limited,
    )


def _get_json(client: ApiClient, url: str) -> tuple[int, dict[str, Any]]:
    answer = client.get(
        url, max_bytes=5_000_000, headers={"Accept": "application/json"}, accept=_NOT_FOUND
    )
    try:
        body = json.loads(answer.body)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        if answer.status in _NOT_FOUND:
            return answer.status, {}
        raise UpstreamError(f"{url} answered {answer.status}, not a JSON object")
    return answer.status, body


def _confluence(
    settings: dict[str, Any],
    credential: str | None,
    fetcher: WebFetcher,
    report: SyncReport,
    allow_private: bool,
) -> ConnectionCheck:
    edition = settings.get("edition") or edition_of(settings["url"])
    base = site_base(settings["url"], edition)
    space = settings["space"]
    key = quote(space, safe="~")
    client = _client(fetcher, report, allow_private, auth_headers(credential))
    if edition == "cloud":
        url = f"{base}/api/v2/spaces?keys={key}"
        status, body = _get_json(client, url)
        results = body.get("results") if status == 200 else None
        named = [s for s in results or [] if isinstance(s, dict) and s.get("key") == space]
        if named:
            title = named[0].get("name") or space
            return ConnectionCheck(True, f"Confluence Cloud: space {space} ({title})", status, url)
        if status == 200:
            return ConnectionCheck(
                False, f"space {space} not found: no such space this credential sees", status, url
            )
        return ConnectionCheck(
            False, f"answered {status}: not Confluence Cloud's REST v2 here", status, url
        )
    # Data Center: the space's listing the sync reads, one page of one page.
    url = f"{base}/rest/api/space/{key}/content/page?limit=1"
    status, body = _get_json(client, url)
    if status == 200 and isinstance(body.get("results"), list):
        return ConnectionCheck(True, f"Confluence Data Center: space {space} answers", status, url)
    said = f"space {space} not found: no such space this credential sees"
    if status in _NOT_FOUND and credential is not None and ":" not in credential:
        # CONFSERVER-98199: Data Center serves a wrong or expired personal access token as an
        # anonymous visitor, who sees no space; the same answer as a wrong space key.
        said += (
            " (or the personal access token is wrong or expired: Data Center then answers"
            " as to an anonymous visitor)"
        )
    elif status not in _NOT_FOUND:
        said = f"answered {status}: not Confluence Data Center's REST API here"
    return ConnectionCheck(False, said, status, url)


def _drive(
    kind: str,
    settings: dict[str, Any],
    credential: str,
    fetcher: WebFetcher,
    report: SyncReport,
    allow_private: bool,
) -> ConnectionCheck:
    token = access_token(kind, credential, settings, fetcher, report, allow_private=allow_private)
    limited = rate_limited if kind == "gdrive" else None
    client = _client(fetcher, report, allow_private, {"Authorization": f"Bearer {token}"}, limited)
    base = settings["url"].rstrip("/")
    if kind == "sharepoint":
        url = f"{base}/drives/{quote(settings['drive_id'], safe='!')}"
        item = settings.get("item_id")
        if item:
            url += f"/items/{quote(item, safe='!')}"
        status, body = _get_json(client, url)
        if status in _NOT_FOUND:
            what = f"folder {item} in drive {settings['drive_id']}" if item else "drive"
            name = "" if item else f" {settings['drive_id']}"
            said = f"{what}{name} not found (or not visible to the credential)"
            return ConnectionCheck(False, said, status, url)
        if item and "folder" not in body:
            return ConnectionCheck(False, f"item {item} is not a folder", status, url)
        shape = "folder" if item else f"drive ({body.get('driveType', 'drive')})"
        return ConnectionCheck(True, f"{shape} {body.get('name') or ''}".strip(), status, url)
    folder = settings["folder_id"]
    fields = "fields=id,name,mimeType,trashed&supportsAllDrives=true"
    url = f"{base}/drive/v3/files/{quote(folder, safe='')}?{fields}"
    status, body = _get_json(client, url)
    if status in _NOT_FOUND:
        said = f"folder {folder} not found (or not shared with the credential)"
        return ConnectionCheck(False, said, status, url)
    if body.get("mimeType") != FOLDER:
        return ConnectionCheck(False, f"{folder} is not a folder", status, url)
    if body.get("trashed"):
        return ConnectionCheck(False, f"folder {folder} is in the trash", status, url)
    return ConnectionCheck(True, f"folder {body.get('name') or folder}", status, url)
