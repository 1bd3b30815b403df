"""Sources: a library's connectors, each a source of its own (`connector:<id>`), kept in the
settings store (its settings under `sources`, what its last sync saw under `source_state`).

A connector that reads a service in someone's name keeps a credential: encrypted by the
SecretCipher model configs' API keys use, kept apart from the record (scope
`source_credentials`, by the source's id), decrypted only for its sync, replaceable, and
gone with the source; a listing says only whether there is one.

A sync reads the place (services/sources/web.py, git.py, confluence.py), then runs the library's one mirror
rule, `IngestService.mirror(source, seen)`: what this connector put here and no longer sees
is deleted (renames keep their documents), nothing another source owns is touched; then it
writes what is new or changed. A file that cannot be written is recorded on the sync's
report (and the source's last sync), never the end of the sync.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import threading
import time
from collections.abc import Callable
from typing import Any

from bunko.domain import new_id
from bunko.domain.metadata import check_metadata
from bunko.domain.sources import DOORS, connector_source, is_connector
from bunko.errors import (
    BunkoError,
    ConflictError,
    NotFoundError,
    ParseError,
    UnsupportedMediaError,
    ValidationError,
)
from bunko.parsing.mime import is_supported
from bunko.ports import SecretCipher, SettingsStore
from bunko.ports.sources import GitRepos, WebFetcher
from bunko.services.ingest import IngestService, Upload
from bunko.services.library import Library
from bunko.services.sources.api import ApiClient
from bunko.services.sources.confluence import ConfluenceSync
from bunko.services.sources.confluence_api import auth_headers
from bunko.services.sources.git import GitSync
from bunko.services.sources.probe import check_git_http, check_web
from bunko.services.sources.records import (
    DEFAULTS,
    ConnectionCheck,
    SourceRecord,
    SyncReport,
    check_credential,
    check_name,
    check_settings,
)
from bunko.services.sources.web import WebSync

SCOPE = "sources"
STATE_SCOPE = "source_state"
CREDENTIAL_SCOPE = "source_credentials"
# Failures that are the file's own (empty, unreadable, a type Bunko does not read): the same
# bytes fail the same way, so they are not read again until they change.
_THE_FILES = (ValidationError, UnsupportedMediaError, ParseError)


class Sources:
    def __init__(
        self,
        *,
        store: SettingsStore,
        ingest: IngestService,
        library: Library,
        web: WebFetcher,
        git: GitRepos,
        check_url: Callable[[str, bool], object],
        cipher: SecretCipher | None = None,
        private_for_operator: bool = False,
        private_for_people: bool = False,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """`check_url(url, allow_private)`: the outbound guard a source's URL passes when it
        is added (the fetchers run it again before every request). `private_for_*`: whether
        a source the operator adds, or a person adds over the network, may reach loopback
        and private addresses. `cipher`: what keeps credentials at rest (None: a source
        cannot be given one). `sleep`: how an API connector waits out throttling."""
        self.store = store
        self.ingest = ingest
        self.library = library
        self.web = web
        self.git = git
        self.check_url = check_url
        self.cipher = cipher
        self.private_for_operator = private_for_operator
        self.private_for_people = private_for_people
        self.clock = clock
        self.sleep = sleep
        self._running: set[str] = set()
        self._lock = threading.Lock()

    # -- the records ----------------------------------------------------------------------

    def list(self, workspace_id: str) -> list[SourceRecord]:
        prefix = workspace_id + "/"
        return [
            SourceRecord.from_dict(raw)
            for owner, raw in self.store.list_settings(SCOPE)
            if owner.startswith(prefix)
        ]

    def get(self, workspace_id: str, name: str) -> SourceRecord:
        raw = self.store.get_settings(SCOPE, f"{workspace_id}/{name}")
        if raw is None:
            raise NotFoundError("no source by that name here")
        return SourceRecord.from_dict(raw)

    def add(
        self,
        workspace_id: str,
        kind: str,
        name: str,
        settings: dict[str, Any],
        *,
        operator: bool = False,
        credential: str | None = None,
    ) -> SourceRecord:
        """`operator`: added by the machine's operator (the CLI), who alone may name a Git
        repository on this machine, and (by default) reach private addresses; a door a
        person reaches over the network passes False, so a setting cannot read the server's
        own files or network. `credential`: the secret the connector reads in someone's
        name with (kept encrypted, never shown)."""
        check_name(name)
        checked, private = self._checked(kind, settings, operator=operator)
        secret = None if credential is None else self._encrypt(kind, credential)
        if self.store.get_settings(SCOPE, f"{workspace_id}/{name}") is not None:
            raise ConflictError(f"this library already has a source named {name!r}")
        folder = checked.get("folder") or name
        if not folder.strip("/") or ".." in folder.split("/"):
            raise ValidationError("folder: a path inside the library")
        record = SourceRecord(new_id(), workspace_id, name, kind, checked, private=private)
        record.has_credential = secret is not None
        if secret is not None:  # before the record, so no record claims a missing secret
            self.store.put_settings(CREDENTIAL_SCOPE, record.id, {"encrypted": secret})
        self.store.put_settings(SCOPE, f"{workspace_id}/{name}", record.to_dict())
        return record

    def _checked(
        self, kind: str, settings: dict[str, Any], *, operator: bool
    ) -> tuple[dict[str, Any], bool]:
        """The settings checked, their URL through the outbound guard; and whether the source
        may reach private addresses."""
        checked = check_settings(kind, settings)
        url = checked["url"].strip()
        private = self.private_for_operator if operator else self.private_for_people
        if kind != "git" or url.startswith(("http://", "https://")):
            self.check_url(url, private)
        elif not operator:
            raise ValidationError("git source: an https:// URL (a path on the server is refused)")
        checked["url"] = url
        return checked, private

    def check_connection(
        self, kind: str, settings: dict[str, Any], *, operator: bool = False
    ) -> ConnectionCheck:
        """One request to the place the settings name, through the guard its syncs pass,
        without adding or syncing anything (services/sources/probe.py). A URL the guard
        refuses raises, as adding it would."""
        checked, private = self._checked(kind, settings, operator=operator)
        url = checked["url"]
        if kind != "git":  # a website, or a service's base URL: does it answer at all
            limit = checked.get("max_page_bytes", DEFAULTS["web"]["max_page_bytes"])
            return check_web(self.web, url, allow_private=private, max_bytes=limit)
        if not url.startswith(("http://", "https://")):
            found = os.path.isdir(url)
            said = "a folder on this machine" if found else "no such folder on this machine"
            return ConnectionCheck(found, said, url=url)
        return check_git_http(self.web, url, checked["branch"], allow_private=private)

    def set_paused(self, workspace_id: str, name: str, paused: bool) -> SourceRecord:
        """Pause the source (no sync runs, on demand or scheduled, until it is resumed; its
        documents stay) or resume it."""
        record = self.get(workspace_id, name)
        record.paused = paused
        self._update(record, paused=paused)
        return record

    def set_credential(self, workspace_id: str, name: str, credential: str | None) -> SourceRecord:
        """Replace the source's credential (None: remove it); the old one is gone."""
        record = self.get(workspace_id, name)
        if credential is None:
            self.store.delete_settings(CREDENTIAL_SCOPE, record.id)
        else:
            secret = self._encrypt(record.kind, credential)
            self.store.put_settings(CREDENTIAL_SCOPE, record.id, {"encrypted": secret})
        record.has_credential = credential is not None
        self._update(record, has_credential=record.has_credential)
        return record

    def _encrypt(self, kind: str, credential: str) -> str:
        checked = check_credential(kind, credential)
        if self.cipher is None:
            raise ValidationError("this deployment keeps no source credentials")
        return self.cipher.encrypt(checked)

    def credential(self, record: SourceRecord) -> str | None:
        """The decrypted credential, for the connector's requests only (never a response)."""
        kept = self.store.get_settings(CREDENTIAL_SCOPE, record.id)
        if not kept or self.cipher is None:
            return None
        return self.cipher.decrypt(kept["encrypted"])

    def _update(self, record: SourceRecord, **fields: Any) -> None:
        """Write `fields` into the kept record, unless it was removed (or replaced by another
        of the same name) meanwhile: a sync's end does not undo a credential set during it."""
        owner = f"{record.workspace_id}/{record.name}"
        with self._lock:  # a pause and a sync's end, each writing its own field, keep both
            current = self.store.get_settings(SCOPE, owner)
            if current is not None and current.get("id") == record.id:
                self.store.put_settings(SCOPE, owner, {**current, **fields})

    def remove(self, workspace_id: str, name: str, *, keep_documents: bool = False) -> int:
        """The source goes; its documents too unless `keep_documents` (they stay, owned by
        the removed source, which no mirror runs for again). The documents deleted."""
        record = self.get(workspace_id, name)
        deleted = 0
        if not keep_documents:
            deleted = len(self.ingest.mirror(workspace_id, record.source, []).deleted)
        self.store.delete_settings(SCOPE, f"{workspace_id}/{name}")
        self._forget(record)
        return deleted

    def forget_workspace(self, workspace_id: str) -> None:
        """A deleted library's sources, their sync state and Git copies (its documents go
        with the library)."""
        for record in self.list(workspace_id):
            self.store.delete_settings(SCOPE, f"{workspace_id}/{record.name}")
            self._forget(record)

    def _forget(self, record: SourceRecord) -> None:
        """What a source kept beside its record: sync state, credential, Git copy."""
        self.store.delete_settings(STATE_SCOPE, record.id)
        self.store.delete_settings(CREDENTIAL_SCOPE, record.id)
        if record.kind == "git":
            self.git.forget(record.id)

    # -- a sync ---------------------------------------------------------------------------

    def sync(self, workspace_id: str, name: str) -> SyncReport:
        """One sync of the source, now; ConflictError when it is already syncing."""
        record = self.get(workspace_id, name)
        if record.paused:
            raise ConflictError(f"source {name!r} is paused: resume it to sync")
        with self._lock:
            if record.id in self._running:
                raise ConflictError(f"source {name!r} is syncing already")
            self._running.add(record.id)
        try:
            return self._sync(record)
        finally:
            with self._lock:
                self._running.discard(record.id)

    def _sync(self, record: SourceRecord) -> SyncReport:
        started = self.clock()
        state = self.store.get_settings(STATE_SCOPE, record.id) or {}
        report = SyncReport()
        connector = getattr(self, f"_sync_{record.kind}", None)  # one method per kind
        if connector is None:
            report.failed = f"no connector for a {record.kind} source here"
        else:
            connector(record, state, report)
        report.seconds = self.clock() - started
        if report.failed is None:
            self.store.put_settings(STATE_SCOPE, record.id, state)
        record.last_sync = report.summary()
        self._update(record, last_sync=record.last_sync)
        return report

    def _mirror(
        self,
        record: SourceRecord,
        seen: list[str],
        report: SyncReport,
        *,
        moved: dict[str, str] | None = None,
        fingerprint: Callable[[str], str | None] | None = None,
    ) -> list[tuple[str, str]]:
        done = self.ingest.mirror(
            record.workspace_id, record.source, seen, moved=moved, fingerprint=fingerprint
        )
        report.deleted = sorted(d.path for d in done.deleted)
        report.renamed = sorted((old, doc.path) for old, doc in done.renamed)
        return report.renamed

    def _write(
        self,
        record: SourceRecord,
        path: str,
        data: bytes,
        report: SyncReport,
        metadata: dict[str, Any] | None = None,
    ) -> bool:
        """One file into the library; its failure is the file's, recorded, not the sync's.
        False when the failure may pass (a conflict, a quota): the next sync tries again;
        a file Bunko cannot read is the file's until its bytes change."""
        before = self.library.at(record.workspace_id, path)
        if before is not None and before.source != record.source:
            report.errors[path] = f"{path} belongs to another source ({before.source}); not written"
            return True
        try:
            doc = self.ingest.submit(
                Upload(
                    record.workspace_id, data, path=path, source=record.source, metadata=metadata
                )
            )
        except _THE_FILES as exc:
            report.errors[path] = str(exc)
            return True
        except BunkoError as exc:
            report.errors[path] = str(exc)
            return False
        if before is None:
            report.added.append(path)
        elif doc.revision != before.revision:
            report.changed.append(path)
        else:
            report.unchanged += 1
        return True

    def _sync_web(self, record: SourceRecord, state: dict[str, Any], report: SyncReport) -> None:
        run = WebSync(record, state, self.web, report, clock=self.clock)
        run.run()
        if report.failed is not None:
            return
        staged = run.staged
        digests = {p: hashlib.sha256(s.data).hexdigest() for p, s in staged.items()}
        self._mirror(record, list(run.seen), report, fingerprint=digests.get)
        for path, page in staged.items():
            if not self._write(record, path, page.data, report, _url_metadata(page.url)):
                run.pages.get(run.seen[path], {}).clear()  # read it whole next time

    def _sync_git(self, record: SourceRecord, state: dict[str, Any], report: SyncReport) -> None:
        run = GitSync(
            record,
            state,
            self.git,
            report,
            supported=lambda p: is_supported(posixpath.basename(p), None),
            max_file_bytes=self.ingest.policy.max_file_bytes,
            clock=self.clock,
        )
        if not run.plan():
            return
        for old, new in self._mirror(record, run.seen, report, moved=run.moved):
            run.renamed(old, new)
        run.forget_gone()
        files = state["files"]
        for batch in run.batches():
            if run.out_of_time():
                break
            wanted = {blob for _, blob, _ in batch}
            blobs = dict(self.git.read(record.id, sorted(wanted)))
            report.fetched += len(blobs)
            report.bytes += sum(len(b) for b in blobs.values())
            for repo_path, blob, _ in batch:
                if self._write(record, run.path(repo_path), blobs[blob], report):
                    files[repo_path] = blob
                else:
                    report.complete = False  # the next sync tries it again
        state["complete"] = report.complete

    def _sync_confluence(
        self, record: SourceRecord, state: dict[str, Any], report: SyncReport
    ) -> None:
        try:
            credential = self.credential(record)
        except ValueError:
            report.failed = "its credential cannot be read (the key changed): set it again"
            return
        client = ApiClient(
            self.web,
            report,
            allow_private=record.private,
            headers=auth_headers(credential),
            sleep=self.sleep,
        )
        run = ConfluenceSync(
            record,
            state,
            client,
            report,
            supported=is_supported,
            max_file_bytes=self.ingest.policy.max_file_bytes,
            clock=self.clock,
        )
        if not run.run():
            return
        for old, new in self._mirror(record, sorted(run.seen), report, moved=run.moved):
            run.renamed(old, new)
        for item in run.staged:
            meta = _url_metadata(item.url) if item.url else None
            if self._write(record, item.path, item.data, report, meta):
                run.written(item)
            else:
                report.complete = False  # the next sync reads it again


def named_source(store: SettingsStore | None, workspace_id: str, value: str) -> str:
    """The documents' source a search or chat filter's `source` names: a door's own
    (`upload`, `agent`, `drop`, …) or `connector:<id>` as it is, else the name of one of the
    library's connectors. ValidationError when it is neither (an agent's mistake, not a miss)."""
    value = value.strip()
    if value in DOORS or (is_connector(value) and len(value) > len("connector:")):
        return value
    raw = store.get_settings(SCOPE, f"{workspace_id}/{value}") if store is not None else None
    if raw is None:
        doors = ", ".join(DOORS)
        raise ValidationError(
            f"source: no source named {value!r} in this library (a source's name, as "
            f"list_sources or GET /sources gives it, connector:<id>, or one of {doors})"
        )
    return connector_source(raw["id"])


def _url_metadata(url: str) -> dict[str, Any] | None:
    """A page's URL as its document's `url` metadata (None when too long to be a value)."""
    try:
        return check_metadata({"url": url})
    except ValidationError:
        return None
