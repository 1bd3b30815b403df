"""A Confluence site on a local socket for the Confluence source's tests: one space of pages
(each with a version number that edits raise, and attachments), answered in the shapes of
Atlassian's published REST API references, Cloud (REST v2, under `/wiki`) or Data Center
(REST v1, under a context path `/confluence`). Every request is logged with its status and
its Authorization header. No real Confluence was reached: these shapes are the references'.

Where each response shape comes from:

- Cloud, the Confluence Cloud REST API v2 reference (developer.atlassian.com/cloud/confluence/
  rest/v2/, its OpenAPI document "Confluence REST V2 2.0.0"):
  - `GET /wiki/api/v2/spaces?keys=KEY` (operation getSpaces): `MultiEntityResult<Space>`,
    `{"results": [Space], "_links": {}}`, a Space's `id`, `key`, `name`, `type`, `status`,
    `homepageId`.
  - `GET /wiki/api/v2/spaces/{id}/pages?status=current&limit=N&cursor=C` (getPagesInSpace,
    `limit` 1–250, default 25): `{"results": [PageBulk], "_links": {"next": ...}}`; "additional
    results (if available) will be available through the `next` URL present in the `Link`
    response header", and `_links.next` holds "the relative URL for the next set of results,
    using a cursor query parameter", absent on the last. PageBulk: `id`, `status`, `title`,
    `spaceId`, `parentId`, `parentType`, `position`, `authorId`, `ownerId`, `createdAt`,
    `version` (`createdAt`, `message`, `number`, `minorEdit`, `authorId`), `_links` (`webui`,
    `editui`, `tinyui`); no `body` unless `body-format` is asked for.
  - `GET /wiki/api/v2/pages/{id}?body-format=storage` (getPageById): PageSingle, the same
    fields and `body.storage` = `{"representation": "storage", "value": XHTML}`.
  - `GET /wiki/api/v2/pages/{id}/attachments?limit=N` (getPageAttachments, `limit` 1–250,
    default 50): Attachment: `id`, `status`, `title`, `createdAt`, `pageId`, `mediaType`,
    `mediaTypeDescription`, `comment`, `fileId`, `fileSize`, `webuiLink`, `downloadLink`,
    `version`, `_links` (`webui`, `download`), the links relative to the site's `/wiki`.
  - Errors in v2's shape `{"errors": [{"status", "code", "title", "detail"}]}`.
- Data Center, the Confluence Server/Data Center REST API (REST v1, `/rest/api`):
  - "Pagination in the REST API" (developer.atlassian.com/server/confluence/
    pagination-in-the-rest-api): `GET /rest/api/space/{spaceKey}/content/page?limit=N&start=S`
    answers `{"results", "start", "limit", "size", "_links": {"self", "next", "base",
    "context"}}`, `next` relative to `base` (which holds the context path), absent on the last.
  - "Confluence REST API examples" (developer.atlassian.com/server/confluence/
    confluence-rest-api-examples): Content `id`, `type`, `status`, `title`, `extensions`,
    `_links` (`webui` `/display/KEY/Title`, `edit`, `tinyui`, `self`), `_expandable`;
    `expand=body.storage,version` adds `body.storage` (`value`, `representation`) and
    `version` (`by`, `when`, `message`, `number`, `minorEdit`).
  - Attachments (`/rest/api/content/{id}/child/attachment`): Content of type `attachment` with
    `metadata.mediaType`, `extensions` (`mediaType`, `fileSize`, `comment`) and
    `_links.download` (`/download/attachments/{pageId}/{file}?version=…&api=v2`, relative to
    `base`), the v1 ContentArray/Content schema (the same in Cloud's REST v1 OpenAPI document).
  - `GET /rest/api/user/current`: `{"type": "known", "username", ...}`, or `"anonymous"`; a
    wrong personal access token is served as anonymous rather than refused (CONFSERVER-98199).
  - An unknown space: 404 `{"statusCode": 404, "message": "No space with key : KEY", ...}`.
- Throttling, "Rate limiting" (developer.atlassian.com/cloud/confluence/rate-limiting/): 429
  with `Retry-After` (seconds); some 503s carry `Retry-After` too.
- Credentials: Cloud takes Basic `email:API token`; Data Center a personal access token as
  `Authorization: Bearer` (confluence.atlassian.com/enterprise/using-personal-access-tokens).
  A wrong or expired one: 401 (Cloud; Data Center with Basic).
"""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass, field
from urllib.parse import parse_qs, quote, urlsplit

from tests.e2e.local_server import LocalServer

WHEN = "2026-11-30T09:00:00.000Z"


@dataclass
class Attachment:
    id: str
    title: str
    data: bytes
    media_type: str
    version: int = 1


@dataclass
class Page:
    id: str
    title: str
    body: str  # storage format (XHTML)
    version: int = 1
    parent: str | None = None
    attachments: dict[str, Attachment] = field(default_factory=dict)


class FakeConfluence(LocalServer):
    def __init__(
        self, edition: str = "cloud", *, space: str = "ENG", credential: str | None = None
    ) -> None:
        """`credential`: the one the site accepts (Cloud `email:token`, Basic; Data Center a
        token, Bearer); None: anonymous access."""
        self.edition = edition
        self.space = space
        self.space_id = "98306"
        self.context = "/wiki" if edition == "cloud" else "/confluence"
        self.pages: dict[str, Page] = {}
        self.page_size = 2  # the most a listing answers at once (servers may answer fewer)
        self.next_in_body = True  # Cloud: `_links.next` too, not only the `Link` header
        self.credential = credential
        self.throttle: list[tuple[int, str | None]] = []  # the next answers: (status, Retry-After)
        self.broken: set[str] = set()  # page ids whose body answers 500
        self.on_request = None  # called with each path before it is answered
        super().__init__()  # logs (path?query, status, Authorization)
        self.url = self.origin + self.context  # what a source is given

    # -- the test's side ------------------------------------------------------------------

    def page(self, page_id: str, title: str, body: str, *, parent: str | None = None) -> Page:
        self.pages[page_id] = Page(page_id, title, body, parent=parent)
        return self.pages[page_id]

    def edit(self, page_id: str, *, title: str | None = None, body: str | None = None) -> None:
        """A new version of the page (a title change is one too)."""
        page = self.pages[page_id]
        page.title = title if title is not None else page.title
        page.body = body if body is not None else page.body
        page.version += 1

    def attach(self, page_id: str, att_id: str, title: str, data: bytes, media_type: str) -> None:
        page = self.pages[page_id]
        known = page.attachments.get(att_id)
        version = known.version + 1 if known else 1
        page.attachments[att_id] = Attachment(att_id, title, data, media_type, version)

    # -- answers --------------------------------------------------------------------------

    def _authorized(self, given: str | None) -> bool:
        if self.credential is None:
            return True
        if self.edition == "cloud" or ":" in self.credential:
            expected = "Basic " + base64.b64encode(self.credential.encode()).decode()
        else:
            expected = f"Bearer {self.credential}"
        return given == expected

    def entry(self, path: str, status: int, headers) -> tuple[str, int, str | None]:
        return path, status, headers.get("Authorization")

    def answer(self, raw: str, headers) -> tuple[int, dict[str, str], bytes]:
        if self.on_request is not None:
            self.on_request(raw)
        if self.throttle:
            status, wait = self.throttle.pop(0)
            out = {"Content-Type": "application/json"}
            if wait is not None:
                out["Retry-After"] = wait
            return status, out, b'{"message": "Rate limit exceeded"}'
        parts = urlsplit(raw)
        path, query = parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()}
        if not path.startswith(self.context + "/"):
            return _json(404, {"message": "not found"})
        path = path.removeprefix(self.context)
        given = headers.get("Authorization")
        pat = self.edition == "datacenter" and given and given.startswith("Bearer ")
        if not self._authorized(given) and not pat:
            return (
                401,
                {"Content-Type": "application/json"},
                json.dumps(
                    {"code": 401, "message": "Unauthorized; the token is expired or revoked"}
                ).encode(),
            )
        anonymous = not self._authorized(given)  # a wrong PAT on Data Center (CONFSERVER-98199)
        if path.startswith("/download/attachments/"):
            return self._download(path)
        if self.edition == "cloud":
            return self._cloud(path, query)
        return self._datacenter(path, query, anonymous)

    def _download(self, path: str) -> tuple[int, dict[str, str], bytes]:
        _, _, _, page_id, name = path.split("/", 4)
        page = self.pages.get(page_id)
        for att in page.attachments.values() if page else []:
            if quote(att.title) == name or att.title == name:
                return 200, {"Content-Type": att.media_type}, att.data
        return 404, {"Content-Type": "text/plain"}, b"not found"

    def _window(self, items: list, query: dict[str, str], most: int) -> tuple[list, int, int]:
        limit = min(int(query.get("limit", 25)), most, self.page_size)
        if "cursor" in query:
            start = int(base64.urlsafe_b64decode(query["cursor"]).decode())
        else:
            start = int(query.get("start", 0))
        return items[start : start + limit], start, limit

    # Cloud, REST v2
    def _cloud(self, path: str, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if path == "/api/v2/spaces":
            keys = query.get("keys", "").split(",")
            found = [self._space()] if self.space in keys else []
            return _json(200, {"results": found, "_links": {}})
        if path == f"/api/v2/spaces/{self.space_id}/pages":
            pages = sorted(self.pages.values(), key=lambda p: int(p.id))
            return self._cloud_page(path, query, [self._v2_page(p) for p in pages])
        bits = path.split("/")
        if len(bits) >= 5 and bits[1:4] == ["api", "v2", "pages"]:
            page = self.pages.get(bits[4])
            if page is None:
                return _v2_error(404, "NOT_FOUND", "Not Found")
            if len(bits) == 5:
                if page.id in self.broken:
                    return _v2_error(500, "INTERNAL_SERVER_ERROR", "Internal Server Error")
                body = self._v2_page(page)
                if query.get("body-format") == "storage":
                    body["body"] = {"storage": {"representation": "storage", "value": page.body}}
                return _json(200, body)
            if bits[5:] == ["attachments"]:
                found = [self._v2_attachment(page, a) for a in page.attachments.values()]
                return self._cloud_page(path, query, found)
        return _v2_error(404, "NOT_FOUND", "Not Found")

    def _cloud_page(self, path: str, query: dict[str, str], items: list):
        window, start, limit = self._window(items, query, 250)
        links, headers = {}, {"Content-Type": "application/json"}
        if start + len(window) < len(items):
            cursor = base64.urlsafe_b64encode(str(start + len(window)).encode()).decode()
            keep = "".join(f"{k}={v}&" for k, v in query.items() if k not in ("cursor", "limit"))
            nxt = f"{self.context}{path}?{keep}limit={limit}&cursor={cursor}"
            headers["Link"] = f'<{nxt}>; rel="next"'
            if self.next_in_body:
                links["next"] = nxt
        return 200, headers, json.dumps({"results": window, "_links": links}).encode()

    def _space(self) -> dict:
        return {
            "id": self.space_id, "key": self.space, "name": "Engineering", "type": "global",
            "status": "current", "authorId": "5b10a2844c20165700ede21g", "createdAt": WHEN,
            "homepageId": min(self.pages, default=None), "_links": {"webui": f"/spaces/{self.space}"},
        }  # fmt: skip

    def _v2_page(self, page: Page) -> dict:
        return {
            "id": page.id, "status": "current", "title": page.title, "spaceId": self.space_id,
            "parentId": page.parent, "parentType": "page" if page.parent else None,
            "position": int(page.id), "authorId": "5b10a2844c20165700ede21g",
            "ownerId": "5b10a2844c20165700ede21g", "lastOwnerId": None, "createdAt": WHEN,
            "version": _v2_version(page.version),
            "_links": {
                "webui": f"/spaces/{self.space}/pages/{page.id}/{quote(page.title)}",
                "editui": f"/pages/resumedraft.action?draftId={page.id}",
                "tinyui": f"/x/{page.id}",
            },
        }  # fmt: skip

    def _v2_attachment(self, page: Page, att: Attachment) -> dict:
        download = f"/download/attachments/{page.id}/{quote(att.title)}?version={att.version}&modificationDate=1764493200000&api=v2"
        return {
            "id": att.id, "status": "current", "title": att.title, "createdAt": WHEN,
            "pageId": page.id, "mediaType": att.media_type, "mediaTypeDescription": "",
            "comment": "", "fileId": str(uuid.uuid5(uuid.NAMESPACE_URL, att.id)),
            "fileSize": len(att.data), "webuiLink": f"/pages/viewpageattachments.action?pageId={page.id}",
            "downloadLink": download, "version": _v2_version(att.version),
            "_links": {"webui": f"/pages/viewpageattachments.action?pageId={page.id}", "download": download},
        }  # fmt: skip

    # Data Center, REST v1
    def _datacenter(self, path: str, query: dict[str, str], anonymous: bool):
        if path == "/rest/api/user/current":
            if anonymous:
                return _json(200, {"type": "anonymous", "displayName": "Anonymous"})
            return _json(200, {"type": "known", "username": "sync", "userKey": "8a7f808a",
                               "displayName": "Sync robot"})  # fmt: skip
        if anonymous:  # what an anonymous visitor sees of this space: nothing
            return _json(404, {"statusCode": 404, "message": f"No space with key : {self.space}"})
        if path.startswith("/rest/api/space/") and path.endswith("/content/page"):
            key = path.split("/")[4]
            if key != self.space:
                return _json(404, {"statusCode": 404, "data": {"authorized": False, "valid": True,
                                   "errors": [], "successful": False},
                                   "message": f"No space with key : {key}", "reason": "Not Found"})  # fmt: skip
            pages = sorted(self.pages.values(), key=lambda p: int(p.id))
            return self._dc_page(path, query, [self._v1_page(p, query) for p in pages])
        bits = path.split("/")
        if len(bits) >= 5 and bits[1:4] == ["rest", "api", "content"]:
            page = self.pages.get(bits[4])
            if page is None:
                return _json(404, {"statusCode": 404, "message": "No content found with id"})
            if len(bits) == 5:
                if page.id in self.broken:
                    return _json(500, {"statusCode": 500, "message": "Internal Server Error"})
                return _json(200, self._v1_page(page, query))
            if bits[5:] == ["child", "attachment"]:
                found = [self._v1_attachment(page, a) for a in page.attachments.values()]
                return self._dc_page(path, query, found)
        return _json(404, {"statusCode": 404, "message": "not found"})

    def _dc_page(self, path: str, query: dict[str, str], items: list):
        window, start, limit = self._window(items, query, 200)
        keep = "".join(f"&{k}={v}" for k, v in query.items() if k not in ("start", "limit"))
        links = {
            "self": f"{self.url}{path}", "base": self.url, "context": self.context,
        }  # fmt: skip
        if start + len(window) < len(items):
            links["next"] = f"{path}?limit={limit}{keep}&start={start + len(window)}"
        body = {
            "results": window,
            "start": start,
            "limit": limit,
            "size": len(window),
            "_links": links,
        }
        return _json(200, body)

    def _v1_page(self, page: Page, query: dict[str, str]) -> dict:
        expand = query.get("expand", "").split(",")
        out = {
            "id": page.id, "type": "page", "status": "current", "title": page.title,
            "extensions": {"position": int(page.id)},
            "_links": {
                "webui": f"/display/{self.space}/{quote(page.title.replace(' ', '+'), safe='+')}",
                "edit": f"/pages/resumedraft.action?draftId={page.id}", "tinyui": f"/x/{page.id}",
                "self": f"{self.url}/rest/api/content/{page.id}",
            },
            "_expandable": {"container": f"/rest/api/space/{self.space}", "metadata": "",
                            "operations": "", "children": f"/rest/api/content/{page.id}/child"},
        }  # fmt: skip
        if "version" in expand:
            out["version"] = {
                "by": {"type": "known", "username": "admin", "displayName": "Admin"},
                "when": WHEN, "message": "", "number": page.version, "minorEdit": False,
            }  # fmt: skip
        if "body.storage" in expand:
            out["body"] = {"storage": {"value": page.body, "representation": "storage"}}
        return out

    def _v1_attachment(self, page: Page, att: Attachment) -> dict:
        return {
            "id": att.id, "type": "attachment", "status": "current", "title": att.title,
            "metadata": {"mediaType": att.media_type, "comment": ""},
            "extensions": {"mediaType": att.media_type, "fileSize": len(att.data), "comment": ""},
            "version": {"when": WHEN, "message": "", "number": att.version, "minorEdit": False},
            "_links": {
                "webui": f"/pages/viewpageattachments.action?pageId={page.id}&preview=/{page.id}/{quote(att.title)}",
                "download": f"/download/attachments/{page.id}/{quote(att.title)}?version={att.version}&modificationDate=1764493200000&api=v2",
                "self": f"{self.url}/rest/api/content/{att.id}",
            },
        }  # fmt: skip


def _v2_version(number: int) -> dict:
    return {"createdAt": WHEN, "message": "", "number": number, "minorEdit": False,
            "authorId": "5b10a2844c20165700ede21g"}  # fmt: skip


def _json(status: int, body: dict) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json"}, json.dumps(body).encode()


def _v2_error(status: int, code: str, title: str) -> tuple[int, dict[str, str], bytes]:
    return _json(
        status, {"errors": [{"status": status, "code": code, "title": title, "detail": None}]}
    )
