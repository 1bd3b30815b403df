"""What a cloud drive's sync costs (issue 48): a folder of N files (100 a subfolder) in the
fake Microsoft Graph drive and the fake Google Drive (tests/e2e/fake_graph.py,
fake_gdrive.py), each synced into an empty keyword-only library, re-synced with nothing
changed, then with 1% of the files edited and 1% renamed.

    .venv/bin/python -m tests.bench.bench_drives [--files 1000]

Prints, per sync: its seconds (reading the drive and writing the library; indexing runs
behind it), the requests made (Graph: delta pages, then a 302 and a download per file;
Drive: the start token, a listing per folder page, a download per file), the files
downloaded, and what it added, changed and renamed. The fakes answer on loopback: the
requests and downloads are the figures; the seconds are this machine's.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from tests.conftest import make_services
from tests.e2e.fake_gdrive import FakeGDrive
from tests.e2e.fake_graph import FakeGraph


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    n = parser.parse_args().files
    services = make_services(Path(tempfile.mkdtemp()) / "data", embedder="none")
    services.sources.connectors.sleep = lambda seconds: None
    graph, gdrive = FakeGraph(), FakeGDrive(page_size=1000)
    try:
        text = [f"Document {i} about topic {i % 37}.\n".encode() for i in range(n)]
        top = graph.folder("Library")
        folders = [graph.folder(f"f{i:03d}", top) for i in range((n + 99) // 100)]
        sp = [graph.put(f"doc{i:05d}.md", text[i], folders[i // 100]) for i in range(n)]
        root = gdrive.folder("Library")
        dfolders = [gdrive.folder(f"f{i:03d}", root) for i in range((n + 99) // 100)]
        gd = [
            gdrive.add(f"doc{i:05d}.md", "text/markdown", dfolders[i // 100], text[i])
            for i in range(n)
        ]
        services.sources.add(
            "default", "sharepoint", "sp",
            {"url": graph.url, "drive_id": graph.drive_id, "item_id": top},
            operator=True, credential=graph.token,
        )  # fmt: skip
        services.sources.add(
            "default", "gdrive", "gd", {"url": gdrive.url, "folder_id": root},
            operator=True, credential=gdrive.token,
        )  # fmt: skip

        def sync(name: str, label: str) -> None:
            started = time.monotonic()
            r = services.sources.sync("default", name)
            print(
                f"{name}  {label:<24} {time.monotonic() - started:6.2f} s  "
                f"requests {r.requests:6,}  downloaded {r.fetched:6,}  added {len(r.added):6,}"
                f"  changed {len(r.changed):4,}  renamed {len(r.renamed):4,}  failed {r.failed}"
            )

        for name in ("sp", "gd"):
            sync(name, "from empty")
            services.ingest.wait_for_queue(timeout=600)
            sync(name, "nothing changed")
        step = 100
        for i in range(0, n, step):
            graph.edit(sp[i], b"Edited.\n")
            gdrive.edit(gd[i], b"Edited.\n")
        for i in range(step // 2, n, step):
            graph.rename(sp[i], f"renamed{i:05d}.md")
            gdrive.rename(gd[i], f"renamed{i:05d}.md")
        for name in ("sp", "gd"):
            sync(name, "1% edited, 1% renamed")
    finally:
        services.close()
        graph.close()
        gdrive.close()


if __name__ == "__main__":
    main()
