"""What one sync of a source reads and writes: the connector of its kind reads the place
(services/sources/web.py, git.py, confluence.py; graph.py and gdrive.py through drives.py),
then the library's one mirror rule, `IngestService.mirror(source, seen)`, runs: what this
connector put here and no longer sees is deleted (renames keep their documents), nothing
another source owns is touched; then what is new or changed is written. A file that cannot
be written is recorded on the sync's report, never the end of the sync. The sources' records
and when they sync are services/sources/sources.py's."""

from __future__ import annotations

import contextlib
import hashlib
import posixpath
from collections.abc import Callable
from typing import Any

from bunko.domain.metadata import check_metadata
from bunko.errors import BunkoError, ParseError, UnsupportedMediaError, ValidationError
from bunko.parsing.mime import is_supported
from bunko.ports.sources import GitRepos, WebAnswer, WebFetcher
from bunko.services.ingest import IngestService, Upload
from bunko.services.library import Library
from bunko.services.sources.api import ApiClient, CredentialRejected, credential_failure
from bunko.services.sources.confluence import ConfluenceSync
from bunko.services.sources.confluence_api import auth_headers
from bunko.services.sources.drives import DriveRun, sync_files
from bunko.services.sources.gdrive import DriveSync, rate_limited
from bunko.services.sources.git import GitSync
from bunko.services.sources.graph import GraphSync
from bunko.services.sources.records import SourceRecord, SyncReport
from bunko.services.sources.tokens import access_token
from bunko.services.sources.web import WebSync

# Failures that are the file's own (empty, unreadable, a type Bunko does not read): the same
# bytes fail the same way, so they are not read again until they change.
_THE_FILES = (ValidationError, UnsupportedMediaError, ParseError)


class Connectors:
    """One method per kind of source, `_sync_<kind>`, each reading its place with `web` or
    `git` in the source's name (`credential(record)`: its decrypted credential)."""

    def __init__(
        self,
        *,
        ingest: IngestService,
        library: Library,
        web: WebFetcher,
        git: GitRepos,
        credential: Callable[[SourceRecord], str | None],
        clock: Callable[[], float],
        sleep: Callable[[float], None],
    ) -> None:
        self.ingest = ingest
        self.library = library
        self.web = web
        self.git = git
        self.credential = credential
        self.clock = clock
        self.sleep = sleep  # how API connectors wait out throttling (tests: no real wait)

    def run(self, record: SourceRecord, state: dict[str, Any], report: SyncReport) -> None:
        """One sync of `record` from `state` (updated in place), told on `report`."""
        connector = getattr(self, f"_sync_{record.kind}", None)
        if connector is None:
            report.failed = f"no connector for a {record.kind} source here"
        else:
            connector(record, state, report)

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

    # -- the cloud drives (SharePoint/OneDrive, Google Drive) ---------------------------

    def _api(
        self,
        record: SourceRecord,
        report: SyncReport,
        rate_limit: Callable[[WebAnswer], bool] | None = None,
    ) -> ApiClient | None:
        """The client a cloud drive is read with, in the source's name: a bearer token, the
        credential itself or one it is exchanged for (tokens.py). None, with
        `report.failed`, when there is none: nothing is read, nothing deleted."""
        try:
            credential = self.credential(record)
        except ValueError:
            report.failed = "its credential cannot be read (the key changed): set it again"
            return None
        if credential is None:
            report.failed = f"no credential kept for this {record.kind} source; give it one"
            return None
        try:
            token = access_token(
                record.kind,
                credential,
                record.settings,
                self.web,
                report,
                allow_private=record.private,
            )
        except CredentialRejected as exc:
            report.failed = credential_failure(exc)
            return None
        except BunkoError as exc:
            report.failed = f"no access token, nothing deleted: {exc}"
            return None
        return ApiClient(
            self.web,
            report,
            allow_private=record.private,
            headers={"Authorization": f"Bearer {token}"},
            sleep=self.sleep,
            rate_limited=rate_limit,
        )

    def _sync_drive(
        self, record: SourceRecord, state: dict[str, Any], report: SyncReport, run: DriveRun
    ) -> None:
        def mirror(seen: list[str], moved: dict[str, str]) -> list[tuple[str, str]]:
            return self._mirror(record, seen, report, moved=moved)

        sync_files(
            run,
            settings=record.settings,
            state=state,
            report=report,
            mirror=mirror,
            write=lambda file, data: self._write(
                record, file.path, data, report, _url_metadata(file.url) if file.url else None
            ),
            max_file_bytes=self.ingest.policy.max_file_bytes,
            clock=self.clock,
            relabel=lambda file: self._relabel(record, file.path, file.url),
        )

    def _relabel(self, record: SourceRecord, path: str, url: str) -> None:
        """The document at `path` gets `url` as its link, its bytes not read again; a
        failure waits for its next change (the link is a convenience, not its content)."""
        doc = self.library.at(record.workspace_id, path)
        meta = _url_metadata(url) if url else None
        if doc is None or doc.source != record.source or meta is None:
            return
        wanted = {**doc.metadata, **meta}
        if wanted != doc.metadata:
            with contextlib.suppress(BunkoError):
                self.ingest.set_metadata(record.workspace_id, doc.id, wanted)

    def _sync_sharepoint(
        self, record: SourceRecord, state: dict[str, Any], report: SyncReport
    ) -> None:
        api = self._api(record, report)
        if api is not None:
            run = GraphSync(record, state, api, report, supported=_supported, clock=self.clock)
            self._sync_drive(record, state, report, run)

    def _sync_gdrive(self, record: SourceRecord, state: dict[str, Any], report: SyncReport) -> None:
        api = self._api(record, report, rate_limited)
        if api is not None:
            run = DriveSync(record, state, api, report, supported=_supported, clock=self.clock)
            self._sync_drive(record, state, report, run)


def _supported(name: str) -> bool:
    """A file Bunko reads, by its name's extension."""
    return is_supported(posixpath.basename(name), None)


def _url_metadata(url: str) -> dict[str, Any] | None:
    """A page's URL as its document's `url` metadata (None when too long to be a value)."""
    try:
        return check_metadata({"url": url})
    except ValidationError:
        return None
