"""The export's promises that the round trips do not show: it streams (one original in memory
at a time, not the library), vectors only when asked, and a failed export leaves no file."""

from __future__ import annotations

import json
import tracemalloc
import zipfile

import pytest

from bunko.adapters.collecting_queue import CollectingQueue
from bunko.bootstrap import build_services
from bunko.bootstrap.moving import moving_parts
from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.domain.audit import AuditQuery
from bunko.services.accounts import LOCAL_PRINCIPAL
from bunko.services.ingest import Upload
from bunko.services.moving import export_library
from tests.conftest import make_services

MB = 1 << 20


def test_the_export_holds_one_original_at_a_time_not_the_library(tmp_path):
    # Stored, never indexed (a queue nobody takes from): the export reads only the records
    # and the originals.
    settings = Settings(data_dir=tmp_path / "data", embedder="none")
    services = build_services(settings, queue=CollectingQueue())
    try:
        words = [f"word{n}" for n in range(50_000)]
        sizes = []
        for n in range(6):  # six files of 2 MB: 12 MB of originals
            text = " ".join(words[n:] + words[:n])
            data = (text * (2 * MB // len(text) + 1)).encode()[: 2 * MB]
            services.ingest.submit(Upload(DEFAULT_WORKSPACE_ID, data, path=f"big/{n}.txt"))
            sizes.append(len(data))
        tracemalloc.start()
        report = export_library(moving_parts(services), DEFAULT_WORKSPACE_ID, tmp_path / "a.zip")
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        services.close()
    assert report.documents == 6
    # one original (2 MB) and the zip's buffers, far from the 12 MB held at once
    assert peak < sum(sizes) / 2, (peak, sum(sizes))


def test_vectors_only_when_asked(tmp_path, use_services):
    services = use_services
    workspace = DEFAULT_WORKSPACE_ID
    doc = services.ingest.submit(
        Upload(workspace, b"# Tides\n\nThe harbour tide tables are posted daily.", path="t.md")
    )
    services.library.wait_until_indexed(workspace, doc.id, timeout=120)
    plain, with_vectors = tmp_path / "plain.zip", tmp_path / "vectors.zip"
    export_library(moving_parts(services), workspace, plain)
    report = export_library(moving_parts(services), workspace, with_vectors, vectors=True)
    assert "vectors.jsonl" not in zipfile.ZipFile(plain).namelist()
    with zipfile.ZipFile(with_vectors) as zipped:
        lines = [json.loads(line) for line in zipped.read("vectors.jsonl").splitlines()]
        manifest = json.loads(zipped.read("manifest.json"))
    chunks = services.library.chunks(workspace, doc.id)
    assert report.vectors >= len(chunks) >= 1
    mine = [line for line in lines if line["path"] == "t.md"]
    assert [line["index"] for line in mine] == [c.index for c in chunks]
    assert {len(line["vector"]) for line in mine} == {services.embedder.dimension}
    assert manifest["vectors"] == report.vectors
    assert manifest["embedding_model"] == services.embedder.name


def test_a_failed_export_leaves_no_archive_behind(tmp_path):
    services = make_services(tmp_path / "data", embedder="none")
    target = tmp_path / "out.zip"
    try:
        services.ingest.submit(Upload(DEFAULT_WORKSPACE_ID, b"hello there", path="a.txt"))
        services.ingest.wait_for_queue(timeout=60)
        parts = moving_parts(services)

        def broken(*args, **kwargs):
            raise OSError("disk full")

        parts.blobs = type("FullDisk", (), {"get": broken})()  # a blob store that fails
        with pytest.raises(OSError, match="disk full"):
            export_library(parts, DEFAULT_WORKSPACE_ID, target)
        assert list(tmp_path.glob("out.zip*")) == []  # neither the archive nor its .partial
        query = AuditQuery(action="cli:export")
        events = services.audit.read(LOCAL_PRINCIPAL, query).events
        assert [(e.outcome, e.status, e.user_id) for e in events] == [("failed", 500, "operator")]
    finally:
        services.close()
