"""Sources: a library's connectors, each a source of its own (`connector:<id>`), kept in the
settings store (its settings under `sources`, what its last sync saw under `source_state`).

A connector that reads a service in someone's name keeps a credential: encrypted by the
SecretCipher model configs' API keys use, kept apart from the record (scope
`source_credentials`, by the source's id), decrypted only for its sync, replaceable, and
gone with the source; a listing says only whether there is one.

Here: the records, their credentials and schedule, and running a sync (one at a time per
source) whose report becomes the source's last sync. What a sync reads and writes, the
connector of each kind and the library's one mirror rule, is services/sources/connectors.py.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from bunko.domain import new_id
from bunko.domain.sources import DOORS, connector_source, is_connector
from bunko.errors import (
    ConflictError,
    NotFoundError,
    ParseError,
    UnsupportedMediaError,
    ValidationError,
)
from bunko.ports import SecretCipher, SettingsStore
from bunko.ports.sources import GitRepos, WebFetcher
from bunko.services.ingest import IngestService
from bunko.services.library import Library
from bunko.services.sources.connectors import Connectors
from bunko.services.sources.probe import check_git_http, check_service, check_web
from bunko.services.sources.records import (
    CREDENTIAL_KINDS,
    DEFAULTS,
    ConnectionCheck,
    SourceRecord,
    SyncReport,
    check_credential,
    check_name,
    check_settings,
)
from bunko.services.sources.schedule import DEFAULT_EVERY, UNSET, DueSync, _Unset, parse_every
from bunko.services.sources.state import SyncStates

log = logging.getLogger(__name__)

SCOPE = "sources"
CREDENTIAL_SCOPE = "source_credentials"
# One sync of a source at a time across processes (two Lambda invocations, `bunko source
# sync` beside `bunko serve`): a lease by the source's id, taken before its state is read
# and released after it is written. It lasts the run's time bound and this margin (a run
# may end its file past the bound), so a holder that crashed frees it after that.
LEASE_SCOPE = "source_leases"
LEASE_MARGIN = 300.0
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
        now: Callable[[], float] = time.time,
        refuse_kinds: dict[str, str] | None = None,
        on_demand_seconds: float | None = None,
    ) -> None:
        """`check_url(url, allow_private)`: the outbound guard a source's URL passes when it
        is added (the fetchers run it again before every request). `private_for_*`: whether
        a source the operator adds, or a person adds over the network, may reach loopback
        and private addresses. `cipher`: what keeps credentials at rest (None: a source
        cannot be given one). `sleep`: how an API connector waits out throttling. `clock`
        times a sync; `now` (epoch seconds) dates it and decides which sources are due.
        `refuse_kinds`: kinds this shape cannot sync → why. `on_demand_seconds`: the longest
        a sync asked for now may take (the request's own bound: on AWS the api function's
        timeout); a schedule goes on from there."""
        self.store = store
        self.states = SyncStates(store)  # what each source's last sync saw
        self.ingest = ingest
        self.library = library
        self.web = web
        self.git = git
        self.check_url = check_url
        self.cipher = cipher
        self.private_for_operator = private_for_operator
        self.private_for_people = private_for_people
        self.clock = clock
        self.connectors = Connectors(
            ingest=ingest,
            library=library,
            web=web,
            git=git,
            credential=self.credential,
            clock=clock,
            sleep=sleep,
        )
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
        credential: str | None = None,
        every: str | int | None = DEFAULT_EVERY,
        paused: bool = False,
    ) -> SourceRecord:
        """`operator`: added by the machine's operator (the CLI), who alone may name a Git
        repository on this machine, and (by default) reach private addresses; a door a
        person reaches over the network passes False, so a setting cannot read the server's
        own files or network. `credential`: the secret the connector reads in someone's
        name with (kept encrypted, never shown). `every`: its schedule
        (services/sources/schedule.py)."""
        check_name(name)
        if kind in self.refuse_kinds:
            raise ValidationError(self.refuse_kinds[kind])
        every = parse_every(every)
        secret = None if credential is None else self._encrypt(kind, credential)
        checked, private = self._checked(kind, settings, operator=operator)
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
        self,
        kind: str,
        settings: dict[str, Any],
        *,
        operator: bool = False,
        credential: str | None = None,
    ) -> ConnectionCheck:
        """One request to the place the settings name, through the guard its syncs pass,
        without adding or syncing anything (services/sources/probe.py); a service's with
        `credential` (used for this request only, never kept), after its token exchange when
        it has one. A URL the guard refuses raises, as adding it would."""
        checked, private = self._checked(kind, settings, operator=operator)
        url = checked["url"]
        if kind in CREDENTIAL_KINDS:
            given = None if credential is None else check_credential(kind, credential)
            return check_service(kind, checked, given, self.web, allow_private=private)
        if kind != "git":  # a website, or a service's base URL: does it answer at all
            limit = checked.get("max_page_bytes", DEFAULTS["web"]["max_page_bytes"])
            return check_web(self.web, url, allow_private=private, max_bytes=limit)
        if not url.startswith(("http://", "https://")):
            found = os.path.isdir(url)
            said = "a folder on this machine" if found else "no such folder on this machine"
            return ConnectionCheck(found, said, url=url)
        return check_git_http(self.web, url, checked["branch"], allow_private=private)

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
        self.states.forget(record.id)
        self.store.delete_settings(CREDENTIAL_SCOPE, record.id)
        self.store.delete_settings(LEASE_SCOPE, record.id)
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
        self._update(record, every=record.every, paused=record.paused)
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
        record = self.get(workspace_id, name)
        if record.paused:
            raise ConflictError(f"source {name!r} is paused: resume it to sync")
        return self._sync_now(record, max_seconds=max_seconds)

    def _sync_now(self, record: SourceRecord, *, max_seconds: float | None) -> SyncReport:
        if record.kind in self.refuse_kinds:
            raise ValidationError(self.refuse_kinds[record.kind])
        with self._lock:
            if record.id in self._running:
                raise ConflictError(f"source {record.name!r} is syncing already")
            self._running.add(record.id)
        try:
            bound = record.settings.get("max_seconds", DEFAULTS["web"]["max_seconds"])
            if max_seconds is not None:
                bound = min(bound, max_seconds)
            holder, now = new_id(), self.now()
            if not self.store.take_lease(
                LEASE_SCOPE, record.id, holder, now=now, until=now + bound + LEASE_MARGIN
            ):
                raise ConflictError(
                    f"source {record.name!r} is syncing already (in another process)"
                )
            try:
                return self._sync(record, max_seconds=max_seconds)
            finally:
                self.store.release_lease(LEASE_SCOPE, record.id, holder)
        finally:
            with self._lock:
                self._running.discard(record.id)

    def _sync(self, record: SourceRecord, *, max_seconds: float | None = None) -> SyncReport:
        started = self.clock()
        state = self.states.load(record.id)
        report = SyncReport()
        run = record
        if max_seconds is not None and max_seconds < record.settings.get("max_seconds", 1e12):
            run = replace(record, settings={**record.settings, "max_seconds": max_seconds})
        self.connectors.run(run, state, report)
        report.seconds = self.clock() - started
        if report.failed is None:
            self.states.save(record.id, state)
        self._save_last_sync(record, {**report.summary(), "at": self.now()})
        return report

    def _save_last_sync(self, record: SourceRecord, last_sync: dict[str, Any]) -> None:
        """Record a sync on the source as it is now (a schedule changed while it ran is kept),
        unless it was removed (or replaced) meanwhile."""
        record.last_sync = last_sync
        self._update(record, last_sync=last_sync)

    def _record_failure(self, record: SourceRecord, exc: Exception) -> None:
        """A sync that raised: its last sync says why, and it is next due a period later."""
        report = SyncReport(complete=False, failed=f"{type(exc).__name__}: {exc}")
        self._save_last_sync(record, {**report.summary(), "at": self.now()})


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
