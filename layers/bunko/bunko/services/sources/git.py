"""The Git connector: the files of one branch of a repository (an https URL or a local path),
chosen by include/exclude globs, each kept as a document under the source's folder.

Incremental by commit id: a sync fetches the branch (only new objects); the same commit as
last time, fully synced, reads nothing. Otherwise the commit's file list (path → blob id)
is compared with the one kept: a file whose blob changed is read and written, one no longer
there is deleted by the mirror, and `git diff -M` between the last synced commit and the new
one tells renames, so a renamed file keeps its document (id, revisions, metadata). Files are
read in bounded runs (files, bytes, time); a run a bound stopped goes on at the next sync.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bunko.errors import BunkoError
from bunko.ports.sources import GitRepos
from bunko.services.sources.globs import selected
from bunko.services.sources.records import SourceRecord, SyncReport

_BATCH = 200  # blobs read by one `git cat-file --batch`


class GitSync:
    def __init__(
        self,
        record: SourceRecord,
        state: dict[str, Any],
        repos: GitRepos,
        report: SyncReport,
        *,
        supported: Callable[[str], bool],
        max_file_bytes: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.record = record
        self.settings = record.settings
        self.state = state
        self.repos = repos
        self.report = report
        self.supported = supported
        self.max_file_bytes = max_file_bytes
        self.clock = clock
        self.started = clock()
        self.seen: list[str] = []
        self.moved: dict[str, str] = {}  # new library path → old
        self.todo: list[tuple[str, str, int]] = []  # (repository path, blob, size)
        self.chosen: set[str] | None = None  # None: the commit synced last time, all read

    def path(self, repo_path: str) -> str:
        return f"{self.record.folder}/{repo_path}"

    def plan(self) -> bool:
        """Fetch and compare: fills `seen`, `moved` and `todo`. False (with report.failed)
        when the repository cannot be read: then nothing is mirrored."""
        s = self.settings
        try:
            self.report.requests += 1
            head = self.repos.fetch(
                self.record.id,
                s["url"],
                s["branch"],
                allow_private=self.record.private,
                # the run's time (on AWS: what the invocation has left) bounds the fetch too
                max_seconds=s["max_seconds"] - (self.clock() - self.started),
            )
        except BunkoError as exc:
            self.report.failed = str(exc)
            return False
        self.report.revision = head
        files: dict[str, str] = self.state.setdefault("files", {})
        last = self.state.get("commit")
        if head == last and self.state.get("complete", True):
            self.seen = [self.path(p) for p in files]
            self.report.unchanged = len(files)
            return True
        tree = self.repos.tree(self.record.id, head)
        chosen = {
            p: blob
            for p, blob in tree.items()
            if selected(p, s["include"], s["exclude"]) and self.supported(p)
        }
        if last and last != head:
            for change in self.repos.diff(self.record.id, last, head):
                if change.status == "R" and change.old_path in files and change.path in chosen:
                    self.moved[self.path(change.path)] = self.path(change.old_path)
        self._same_blob_renames(chosen, files)
        self.seen = [self.path(p) for p in chosen]
        new = sorted(p for p, blob in chosen.items() if files.get(p) != blob)
        sizes = self.repos.sizes(self.record.id, sorted({chosen[p] for p in new}))
        self.report.unchanged += len(chosen) - len(new)
        for p in new:
            blob, size = chosen[p], sizes[chosen[p]]
            if size > self.max_file_bytes:
                self.report.errors[self.path(p)] = (
                    f"{size:,} bytes; the limit is {self.max_file_bytes:,} bytes"
                )
                files[p] = blob  # not read again until it changes
            else:
                self.todo.append((p, blob, size))
        self.chosen = set(chosen)
        self.state["commit"] = head
        return True

    def _same_blob_renames(self, chosen: dict[str, str], files: dict[str, str]) -> None:
        """A file gone from its path whose same bytes (blob id) appear at a path not synced
        before is a rename too: what tells one when the copy holds no last commit to diff
        against (a new AWS function instance's empty /tmp, a force-push)."""
        told = set(self.moved.values())
        gone: dict[str, list[str]] = {}
        for p, blob in files.items():
            if p not in chosen and self.path(p) not in told:
                gone.setdefault(blob, []).append(p)
        for p in sorted(chosen):
            if p not in files and self.path(p) not in self.moved and gone.get(chosen[p]):
                self.moved[self.path(p)] = self.path(gone[chosen[p]].pop(0))

    def renamed(self, old_path: str, new_path: str) -> None:
        """A rename the mirror made: the file's blob is known at its new path."""
        files = self.state["files"]
        prefix = self.record.folder + "/"
        old, new = old_path.removeprefix(prefix), new_path.removeprefix(prefix)
        if old in files:
            files.setdefault(new, files.pop(old))

    def forget_gone(self) -> None:
        """Once the mirror has run: files no longer in the source leave the state."""
        if self.chosen is not None:
            files = self.state["files"]
            for gone in set(files) - self.chosen:
                del files[gone]

    def batches(self) -> list[list[tuple[str, str, int]]]:
        """The files to read now, in batches, within the run's bounds; `complete` says
        whether all were taken."""
        s, taken, total = self.settings, [], 0
        files = self.state["files"]
        todo = [t for t in self.todo if files.get(t[0]) != t[1]]  # a rename may have known it
        self.report.unchanged += len(self.todo) - len(todo)
        for item in todo:
            if len(taken) >= s["max_files"]:
                self.report.stopped_by = "max_files"
                break
            if taken and total + item[2] > s["max_bytes"]:
                self.report.stopped_by = "max_bytes"
                break
            taken.append(item)
            total += item[2]
        self.report.complete = len(taken) == len(todo)
        return [taken[i : i + _BATCH] for i in range(0, len(taken), _BATCH)]

    def out_of_time(self) -> bool:
        if self.clock() - self.started >= self.settings["max_seconds"]:
            self.report.stopped_by, self.report.complete = "max_seconds", False
            return True
        return False
