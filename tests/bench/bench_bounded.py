"""Syncs that outlive one run (issue 48, point 4): a first sync bounded per run, run after
run (each as one scheduler turn, or one invocation of the AWS sync function, would run it:
the state read from the store, the lease taken and released) until one completes.

- Confluence: a space of N pages (the fake Confluence, 250 results a listing page), each
  run bounded by `max_pages` (the default 500), then one more run with nothing changed.
- SharePoint: a drive of N files (the fake Graph, 200 items a delta page, each page made
  to take `--page-latency` seconds, as a slow service would), each run bounded by
  `max_seconds`: the first listing alone takes several runs and goes on from its checkpoint.

    .venv/bin/python -m tests.bench.bench_bounded [--pages 5000] [--files 2000]

Prints each run's seconds, requests, what it fetched and added, and whether it completed,
then the totals and the size of the sync state kept (its JSON, and the parts it is kept
in: a DynamoDB item holds 400 KB). The fakes answer on loopback; the seconds are this
machine's.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from tests.conftest import make_services
from tests.e2e.fake_confluence import FakeConfluence
from tests.e2e.fake_graph import FakeGraph

KEY = "me@example.com:bench-token"


class SlowGraph(FakeGraph):
    """The fake Graph whose delta pages take `latency` seconds each."""

    latency = 0.0

    def answer(self, target: str, headers):
        if "/root/delta" in target:
            time.sleep(self.latency)
        return super().answer(target, headers)


def _runs(services, name: str, label: str) -> None:
    total, requests, n = 0.0, 0, 0
    while True:
        n += 1
        started = time.perf_counter()
        r = services.sources.sync("default", name)
        took = time.perf_counter() - started
        total += took
        requests += r.requests
        assert r.failed is None, r.failed
        print(
            f"{label:10} run {n:3}  {took:6.2f} s  requests {r.requests:5}  "
            f"fetched {r.fetched:5}  added {len(r.added):5}  unchanged {r.unchanged:5}  "
            f"{'complete' if r.complete else 'stopped by ' + str(r.stopped_by)}"
        )
        if r.complete:
            break
    record = services.sources.get("default", name)
    state = json.dumps(services.sources.states.load(record.id))
    head = services.sources.store.get_settings("source_state", record.id) or {}
    print(
        f"{label:10} {n} runs, {requests} requests, {total:.1f} s; state {len(state):,} "
        f"characters in {head.get('__parts', 1)} parts"
    )


def confluence(pages: int) -> None:
    site = FakeConfluence("cloud", credential=KEY)
    site.page_size = 250
    for i in range(pages):
        site.page(str(100_000 + i), f"Page {i}", f"<h1>Page {i}</h1><p>Topic {i}.</p>")
    services = make_services(Path(tempfile.mkdtemp()) / "data", embedder="none")
    try:
        settings = {"url": site.url, "space": "ENG", "edition": "cloud", "attachments": False}
        services.sources.add("default", "confluence", "w", settings, operator=True, credential=KEY)
        _runs(services, "w", "confluence")
        _runs(services, "w", "again")
    finally:
        services.close()
        site.close()


def sharepoint(files: int, latency: float, seconds: int) -> None:
    drive = SlowGraph()
    drive.latency = latency
    top = drive.folder("Library")
    folders = [drive.folder(f"f{i:03d}", top) for i in range((files + 99) // 100)]
    for i in range(files):
        drive.put(f"doc{i:05d}.md", f"Document {i}.\n".encode(), folders[i // 100])
    services = make_services(Path(tempfile.mkdtemp()) / "data", embedder="none")
    try:
        settings = {"url": drive.url, "drive_id": drive.drive_id, "max_seconds": seconds}
        services.sources.add(
            "default", "sharepoint", "sp", settings, operator=True, credential=drive.token
        )
        _runs(services, "sp", "sharepoint")
    finally:
        services.close()
        drive.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--page-latency", type=float, default=0.5)
    parser.add_argument("--max-seconds", type=int, default=3)
    args = parser.parse_args()
    confluence(args.pages)
    sharepoint(args.files, args.page_latency, args.max_seconds)


if __name__ == "__main__":
    main()
