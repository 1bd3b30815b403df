"""Moving a library: export and import time, and the archive's size, for N documents.

    .venv/bin/python -m tests.bench.bench_move [--docs 1000] [--embedder use]

Builds a library of N passages (SciFact and JSQuAD, half each, one Markdown file a passage)
in a throw-away data folder, then, in this process, through the same calls `bunko export`
and `bunko import` make:
- export: the archive written (one original in memory at a time), its size, and the peak
  of Python's own allocations during a second export (tracemalloc) against the originals'
  total: what streaming keeps out of memory;
- import into a new data folder with the embedder given (the default model: the import's
  time is mostly embedding) and again with none (keyword search only: the rest of the work),
  each until every document is indexed;
- the same import run again (idempotent: every document already there);
- the library exported with its vectors (`--vectors`: the export embeds every passage), and
  that archive imported by the same model, which takes the archive's vectors instead of
  embedding again.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import tracemalloc
from pathlib import Path

from bunko.bootstrap import build_services
from bunko.bootstrap.moving import moving_parts
from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.services.ingest import Upload
from bunko.services.moving import export_library, import_library
from tests.bench.bench_ingest import passages

REPO = Path(__file__).resolve().parents[2]


def services_at(folder: Path, embedder: str):
    return build_services(
        Settings(
            data_dir=folder, embedder=embedder, refine_embedder="none", password_hash_cost="light"
        )
    )


def timed_import(archive: Path, folder: Path, embedder: str) -> tuple[float, object]:
    services = services_at(folder, embedder)
    try:
        if services.embedder is not None and hasattr(services.embedder, "warm_up"):
            services.embedder.warm_up()  # the model's load is not the import's
        started = time.perf_counter()
        report = import_library(moving_parts(services), archive)
        return time.perf_counter() - started, report
    finally:
        services.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--embedder", default="use")
    parser.add_argument(
        "--eval-dir",
        type=Path,
        default=Path(os.environ.get("BUNKO_EVAL_DIR", REPO.parent / "shared" / "eval")),
    )
    args = parser.parse_args()
    texts = passages(args.eval_dir, args.docs)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = services_at(root / "source", args.embedder)
        started = time.perf_counter()
        for n, text in enumerate(texts):
            source.ingest.submit(
                Upload(DEFAULT_WORKSPACE_ID, text.encode(), path=f"passages/{n:05d}.md",
                       category="scifact" if n < len(texts) // 2 else "jsquad",
                       metadata={"n": float(n)}, source="cli")
            )  # fmt: skip
        source.ingest.wait_for_queue(timeout=3600)
        built = time.perf_counter() - started
        chunks = source.library.count_chunks(DEFAULT_WORKSPACE_ID)
        originals = sum(len(t.encode()) for t in texts)
        archive = root / "library.zip"
        started = time.perf_counter()
        export_library(moving_parts(source), DEFAULT_WORKSPACE_ID, archive)
        exported = time.perf_counter() - started
        tracemalloc.start()
        export_library(moving_parts(source), DEFAULT_WORKSPACE_ID, root / "again.zip")
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        source.close()

        print(f"library: {len(texts)} documents, {chunks} chunks, originals {originals:,} bytes "
              f"(built with {args.embedder} in {built:.1f} s)")  # fmt: skip
        print(f"export: {exported:.2f} s, archive {archive.stat().st_size:,} bytes; "
              f"peak Python allocation during an export {peak:,} bytes")  # fmt: skip
        for embedder in (args.embedder, "none"):
            seconds, report = timed_import(archive, root / f"into-{embedder}", embedder)
            print(f"import ({embedder}): {seconds:.1f} s, {report.added} added, "
                  f"{report.indexed} indexed, {len(report.failed)} failed")  # fmt: skip
        seconds, report = timed_import(archive, root / f"into-{args.embedder}", args.embedder)
        print(f"import again ({args.embedder}): {seconds:.2f} s, {report.added} added, "
              f"{report.unchanged} already there")  # fmt: skip
        source = services_at(root / "source", args.embedder)
        if source.embedder is not None and hasattr(source.embedder, "warm_up"):
            source.embedder.warm_up()
        with_vectors = root / "with-vectors.zip"
        started = time.perf_counter()
        export_library(moving_parts(source), DEFAULT_WORKSPACE_ID, with_vectors, vectors=True)
        exported = time.perf_counter() - started
        source.close()
        print(f"export --vectors: {exported:.2f} s, archive {with_vectors.stat().st_size:,} "
              "bytes")  # fmt: skip
        seconds, report = timed_import(with_vectors, root / "into-reused", args.embedder)
        print(f"import with the archive's vectors ({args.embedder}): {seconds:.1f} s, "
              f"{report.indexed} indexed, {report.vectors_reused} passages' vectors taken, "
              f"{report.vectors_embedded} embedded")  # fmt: skip


if __name__ == "__main__":
    main()
