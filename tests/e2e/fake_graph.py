"""A Microsoft Graph drive on a local socket, for the SharePoint/OneDrive source's tests: one
drive (a SharePoint document library or a OneDrive) held in a dict the test edits between
syncs, answered as Microsoft's published API reference shows. Every request is logged.

Where each answer's shape comes from (Microsoft Graph v1.0 reference,
learn.microsoft.com/graph/api/..., source microsoftgraph/microsoft-graph-docs-contrib):

- `GET /drives/{drive-id}/root/delta` — "driveItem: delta" (api/driveitem-delta): a JSON
  object with `value` (driveItems) and either `@odata.nextLink` (more pages of this set) or
  `@odata.deltaLink` (the set is done; call it later for what changed since). Called again
  with the token, it answers only the items changed since, each with its latest state (an
  item renamed twice shows once); deleted items carry the `deleted` facet and, as the page's
  "Remarks" table says of OneDrive for Business, no `name` and no `cTag`. `parentReference`
  carries the parent's `id` and never a `path` ("When using delta you should always track
  items by id"); renaming a folder returns the folder alone, not its descendants. A token
  the service can no longer serve answers `410 Gone` with a resync error code and a
  `Location` header holding a nextLink that starts a fresh enumeration (Example 2's text).
- driveItem properties (resources/driveitem): `id`, `name`, `webUrl`, `eTag` (metadata + content),
  `cTag` (content only; not on folders), `size`, `file` (with `mimeType`), `folder`, `root`,
  `parentReference`, `lastModifiedDateTime`.
- `GET /drives/{drive-id}/items/{item-id}/content` — "Download the contents of a driveItem"
  (api/driveitem-get-content): `302 Found` with a `Location` of a pre-authenticated download
  URL that needs no `Authorization` header (the fake records any that is sent anyway).
- `GET /drives/{drive-id}` — "Get Drive" (api/drive-get): the drive resource (resources/drive):
  `id`, `driveType` (`personal`, `business`, `documentLibrary`), `name`, `webUrl`, `owner`,
  `quota`; a drive the caller cannot see answers 404 `itemNotFound`.
- `GET /drives/{drive-id}/items/{item-id}` — "Get a DriveItem resource" (api/driveitem-get):
  the driveItem; 404 `itemNotFound` when there is none.
- The token endpoint — Microsoft identity platform, "OAuth 2.0 client credentials flow"
  (learn.microsoft.com/entra/identity-platform/v2-oauth2-client-creds-grant-flow): a form
  POST to `/{tenant}/oauth2/v2.0/token` with `client_id`, `client_secret`, `scope`
  (`…/.default`) and `grant_type=client_credentials` answers `{"token_type": "Bearer",
  "expires_in", "ext_expires_in", "access_token"}`; a wrong secret answers `invalid_client`
  (`error`, `error_description`).
- Errors — "Microsoft Graph error responses and resource types" (concepts/errors): a JSON
  object `{"error": {"code", "message", "innerError"}}`; 401 `unauthenticated`; 429
  `activityLimitReached` (inner `throttledRequest`), and "Microsoft Graph throttling
  guidance" (concepts/throttling): a 429 carries `Retry-After` in seconds.
"""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass, field
from urllib.parse import parse_qs, quote, urlsplit

from tests.e2e.local_server import LocalServer

ROOT = "01ROOTITEM"


@dataclass
class Item:
    id: str
    name: str
    parent: str | None
    folder: bool = False
    content: bytes = b""
    mime: str = "application/octet-stream"
    guid: str = field(default_factory=lambda: str(uuid.uuid4()).upper())
    version: int = 1  # eTag: metadata and content
    content_version: int = 1  # cTag: content only
    changed_at: int = 0  # the drive's change counter when it last changed
    deleted: bool = False
    facet: str | None = None  # "package" (a OneNote notebook) or "remoteItem" (shared in)


class FakeGraph(LocalServer):
    def __init__(
        self, *, drive_id: str = "b!fakeDriveId", page_size: int = 200, business: bool = False
    ) -> None:
        """`business`: answer as OneDrive for Business and SharePoint do (the delta page's
        Remarks: no `cTag` on created or modified items, and no `cTag` or `name` on deleted
        ones); otherwise as OneDrive (consumer) does (no `cTag` or `size` on deleted ones)."""
        self.drive_id = drive_id
        self.business = business
        self.page_size = page_size
        self.token = "good-token"  # the bearer token the drive accepts
        self.items: dict[str, Item] = {ROOT: Item(ROOT, "root", None, folder=True)}
        self.seq = 1
        self.expired_before = 0  # a delta token from before this counter answers 410
        self.throttled = 0  # the next this-many API requests answer 429
        self.retry_after = 1
        self.auth_on_downloads = 0  # download requests that carried an Authorization header
        self.tenant, self.client_id, self.client_secret = "contoso", "app-1", "s3cret"
        self.broken: set[str] = set()  # item ids whose download answers 503 every time
        self._next_id = 0
        super().__init__()
        self.url = self.origin + "/v1.0"  # the source's `url`: Graph's service root

    # -- the test edits the drive ---------------------------------------------------------

    def _touch(self, item: Item) -> None:
        self.seq += 1
        item.changed_at = self.seq

    def folder(self, name: str, parent: str = ROOT) -> str:
        with self._lock:
            self._next_id += 1
            item = Item(f"01FOLDER{self._next_id:04d}", name, parent, folder=True)
            self.items[item.id] = item
            self._touch(item)
            return item.id

    def put(
        self, name: str, content: bytes, parent: str = ROOT, mime: str = "", facet: str = ""
    ) -> str:
        """A new file; its id. `facet`: "package" or "remoteItem", as driveItem shows them."""
        with self._lock:
            self._next_id += 1
            item = Item(f"01FILE{self._next_id:04d}", name, parent, content=content)
            item.facet = facet or None
            item.mime = mime or "application/octet-stream"
            self.items[item.id] = item
            self._touch(item)
            return item.id

    def _update(self, item_id: str, **fields: object) -> None:
        """A new version of the item with these fields."""
        with self._lock:
            item = self.items[item_id]
            for name, value in fields.items():
                setattr(item, name, value)
            item.version += 1
            self._touch(item)

    def edit(self, item_id: str, content: bytes) -> None:
        with self._lock:
            version = self.items[item_id].content_version + 1
            self._update(item_id, content=content, content_version=version)

    def rename(self, item_id: str, name: str) -> None:
        self._update(item_id, name=name)

    def move(self, item_id: str, parent: str) -> None:
        self._update(item_id, parent=parent)

    def delete(self, item_id: str) -> None:
        """Deleted, with every item under it (each then reported with the deleted facet)."""
        with self._lock:
            for child in [i for i in self.items.values() if i.parent == item_id]:
                self.delete(child.id)
            item = self.items[item_id]
            item.deleted = True
            self._touch(item)

    def expire_tokens(self) -> None:
        """Every delta token handed out so far (a deltaLink's, or a nextLink's in the middle
        of a set) answers 410 Gone from now on."""
        with self._lock:
            self.seq += 1
            self.expired_before = self.seq

    # -- what the drive answers -----------------------------------------------------------

    def _json(self, status: int, body: dict, **headers: str) -> tuple[int, dict, bytes]:
        return status, {"Content-Type": "application/json", **headers}, json.dumps(body).encode()

    def _error(self, status: int, code: str, message: str, inner: str | None = None, **headers):
        error: dict = {
            "code": code,
            "message": message,
            "innerError": {"request-id": str(uuid.uuid4()), "date": "2026-12-07T15:00:00"},
        }
        if inner:
            error["innerError"]["code"] = inner
        return self._json(status, {"error": error}, **headers)

    def _resource(self, item: Item) -> dict:
        out: dict = {"id": item.id}
        if item.parent is None:
            out["root"] = {}
        else:
            out["parentReference"] = {
                "driveId": self.drive_id,
                "driveType": "documentLibrary" if self.business else "personal",
                "id": item.parent,
            }
        if item.deleted:
            out["deleted"] = {"state": "deleted"}
            out["folder" if item.folder else "file"] = {}
            if not self.business:
                out["name"] = item.name
            return out
        out["name"] = item.name
        if item.facet == "package":  # a OneNote notebook: a package, neither file nor folder
            out["package"] = {"type": "oneNote"}
            return out
        if item.facet == "remoteItem":  # the item lives in another drive
            out["remoteItem"] = {
                "id": "01REMOTE" + item.id,
                "parentReference": {"driveId": "b!other"},
            }
        # SharePoint's webUrl is the item's path in the library: a rename or a move changes it.
        out["webUrl"] = f"https://contoso.sharepoint.com/Shared%20Documents/{self._web_path(item)}"
        out["eTag"] = f'"{{{item.guid}}},{item.version}"'
        out["lastModifiedDateTime"] = "2026-12-07T15:00:00Z"
        if item.folder:
            out["folder"] = {
                "childCount": sum(1 for i in self.items.values() if i.parent == item.id)
            }
            out["size"] = 0
        else:
            if not self.business:
                out["cTag"] = f'"c:{{{item.guid}}},{item.content_version}"'
            out["file"] = {"mimeType": item.mime}
            out["size"] = len(item.content)
        return out

    def _web_path(self, item: Item) -> str:
        names: list[str] = []
        current: Item | None = item
        for _ in range(256):
            if current is None or current.id == ROOT:
                break
            names.append(quote(current.name))
            current = self.items.get(current.parent or "")
        return "/".join(reversed(names))

    def _token(self, **state: int) -> str:
        return base64.urlsafe_b64encode(json.dumps(state).encode()).decode().rstrip("=")

    def _untoken(self, token: str) -> dict | None:
        try:
            return json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        except ValueError:
            return None

    def _delta_link(self, key: str, **state: int) -> str:
        return f"{self.url}/drives/{self.drive_id}/root/delta?token={self._token(**state)}"

    def _changed(self, since: int) -> list[Item]:
        """The items of a delta set: all live ones from empty, else those changed since the
        token, with their parent folders (the hierarchy), parents first."""
        if since == 0:
            chosen = [i for i in self.items.values() if not i.deleted]
        else:
            ids: set[str] = set()
            for i in self.items.values():
                if i.changed_at > since:
                    ids.add(i.id)
                    parent = i.parent
                    while parent and not i.deleted and parent in self.items:
                        ids.add(parent)
                        parent = self.items[parent].parent
            chosen = [self.items[i] for i in ids]

        def depth(item: Item) -> int:
            n, parent = 0, item.parent
            while parent and parent in self.items:
                n, parent = n + 1, self.items[parent].parent
            return n

        return sorted(chosen, key=lambda i: (depth(i), i.id))

    def answer(self, target: str, headers) -> tuple[int, dict, bytes]:
        parts = urlsplit(target)
        path, query = parts.path, parse_qs(parts.query)
        with self._lock:
            if path.startswith("/download/"):
                if headers.get("Authorization"):
                    self.auth_on_downloads += 1
                item = self.items.get(path.split("/")[2])
                if item is not None and item.id in self.broken:
                    return 500, {"Content-Type": "text/plain"}, b"storage node down"
                if item is None or item.deleted:
                    return 404, {"Content-Type": "text/plain"}, b"gone"
                return 200, {"Content-Type": item.mime}, item.content
            if self.throttled:
                self.throttled -= 1
                return self._error(
                    429,
                    "activityLimitReached",
                    "The request has been throttled",
                    "throttledRequest",
                    **{"Retry-After": str(self.retry_after)},
                )
            if headers.get("Authorization") != f"Bearer {self.token}":
                return self._error(
                    401, "unauthenticated", "Access token has expired or is not valid."
                )
            prefix = f"/v1.0/drives/{self.drive_id}"
            if path == prefix:
                kind = "documentLibrary" if self.business else "personal"
                return self._json(
                    200,
                    {"id": self.drive_id, "driveType": kind, "name": "Documents",
                     "webUrl": "https://contoso.sharepoint.com/Shared%20Documents",
                     "owner": {"user": {"displayName": "Contoso"}},
                     "quota": {"total": 1_099_511_627_776, "used": 0, "state": "normal"}},
                )  # fmt: skip
            found = path.removeprefix(prefix + "/items/") if path.startswith(prefix) else None
            if found is not None and "/" not in found:
                item = self.items.get(found)
                if item is None or item.deleted:
                    return self._error(404, "itemNotFound", "The resource could not be found.")
                return self._json(200, self._resource(item))
            if path.startswith("/v1.0/drives/") and path.count("/") == 3:
                return self._error(404, "itemNotFound", "The resource could not be found.")
            if path == prefix + "/root/delta":
                return self._delta(query.get("token", [""])[0])
            if path.startswith(prefix + "/items/") and path.endswith("/content"):
                item = self.items.get(path.split("/")[5])
                if item is None or item.deleted or item.folder:
                    return self._error(404, "itemNotFound", "The resource could not be found.")
                where = f"{self.origin}/download/{item.id}/{uuid.uuid4().hex}"
                return 302, {"Location": where}, b""
            return self._error(400, "invalidRequest", "Unsupported route.")

    def client_credentials(self) -> str:
        """The credential of an app registration this fake's identity platform knows."""
        return json.dumps(
            {"tenant_id": self.tenant, "client_id": self.client_id,
             "client_secret": self.client_secret, "authority": self.origin}
        )  # fmt: skip

    def answer_post(self, path: str, form: dict[str, str]) -> tuple[int, dict, bytes]:
        """The Microsoft identity platform's token endpoint, client credentials flow."""
        if path != f"/{self.tenant}/oauth2/v2.0/token":
            return self._json(404, {"error": "invalid_request"})
        if form.get("grant_type") != "client_credentials" or not form.get("scope", "").endswith(
            "/.default"
        ):
            return self._json(
                400, {"error": "invalid_scope", "error_description": "AADSTS70011: bad scope."}
            )
        if (form.get("client_id"), form.get("client_secret")) != (
            self.client_id,
            self.client_secret,
        ):
            return self._json(
                401,
                {"error": "invalid_client",
                 "error_description": "AADSTS7000215: Invalid client secret provided."},
            )  # fmt: skip
        body = {"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599,
                "access_token": self.token}  # fmt: skip
        return self._json(200, body)

    def _delta(self, token: str) -> tuple[int, dict, bytes]:
        state = {"since": 0, "offset": 0} if not token else self._untoken(token)
        if state is None:
            return self._error(400, "invalidRequest", "Invalid delta token.")
        since, offset = state["since"], state.get("offset", 0)
        issued = state.get("issued", since)  # a nextLink's: when it was handed out
        if (since and since < self.expired_before) or (issued and issued < self.expired_before):
            fresh = self._delta_link("token", since=0, offset=0)
            return self._error(
                410,
                "resyncRequired",
                "Resync required: the delta token is no longer valid.",
                "resyncChangesApplyDifferences",
                Location=fresh,
            )
        items = self._changed(since)
        page = items[offset : offset + self.page_size]
        body: dict = {"value": [self._resource(i) for i in page]}
        if offset + self.page_size < len(items):
            body["@odata.nextLink"] = self._delta_link(
                "token", since=since, offset=offset + self.page_size, issued=self.seq
            )
        else:
            body["@odata.deltaLink"] = self._delta_link("token", since=self.seq, offset=0)
        return self._json(200, body)
