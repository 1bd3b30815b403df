"""The Google Drive API v3 on a local socket, for the Google Drive source's tests: a user's
Drive held in a dict the test edits between syncs, answered as Google's published API
reference shows. Every request is logged.

Where each answer's shape comes from (Google Drive API v3 reference,
developers.google.com/workspace/drive/api/reference/rest/v3/... and .../guides/...):

- `GET /drive/v3/files?q='ID' in parents and trashed = false&pageToken=…` — "Method:
  files.list" and the `FileList` resource: `{"kind": "drive#fileList", "nextPageToken",
  "incompleteSearch", "files": [File]}`; `nextPageToken` is absent on the last page.
- Shared drives: files.list's `corpora=drive` and `driveId` list one shared drive's files
  (the `user` corpus holds My Drive's); changes.getStartPageToken and changes.list take
  its `driveId` ("The shared drive from which changes are returned"); a shared drive's id is
  its root folder's, and its files carry `driveId`.
- File fields (the `File` resource): `id`, `name`, `mimeType`, `parents`, `trashed`,
  `modifiedTime`, `version`, `size`, `webViewLink`, and `md5Checksum` (only for files with binary content:
  a Google Docs/Sheets/Slides file has none, and no `size` either); a folder's `mimeType`
  is `application/vnd.google-apps.folder`.
- `GET /drive/v3/changes/startPageToken` — "Method: changes.getStartPageToken":
  `{"kind": "drive#startPageToken", "startPageToken"}`.
- `GET /drive/v3/changes?pageToken=…` — "Method: changes.list" and the `ChangeList` /
  `Change` resources: `{"kind": "drive#changeList", "changes": [{"kind": "drive#change",
  "changeType": "file", "removed", "fileId", "file", "time"}], "nextPageToken" |
  "newStartPageToken"}`; `removed` is true for a file deleted for good (then no `file`); a
  file moved to the trash is a change whose file says `trashed: true`. The changes are the
  user's whole Drive, not one folder's.
- `GET /drive/v3/files/{id}` — "Method: files.get": the File resource; 404 `notFound` for a
  file the caller cannot see.
- `GET /drive/v3/files/{id}?alt=media` — "Download and export files" (guides/manage-downloads):
  the file's bytes; a Google Workspace document answers 403 `fileNotDownloadable` and must be
  exported instead.
- `GET /drive/v3/files/{id}/export?mimeType=…` — "Method: files.export": the document's
  bytes in the requested type ("Export MIME types for Google Workspace documents": a Docs
  file as text/plain, text/markdown or DOCX; a Sheets file as text/csv; Slides as text/plain).
- The token endpoint — "Using OAuth 2.0 for Server to Server Applications"
  (developers.google.com/identity/protocols/oauth2/service-account): a form POST to the
  key's `token_uri` with `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` and an
  RS256-signed `assertion` (`iss`, `scope`, `aud` = the token URI, `iat`, `exp`) answers
  `{"access_token", "expires_in", "token_type": "Bearer"}`; a bad signature answers 400
  `invalid_grant`.
- Errors — "Resolve errors" (guides/handle-errors): `{"error": {"code", "message", "errors":
  [{"domain", "reason", "message", …}]}}`; 401 reason `authError` "Invalid Credentials";
  429 reason `rateLimitExceeded` (the fake adds a `Retry-After`, which "Usage limits"
  (guides/limits) does not promise: without one a client backs off exponentially); and, as
  "Usage limits" says a quota exceeded answers, 403 reason `userRateLimitExceeded` (domain
  `usageLimits`), which is a rate limit, not a refused credential.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from tests.e2e.local_server import LocalServer

FOLDER = "application/vnd.google-apps.folder"
DOC = "application/vnd.google-apps.document"
SHEET = "application/vnd.google-apps.spreadsheet"
SLIDES = "application/vnd.google-apps.presentation"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_EXPORTS = {
    DOC: ("text/plain", "text/markdown", DOCX),
    SHEET: ("text/csv",),
    SLIDES: ("text/plain",),
}
_IN_PARENTS = re.compile(r"^'([^']+)' in parents and trashed = false$")


@dataclass
class File:
    id: str
    name: str
    mime: str
    parents: list[str]
    content: bytes = b""
    trashed: bool = False
    version: int = 1
    modified: str = "2026-12-07T15:00:00.000Z"
    drive: str | None = None  # the shared drive it is in (None: a user's My Drive)


class FakeGDrive(LocalServer):
    def __init__(self, *, page_size: int = 100) -> None:
        self.page_size = page_size
        self.token = "good-token"
        self.files: dict[str, File] = {}
        self.changes: list[tuple[int, str]] = []  # (change number, file id)
        self.removed: set[str] = set()  # deleted for good
        self.removed_drive: dict[str, str | None] = {}
        self.seq = 100
        self.throttled = 0
        self.retry_after: str | None = "1"
        self.throttle_status = 429  # or 403, as "Usage limits" says a quota exceeded answers
        self.throttle_only = ""  # throttle only requests whose path and query hold this
        self._next = 0
        super().__init__()

    # -- the test edits the Drive ---------------------------------------------------------

    def _changed(self, file_id: str) -> None:
        self.seq += 1
        self.changes.append((self.seq, file_id))
        f = self.files.get(file_id)
        if f is not None:
            f.modified = f"2026-12-07T15:{self.seq % 60:02d}:00.000Z"

    def add(self, name: str, mime: str, parent: str, content: bytes = b"") -> str:
        with self._lock:
            self._next += 1
            file_id = f"1fake{self._next:04d}{uuid.uuid4().hex[:8]}"
            drive = (
                parent
                if parent.startswith("0A")
                else getattr(self.files.get(parent), "drive", None)
            )
            self.files[file_id] = File(file_id, name, mime, [parent], content, drive=drive)
            self._changed(file_id)
            return file_id

    def folder(self, name: str, parent: str = "root") -> str:
        return self.add(name, FOLDER, parent)

    def shared_drive(self) -> str:
        """A new shared drive's id, which is also its root folder's id (as Drive's are)."""
        with self._lock:
            self._next += 1
            return f"0Ashared{self._next:04d}"

    def _update(self, file_id: str, **fields: object) -> None:
        """A new version of the file with these fields."""
        with self._lock:
            f = self.files[file_id]
            for name, value in fields.items():
                setattr(f, name, value)
            f.version += 1
            self._changed(file_id)

    def edit(self, file_id: str, content: bytes) -> None:
        self._update(file_id, content=content)

    def rename(self, file_id: str, name: str) -> None:
        self._update(file_id, name=name)

    def move(self, file_id: str, parent: str) -> None:
        self._update(file_id, parents=[parent])

    def trash(self, file_id: str) -> None:
        self._update(file_id, trashed=True)

    def remove(self, file_id: str) -> None:
        """Deleted for good: a change with `removed: true`."""
        with self._lock:
            self.removed_drive[file_id] = self.files.pop(file_id).drive
            self.removed.add(file_id)
            self._changed(file_id)

    def service_account_key(self) -> str:
        """A service account's JSON key (as the Cloud console gives one) whose public half
        this fake's token endpoint knows."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        if not hasattr(self, "_key"):
            self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        return json.dumps(
            {"type": "service_account", "project_id": "bunko-test", "private_key_id": "k1",
             "private_key": pem, "client_email": "sync@bunko-test.iam.gserviceaccount.com",
             "client_id": "1234", "token_uri": self.url + "/token"}
        )  # fmt: skip

    def answer_post(self, path: str, form: dict[str, str]) -> tuple[int, dict, bytes]:
        """Google's OAuth 2.0 token endpoint for a service account's signed JWT."""
        import jwt

        if path != "/token" or form.get("grant_type") != (
            "urn:ietf:params:oauth:grant-type:jwt-bearer"
        ):
            return self._json(400, {"error": "unsupported_grant_type"})
        try:
            claims = jwt.decode(
                form.get("assertion", ""),
                self._key.public_key(),
                algorithms=["RS256"],
                audience=self.url + "/token",
            )
        except (AttributeError, jwt.PyJWTError):
            return self._json(
                400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
            )
        if claims.get("scope") != "https://www.googleapis.com/auth/drive.readonly":
            return self._json(400, {"error": "invalid_scope"})
        body = {"access_token": self.token, "expires_in": 3599, "token_type": "Bearer"}
        return self._json(200, body)

    # -- what the API answers -------------------------------------------------------------

    def _json(self, status: int, body: dict, **headers: str) -> tuple[int, dict, bytes]:
        return (
            status,
            {"Content-Type": "application/json; charset=UTF-8", **headers},
            (json.dumps(body).encode()),
        )

    def _error(self, status: int, reason: str, message: str, domain: str = "global", **headers):
        one = {"domain": domain, "reason": reason, "message": message}
        if status == 401:
            one.update(locationType="header", location="Authorization")
        body = {"error": {"errors": [one], "code": status, "message": message}}
        return self._json(status, body, **headers)

    def _resource(self, f: File) -> dict:
        out = {
            "kind": "drive#file",
            "id": f.id,
            "name": f.name,
            "mimeType": f.mime,
            "parents": list(f.parents),
            "trashed": f.trashed,
            "modifiedTime": f.modified,
            "version": str(f.version),
            "webViewLink": f"https://docs.google.com/document/d/{f.id}/edit",
        }
        if not f.mime.startswith("application/vnd.google-apps."):
            out["md5Checksum"] = hashlib.md5(f.content).hexdigest()
            out["size"] = str(len(f.content))
        if f.drive:
            out["driveId"] = f.drive
        return out

    def answer(self, target: str, headers) -> tuple[int, dict, bytes]:
        parts = urlsplit(target)
        path, query = parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()}
        with self._lock:
            if self.throttled and self.throttle_only in target:
                self.throttled -= 1
                extra = {"Retry-After": self.retry_after} if self.retry_after else {}
                if self.throttle_status == 403:
                    return self._error(
                        403, "userRateLimitExceeded", "User Rate Limit Exceeded", "usageLimits"
                    )
                return self._error(
                    429, "rateLimitExceeded", "Rate Limit Exceeded", "usageLimits", **extra
                )
            if headers.get("Authorization") != f"Bearer {self.token}":
                return self._error(401, "authError", "Invalid Credentials")
            if path == "/drive/v3/files":
                return self._list(query)
            if path == "/drive/v3/changes/startPageToken":
                body = {"kind": "drive#startPageToken", "startPageToken": str(self.seq + 1)}
                return self._json(200, body)
            if path == "/drive/v3/changes":
                return self._changes(query)
            found = re.fullmatch(r"/drive/v3/files/([^/]+)(/export)?", path)
            if found:
                f = self.files.get(found.group(1))
                if f is None:
                    return self._error(404, "notFound", f"File not found: {found.group(1)}.")
                if found.group(2):
                    wanted = query.get("mimeType", "")
                    if wanted not in _EXPORTS.get(f.mime, ()):
                        return self._error(400, "badRequest", "Export format not supported.")
                    return 200, {"Content-Type": wanted}, self._export(f, wanted)
                if query.get("alt") == "media":
                    if f.mime.startswith("application/vnd.google-apps."):
                        return self._error(
                            403,
                            "fileNotDownloadable",
                            "Only files with binary content can be downloaded. Use Export "
                            "with Docs Editors files.",
                        )
                    return 200, {"Content-Type": f.mime}, f.content
                return self._json(200, self._resource(f))
            return self._error(404, "notFound", "Not Found")

    def _export(self, f: File, wanted: str) -> bytes:
        if wanted != DOCX:
            return f.content  # the test holds a Docs file's text (a sheet's CSV, a deck's text)
        import io

        import docx  # python-docx: a real DOCX, as Drive's export gives

        document = docx.Document()
        for line in f.content.decode().splitlines():
            document.add_paragraph(line)
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()

    def _list(self, query: dict) -> tuple[int, dict, bytes]:
        found = _IN_PARENTS.match(query.get("q", ""))
        if not found:
            return self._error(400, "invalid", "Invalid Value", "global")
        parent = found.group(1)
        # A shared drive's files are in its corpus only (corpora=drive&driveId=…).
        corpus = query.get("driveId") if query.get("corpora") == "drive" else None
        children = sorted(
            (
                f
                for f in self.files.values()
                if parent in f.parents and not f.trashed and f.drive == corpus
            ),
            key=lambda f: f.id,
        )
        size = min(int(query.get("pageSize", self.page_size)), self.page_size)
        given = query.get("pageToken") or "0"
        if not given.isdigit():  # a token Drive no longer takes (or never gave)
            return self._error(400, "invalid", "Invalid Value", "global")
        offset = int(given)
        body: dict = {
            "kind": "drive#fileList",
            "incompleteSearch": False,
            "files": [self._resource(f) for f in children[offset : offset + size]],
        }
        if offset + size < len(children):
            body["nextPageToken"] = str(offset + size)
        return self._json(200, body)

    def _changes(self, query: dict) -> tuple[int, dict, bytes]:
        token = query.get("pageToken", "")
        if not token.isdigit():
            return self._error(400, "invalid", "Invalid Value", "global")
        start = int(token)
        latest: dict[str, int] = {}
        drive = query.get("driveId")  # a shared drive's changes, or else My Drive's

        def in_view(file_id: str) -> bool:
            f = self.files.get(file_id)
            return (f.drive if f else self.removed_drive.get(file_id)) == drive

        for number, file_id in self.changes:
            if number >= start and in_view(file_id):
                latest[file_id] = number  # the file's latest state, once
        ordered = sorted(latest.items(), key=lambda kv: kv[1])
        size = min(int(query.get("pageSize", self.page_size)), self.page_size)
        page = ordered[:size]
        out = []
        for file_id, number in page:
            change: dict = {
                "kind": "drive#change",
                "changeType": "file",
                "fileId": file_id,
                "time": f"2026-12-07T15:{number % 60:02d}:00.000Z",
                "removed": file_id in self.removed and file_id not in self.files,
            }
            if not change["removed"]:
                change["file"] = self._resource(self.files[file_id])
            out.append(change)
        body: dict = {"kind": "drive#changeList", "changes": out}
        if len(ordered) > size:
            body["nextPageToken"] = str(page[-1][1] + 1)
        else:
            body["newStartPageToken"] = str(self.seq + 1)
        return self._json(200, body)
