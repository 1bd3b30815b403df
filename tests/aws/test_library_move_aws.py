"""A library moved from the embedded shape to a deployment and back: exported from a data
folder, imported into the AWS shape (DynamoDB and S3 on moto, OpenSearch on osmem-server)
by the same import code, its documents indexed by the ingest function from the SQS queue,
exported from there, and imported into a new data folder. After each move the library holds
the same documents and members and ranks the same top hits (keyword search on every side:
the deployment here has no embedding model)."""

from __future__ import annotations

from pathlib import Path

from bunko.bootstrap import build_services
from bunko.bootstrap.moving import moving_parts
from bunko.config import Settings
from bunko.domain.audit import AuditQuery
from bunko.services.accounts import LOCAL_PRINCIPAL
from bunko.services.moving import export_library, import_library
from tests.conftest import make_services
from tests.e2e.library_move import LIBRARY, PASSWORD, documents, make_library, top_hits


def test_embedded_to_aws_and_back_keeps_the_library_and_its_top_hits(aws_shape, tmp_path: Path):
    first, back = tmp_path / "first.zip", tmp_path / "back.zip"
    source = make_services(tmp_path / "source", embedder="none", backend="local")
    try:
        workspace = make_library(source)
        before, hits = documents(source, workspace), top_hits(source, workspace)
        export_library(moving_parts(source), workspace, first)
    finally:
        source.close()
    assert all(hits[q] for q in hits)  # every question finds something to compare

    aws = aws_shape
    aws.accounts.auth.create_user("ada", PASSWORD, is_admin=True)
    aws.accounts.auth.create_user("grace", PASSWORD)
    report = import_library(moving_parts(aws), first, wait_seconds=120)
    assert (report.added, report.indexed, report.pending) == (7, 7, [])
    assert report.members_missing == ["lin"] and report.members_added == ["ada", "grace"]
    moved = aws.accounts.libraries.workspace_named(LIBRARY)
    assert documents(aws, moved) == before
    assert top_hits(aws, moved) == hits
    again = import_library(moving_parts(aws), first, wait_seconds=120)
    assert (again.added, again.unchanged) == (0, 7)
    assert aws.library.count_documents(moved) == 7
    export_library(moving_parts(aws), moved, back)
    trail = aws.audit.read(LOCAL_PRINCIPAL, AuditQuery(user_id="operator")).events
    assert [(e.action, e.outcome) for e in trail] == [
        ("cli:export", "ok"), ("cli:import", "ok"), ("cli:import", "ok"),
    ]  # fmt: skip

    target = make_services(tmp_path / "target", embedder="none", backend="local")
    try:
        target.accounts.auth.create_user("grace", PASSWORD)
        home = import_library(moving_parts(target), back, wait_seconds=120)
        assert (home.members_missing, home.members_added) == (["ada"], ["grace"])
        landed = target.accounts.libraries.workspace_named(LIBRARY)
        assert documents(target, landed) == before
        assert top_hits(target, landed) == hits
    finally:
        target.close()


def test_the_archives_scratch_files_are_in_the_scratch_folder(aws_env, monkeypatch, tmp_path):
    """An upload spooled by the API function and an archive read back from the bucket by the
    ingest function land in BUNKO_SCRATCH_DIR (the function's /tmp), as every other scratch
    file does, and are gone once discarded."""
    scratch = tmp_path / "lambda-tmp"
    monkeypatch.setenv("BUNKO_SCRATCH_DIR", str(scratch))
    services = build_services(Settings(password_hash_cost="light"))
    try:
        moves = services.moves
        upload = moves.spool_file()
        assert upload.parent.parent == scratch
        upload.write_bytes(b"an archive's bytes")
        moves.archives.keep("scratch-check", upload)  # to the bucket; the copy here goes
        assert list(scratch.iterdir()) == []
        fetched = moves.archives.fetch("scratch-check")
        assert fetched.parent.parent == scratch and fetched.read_bytes() == b"an archive's bytes"
        moves.discard(fetched)
        assert list(scratch.iterdir()) == []
    finally:
        services.close()
