"""The SharePoint/OneDrive connector: a drive (a SharePoint document library or a OneDrive),
or one folder of it, read through Microsoft Graph's delta query.

- The first sync enumerates the drive with `GET /drives/{drive-id}/root/delta`, following
  `@odata.nextLink` until the `@odata.deltaLink`, which is kept as the change token; the
  next sync calls that link and gets only what changed since (Graph serves delta for a
  drive's root; a folder is picked out of it by parent ids, as SharePoint does not serve
  delta for other folders).
- Items are tracked by id (drives.py): a `deleted` facet drops the item, a new `name` or
  `parentReference.id` renames or moves it and its document keeps its id and history. The
  delta does not repeat a renamed folder's descendants, so their paths are worked out from
  the folder again.
- Content is downloaded only for a file whose `cTag` (content tag; its `eTag` where the
  service leaves the cTag out, as OneDrive for Business does in delta answers) differs from
  the one its document was written from, through `/items/{id}/content`, whose 302 leads to
  a pre-authenticated URL fetched without the credential.
- A listing longer than the run's time bound keeps its next link and the items read so far
  (`listing`); the next run goes on from it, and nothing is mirrored before the deltaLink.
- `410 Gone`: the token is too old; the drive is enumerated again from the `Location` the
  answer gives, and what the new listing lacks is deleted by the mirror.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from bunko.errors import UpstreamError
from bunko.services.sources.api import json_object
from bunko.services.sources.drives import DriveFile, DriveReader, TokenExpired, files_under

GRAPH = "https://graph.microsoft.com/v1.0"
_PAGE_BYTES = 50_000_000


class GraphSync(DriveReader):
    @cached_property
    def drive_url(self) -> str:
        base = self.settings["url"].rstrip("/")
        return f"{base}/drives/{quote(self.settings['drive_id'], safe='!')}"

    def read(self) -> bool:
        """Bring `items` up to date (the whole drive the first time, or after a 410; what
        changed otherwise). False, with `report.failed`, when the listing could not be read
        to its end: then nothing is mirrored and the token is not moved. False without it
        when the run's time ran out mid-listing: the link to ask next and the items read so
        far are kept (`listing`), and the next run goes on from there; nothing is mirrored
        until a listing reaches its deltaLink, so a partial listing never deletes."""
        listing = self.state.get("listing")
        if listing:  # a link kept too long answers 410 as a token does: listed again then
            link, items = listing["link"], listing["items"]
        else:
            link = self.state.get("cursor")
            items = dict(self.state.get("items") or {}) if link else {}
            link = link or f"{self.drive_url}/root/delta"
        restarted = False  # one fresh enumeration a run, not a loop of them
        asked = 0  # one page at least each run, or a bound too tight would never end it
        while True:
            if asked and self.out_of_time():
                self.state["listing"] = {"link": link, "items": items}
                self.report.complete, self.report.stopped_by = False, "max_seconds"
                return False
            asked += 1
            try:
                page = self._page(link)
            except TokenExpired as exc:
                if restarted:
                    self.report.failed = f"delta: {exc}"
                    return False
                restarted, items = True, {}  # a full enumeration: what it lacks is gone
                link = exc.restart or f"{self.drive_url}/root/delta"
                continue
            for value in page.get("value") or []:
                _apply(items, value)
            if page.get("@odata.nextLink"):
                link = page["@odata.nextLink"]
                continue
            if not page.get("@odata.deltaLink"):
                self.report.failed = "delta: a page with neither a nextLink nor a deltaLink"
                return False
            folder = self.settings.get("item_id")
            if folder and not (items.get(folder) or {}).get("f"):
                # Gone, or out of the credential's sight: which one the drive does not say,
                # so its documents are kept and the owner told, not the library emptied.
                self.report.failed = (
                    f"the folder {folder} is not in the drive (deleted, moved to another "
                    "drive, or not visible to the credential); nothing deleted"
                )
                return False
            self.state.pop("listing", None)
            self.state["cursor"] = page["@odata.deltaLink"]
            self.state["items"] = items
            return True

    def _page(self, link: str) -> dict[str, Any]:
        # A nextLink, deltaLink or 410 Location is the service's to give, and the credential
        # goes with it: one that leaves the service's origin is refused, not followed.
        if _origin(link) != _origin(self.drive_url):
            raise UpstreamError(f"delta: a link off the service's origin ({_origin(link)})")
        answer = self.api.get(
            link, max_bytes=_PAGE_BYTES, headers={"Accept": "application/json"}, accept=(410,)
        )
        if answer.status == 410:
            where = answer.headers.get("location")
            raise TokenExpired("410 Gone", urljoin(link, where) if where else None)
        return json_object(link, answer.body)

    def scope(self) -> str | None:
        """The id of the synced folder: the setting's, or the drive's root."""
        if self.settings.get("item_id"):
            return self.settings["item_id"]
        items = self.state.get("items") or {}
        return next((i for i, item in items.items() if item.get("r")), None)

    def files(self) -> list[DriveFile]:
        scope = self.scope()
        if scope is None:
            return []

        def name_of(item: dict[str, Any]) -> str | None:
            return item["n"] if self.supported(item["n"]) else None

        return files_under(self.state["items"], scope, self.record.folder, name_of=name_of)

    def download(self, file: DriveFile, max_bytes: int) -> bytes:
        """The file's content: `/content` answers 302 to a pre-authenticated URL, which is
        fetched without the credential (it may be another host; the guard checks it)."""
        url = f"{self.drive_url}/items/{quote(file.id, safe='!')}/content"
        answer = self.api.get(url, max_bytes=max_bytes, accept=(302,))
        if answer.status == 302:
            where = answer.headers.get("location")
            if not where:
                raise UpstreamError(f"{url} answered 302 without a Location")
            answer = self.api.get(urljoin(url, where), max_bytes=max_bytes, anonymous=True)
        return answer.body


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def _apply(items: dict[str, dict[str, Any]], value: dict[str, Any]) -> None:
    """One driveItem of a delta page onto the items kept (the last occurrence wins)."""
    item_id = value.get("id")
    if not isinstance(item_id, str):
        return
    if "deleted" in value:
        items.pop(item_id, None)
        return
    if "package" in value or "remoteItem" in value:
        return  # a OneNote notebook or an item shared from another drive: not a file here
    name = value.get("name")
    if not isinstance(name, str):
        known = items.get(item_id)
        if known is None:
            return
        name = known["n"]
    parent = (value.get("parentReference") or {}).get("id")
    entry: dict[str, Any] = {"n": name, "p": parent}
    if "root" in value:
        entry["r"] = 1
    if "folder" in value or "root" in value:
        entry["f"] = 1
        if isinstance(value.get("webUrl"), str):
            entry["w"] = value["webUrl"]
            _follow(items, (items.get(item_id) or {}).get("w"), entry["w"])
    elif "file" in value:
        entry["t"] = value.get("cTag") or value.get("eTag") or ""
        if isinstance(value.get("size"), int):
            entry["s"] = value["size"]
        entry["m"] = (value.get("file") or {}).get("mimeType") or ""
        if isinstance(value.get("webUrl"), str):
            entry["w"] = value["webUrl"]
    else:
        return
    items[item_id] = entry


def _follow(items: dict[str, dict[str, Any]], old: str | None, new: str) -> None:
    """A folder renamed or moved: the delta does not repeat what is under it, and their
    webUrls (the item's path in SharePoint) start with the folder's: they follow it."""
    if not old or old == new:
        return
    prefix = old + "/"
    for item in items.values():
        link = item.get("w")
        if isinstance(link, str) and link.startswith(prefix):
            item["w"] = new + "/" + link[len(prefix) :]
