"""Sources: a library's connectors, each a source of its own (`connector:<id>`), kept in the
settings store (its settings under `sources`, what its last sync saw under `source_state`).

A sync reads the place (services/sources/web.py, git.py), then runs the library's one mirror
rule, `IngestService.mirror(source, seen)`: what this connector put here and no longer sees
is deleted (renames keep their documents), nothing another source owns is touched; then it
writes what is new or changed. A file that cannot be written is recorded on the sync's
report (and the source's last sync), never the end of the sync.
"""

from __future__ import annotations

import hashlib
import logging
import posixpath
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from bunko.domain import new_id
from bunko.domain.metadata import check_metadata
from bunko.errors import (
    BunkoError,
    ConflictError,
    NotFoundError,
    ParseError,
    UnsupportedMediaError,
    ValidationError,
)
from bunko.parsing.mime import is_supported
from bunko.ports import SettingsStore
from bunko.ports.sources import GitRepos, WebFetcher
from bunko.services.ingest import IngestService, Upload
from bunko.services.library import Library
from bunko.services.sources.git import GitSync
from bunko.services.sources.records import SourceRecord, SyncReport, check_name, check_settings
from bunko.services.sources.schedule import DEFAULT_EVERY, UNSET, DueSync, _Unset, parse_every
from bunko.services.sources.web import WebSync

log = logging.getLogger(__name__)

SCOPE = "sources"
STATE_SCOPE = "source_state"
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
        private_for_operator: bool = False,
        private_for_people: bool = False,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], float] = time.time,
        refuse_kinds: dict[str, str] | None = None,
        on_demand_seconds: float | None = None,
    ) -> None:
        """`check_url(url, allow_private)`: the outbound guard a source's URL passes when it
        is added (the fetchers run it again before every request). `private_for_*`: whether
        a source the operator adds, or a person adds over the network, may reach loopback
        and private addresses. `clock` times a sync; `now` (epoch seconds) dates it and
        decides which sources are due. `refuse_kinds`: kinds this shape cannot sync → why.
        `on_demand_seconds`: the longest a sync asked for now may take (the request's own
        bound: on AWS the api function's timeout); a schedule goes on from there."""
        self.store = store
        self.ingest = ingest
        self.library = library
        self.web = web
        self.git = git
        self.check_url = check_url
        self.private_for_operator = private_for_operator
        self.private_for_people = private_for_people
        self.clock = clock
        self.now = now
        self.refuse_kinds = refuse_kinds or {}
        self.on_demand_seconds = on_demand_seconds
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
        every: str | int | None = DEFAULT_EVERY,
        paused: bool = False,
    ) -> SourceRecord:
        """`operator`: added by the machine's operator (the CLI), who alone may name a Git
        repository on this machine, and (by default) reach private addresses; a door a
        person reaches over the network passes False, so a setting cannot read the server's
        own files or network. `every`: its schedule (services/sources/schedule.py)."""
        check_name(name)
        if kind in self.refuse_kinds:
            raise ValidationError(self.refuse_kinds[kind])
        every = parse_every(every)
        checked = check_settings(kind, settings)
        url = checked["url"].strip()
        private = self.private_for_operator if operator else self.private_for_people
        if kind == "web" or url.startswith(("http://", "https://")):
            self.check_url(url, private)
        elif not operator:
            raise ValidationError("git source: an https:// URL (a path on the server is refused)")
        checked["url"] = url
        if self.store.get_settings(SCOPE, f"{workspace_id}/{name}") is not None:
            raise ConflictError(f"this library already has a source named {name!r}")
        folder = checked.get("folder") or name
        if not folder.strip("/") or ".." in folder.split("/"):
            raise ValidationError("folder: a path inside the library")
        record = SourceRecord(
            new_id(),
            workspace_id,
            name,
            kind,
            checked,
            created_at=self.now(),
            private=private,
            every=every,
            paused=bool(paused),
        )
        self.store.put_settings(SCOPE, f"{workspace_id}/{name}", record.to_dict())
        return record

    def remove(self, workspace_id: str, name: str, *, keep_documents: bool = False) -> int:
        """The source goes; its documents too unless `keep_documents` (they stay, owned by
        the removed source, which no mirror runs for again). The documents deleted."""
        record = self.get(workspace_id, name)
        deleted = 0
        if not keep_documents:
            deleted = len(self.ingest.mirror(workspace_id, record.source, []).deleted)
        self.store.delete_settings(SCOPE, f"{workspace_id}/{name}")
        self.store.delete_settings(STATE_SCOPE, record.id)
        if record.kind == "git":
            self.git.forget(record.id)
        return deleted

    def forget_workspace(self, workspace_id: str) -> None:
        """A deleted library's sources, their sync state and Git copies (its documents go
        with the library)."""
        for record in self.list(workspace_id):
            self.store.delete_settings(SCOPE, f"{workspace_id}/{record.name}")
            self.store.delete_settings(STATE_SCOPE, record.id)
            if record.kind == "git":
                self.git.forget(record.id)

    # -- its schedule ---------------------------------------------------------------------

    def set_schedule(
        self,
        workspace_id: str,
        name: str,
        *,
        every: str | int | _Unset | None = UNSET,
        paused: bool | None = None,
    ) -> SourceRecord:
        """Change when the source syncs by itself: `every` (off: on demand only), `paused`
        (kept, and resumed as it was). What is not given stays."""
        record = self.get(workspace_id, name)
        if not isinstance(every, _Unset):
            record.every = parse_every(every)
        if paused is not None:
            record.paused = bool(paused)
        self._save(record)
        return record

    def due(self, now: float | None = None) -> list[SourceRecord]:
        """Every library's sources whose next sync time has come, the longest waiting first."""
        now = self.now() if now is None else now
        records = [SourceRecord.from_dict(raw) for _, raw in self.store.list_settings(SCOPE)]
        waiting = [r for r in records if r.next_sync_at is not None and r.next_sync_at <= now]
        return sorted(waiting, key=lambda r: (r.next_sync_at, r.id))

    def sync_due(
        self,
        *,
        now: float | None = None,
        deadline: float | None = None,
        stopping: Callable[[], bool] = lambda: False,
    ) -> list[DueSync]:
        """Sync each source that is due, one after another. One source's failure is recorded
        on it (its last sync says why) and logged, and never stops the others. `deadline`
        (on `clock`): no sync starts after it and each stops by it (a bound, as
        `max_seconds`: the next run goes on from there). `stopping`: asked before each
        source (the server is shutting down)."""
        done: list[DueSync] = []
        for record in self.due(now):
            left = None if deadline is None else deadline - self.clock()
            if (left is not None and left < 1) or stopping():
                break
            try:
                report = self._sync_now(record, max_seconds=left)
            except ConflictError:
                continue  # syncing on demand right now: it is not due after that
            except Exception as exc:
                log.exception("source %s (%s) failed to sync", record.name, record.id)
                self._record_failure(record, exc)
                done.append(DueSync(record, None, f"{type(exc).__name__}: {exc}"))
                continue
            done.append(DueSync(record, report, report.failed))
        return done

    # -- a sync ---------------------------------------------------------------------------

    def sync(self, workspace_id: str, name: str, *, max_seconds: float | None = None) -> SyncReport:
        """One sync of the source, now; ConflictError when it is already syncing.
        `max_seconds`: a tighter time bound than the source's own for this run."""
        if max_seconds is None:
            max_seconds = self.on_demand_seconds
        return self._sync_now(self.get(workspace_id, name), max_seconds=max_seconds)

    def _sync_now(self, record: SourceRecord, *, max_seconds: float | None) -> SyncReport:
        if record.kind in self.refuse_kinds:
            raise ValidationError(self.refuse_kinds[record.kind])
        with self._lock:
            if record.id in self._running:
                raise ConflictError(f"source {record.name!r} is syncing already")
            self._running.add(record.id)
        try:
            return self._sync(record, max_seconds=max_seconds)
        finally:
            with self._lock:
                self._running.discard(record.id)

    def _sync(self, record: SourceRecord, *, max_seconds: float | None = None) -> SyncReport:
        started = self.clock()
        state = self.store.get_settings(STATE_SCOPE, record.id) or {}
        report = SyncReport()
        run = record
        if max_seconds is not None and max_seconds < record.settings.get("max_seconds", 1e12):
            run = replace(record, settings={**record.settings, "max_seconds": max_seconds})
        if record.kind == "web":
            self._sync_web(run, state, report)
        else:
            self._sync_git(run, state, report)
        report.seconds = self.clock() - started
        if report.failed is None:
            self.store.put_settings(STATE_SCOPE, record.id, state)
        self._save_last_sync(record, {**report.summary(), "at": self.now()})
        return report

    def _save(self, record: SourceRecord) -> None:
        self.store.put_settings(SCOPE, f"{record.workspace_id}/{record.name}", record.to_dict())

    def _save_last_sync(self, record: SourceRecord, last_sync: dict[str, Any]) -> None:
        """Record a sync on the source as it is now (a schedule changed while it ran is kept),
        unless it was removed (or replaced) meanwhile."""
        current = self.store.get_settings(SCOPE, f"{record.workspace_id}/{record.name}")
        if current is None or current.get("id") != record.id:
            return
        fresh = SourceRecord.from_dict(current)
        fresh.last_sync = record.last_sync = last_sync
        self._save(fresh)

    def _record_failure(self, record: SourceRecord, exc: Exception) -> None:
        """A sync that raised: its last sync says why, and it is next due a period later."""
        report = SyncReport(complete=False, failed=f"{type(exc).__name__}: {exc}")
        self._save_last_sync(record, {**report.summary(), "at": self.now()})

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


def _url_metadata(url: str) -> dict[str, Any] | None:
    """A page's URL as its document's `url` metadata (None when too long to be a value)."""
    try:
        return check_metadata({"url": url})
    except ValidationError:
        return None
