"""`bunko export` and `bunko import` run as the operator runs them against a deployment: real
processes with BUNKO_BACKEND=aws and the stack's settings, talking to moto's server (DynamoDB,
S3, SQS, Secrets Manager, KMS over HTTP) and osmem-server (OpenSearch), while the ingest
function, fed from the queue, indexes what the import queued. The round trip:

    data folder --export--> archive --import (process)--> AWS shape
                --export (process)--> archive --import--> new data folder

with the same documents, the same earlier revisions, the marked answers and the same top
hits after each move (keyword search on every side: the deployment has no model here)."""

from __future__ import annotations

import json
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from bunko.bootstrap import build_services
from bunko.config import Settings
from bunko.services.accounts.tokens import principal_for
from tests.aws.deployment import bunko
from tests.conftest import make_services
from tests.e2e.library_move import (
    LEAVE,
    LIBRARY,
    PASSWORD,
    ask,
    documents,
    history,
    top_hits,
    with_history,
)

pytestmark = pytest.mark.slow  # `bunko` processes against moto's and osmem's servers


def local(data: Path) -> dict[str, str]:
    return {"BUNKO_DATA_DIR": str(data), "BUNKO_EMBEDDER": "none", "BUNKO_BACKEND": "local"}


def test_bunko_export_and_import_processes_move_a_library_to_aws_and_back(
    moto_deployment, tmp_path: Path
):
    first, back = tmp_path / "first.zip", tmp_path / "back.zip"
    source = make_services(tmp_path / "source", embedder="none", backend="local")
    try:
        workspace = with_history(source)
        grace, kept = ask(source, workspace, "grace", "How long is parental leave?", found=True)
        source.answers.mark(grace, kept.id, mark="up", comment="clear")
        before, hits = documents(source, workspace), top_hits(source, workspace)
        chain = history(source, workspace, LEAVE)
    finally:
        source.close()
    assert all(hits.values())  # every question finds something to compare
    out = bunko(local(tmp_path / "source"), "export", LIBRARY, str(first), "--conversations")
    assert out.returncode == 0, out.stderr

    for user in (["ada", "--admin"], ["grace"]):
        made = bunko(moto_deployment, "user", "create", *user)
        assert made.returncode == 0, made.stderr
    imported = bunko(moto_deployment, "import", str(first), "--wait", "300")
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert f"imported into library {LIBRARY!r} (made now): 7 added" in imported.stdout
    assert "7 indexed" in imported.stdout and "members added: ada, grace" in imported.stdout
    assert "earlier revisions written: 3; marked or missing answers added: 1" in imported.stdout
    assert "member 'lin' has no account here" in imported.stderr

    aws = build_services(Settings(password_hash_cost="light"))
    try:
        moved = aws.accounts.libraries.workspace_named(LIBRARY)
        assert documents(aws, moved) == before
        assert top_hits(aws, moved) == hits
        assert history(aws, moved, LEAVE) == chain
        ada = aws.accounts.auth.users.get_user_by_username("ada")
        marked, total = aws.answers.marked(replace(principal_for(ada), workspace_id=moved), limit=5)
        assert total == 1 and (marked[0].mark, marked[0].comment) == ("up", "clear")
    finally:
        aws.close()
    again = bunko(moto_deployment, "import", str(first), "--wait", "300")
    assert again.returncode == 0, again.stderr
    assert "0 added, 7 already here" in again.stdout

    exported = bunko(moto_deployment, "export", LIBRARY, str(back), "--conversations")
    assert exported.returncode == 0, exported.stderr
    assert "7 documents" in exported.stdout and "3 earlier revisions" in exported.stdout
    with zipfile.ZipFile(back) as zipped:
        manifest = json.loads(zipped.read("manifest.json"))
    assert (manifest["documents"], manifest["revisions"], manifest["answers"]) == (7, 3, 1)

    home = tmp_path / "home"
    target = make_services(home, embedder="none", backend="local")
    target.accounts.auth.create_user("grace", PASSWORD)
    target.close()
    landed_out = bunko(local(home), "import", str(back))
    assert landed_out.returncode == 0, landed_out.stdout + landed_out.stderr
    target = make_services(home, embedder="none", backend="local")
    try:
        landed = target.accounts.libraries.workspace_named(LIBRARY)
        assert documents(target, landed) == before
        assert top_hits(target, landed) == hits
        assert history(target, landed, LEAVE) == chain
    finally:
        target.close()
