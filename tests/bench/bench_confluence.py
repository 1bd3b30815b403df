"""What a Confluence sync costs (issue 48), against the fake Confluence on a local socket
(tests/e2e/fake_confluence.py: Atlassian's documented shapes, not a real site): a space of
1,000 pages synced into an empty keyword-only library, re-synced with nothing changed, then
with 1% of its pages changed; Cloud and Data Center without attachments, then Cloud with an
attachment on every tenth page.

    .venv/bin/python -m tests.bench.bench_confluence [--pages 1000]

Prints, per sync: its seconds (listing and reading the space, writing the library; indexing
runs behind it), the requests made, the bodies and files fetched, what it added and changed.
Listings answer 250 results at a time (v2's most; Data Center's own page is 100).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from tests.conftest import make_services
from tests.e2e.fake_confluence import FakeConfluence

KEYS = {"cloud": "me@example.com:bench-token", "datacenter": "bench-personal-access-token"}


def bench(edition: str, pages: int, attachments: bool) -> None:
    site = FakeConfluence(edition, credential=KEYS[edition])
    site.page_size = 250
    for i in range(pages):
        page_id = str(100_000 + i)
        site.page(page_id, f"Page {i}", f"<h1>Page {i}</h1><p>Notes about topic {i}.</p>")
        if attachments and i % 10 == 0:
            site.attach(page_id, f"att{i}", f"notes-{i}.txt", f"notes {i}\n".encode(), "text/plain")
    services = make_services(Path(tempfile.mkdtemp()) / "data", embedder="none")
    settings = {"url": site.url, "space": "ENG", "edition": edition,
                "attachments": attachments, "max_pages": 100_000}  # fmt: skip
    services.sources.add(
        "default", "confluence", "w", settings, operator=True, credential=KEYS[edition]
    )

    def sync(label: str) -> None:
        started = time.perf_counter()
        r = services.sources.sync("default", "w")
        took = time.perf_counter() - started
        print(
            f"{edition:10} attachments={'yes' if attachments else 'no ':3} {label:16} "
            f"{took:6.2f} s  requests {r.requests:5}  fetched {r.fetched:5}  "
            f"added {len(r.added):5}  changed {len(r.changed):3}  unchanged {r.unchanged:5}"
        )

    try:
        sync("from empty")
        services.ingest.wait_for_queue(timeout=900)
        sync("nothing changed")
        for i in range(0, pages, 100):
            site.edit(str(100_000 + i), body=f"<p>Changed {i}.</p>")
        sync("1% changed")
    finally:
        services.close()
        site.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    args = parser.parse_args()
    bench("cloud", args.pages, False)
    bench("datacenter", args.pages, False)
    bench("cloud", args.pages, True)


if __name__ == "__main__":
    main()
