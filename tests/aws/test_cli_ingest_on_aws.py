"""`bunko ingest` run by an operator against a deployment (tests/aws/deployment.py): the files
go to the bucket and the queue, the ingest function indexes them, and the command waits for
that, as it waits for its own worker on a data folder. It watches the table for each
document's end: SQS, unlike the embedded queue, cannot say when it has run dry."""

from __future__ import annotations

from pathlib import Path

import pytest

from bunko.bootstrap import build_services
from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.services.search import SearchOptions
from tests.aws.deployment import bunko

pytestmark = pytest.mark.slow  # `bunko` processes against moto's and osmem's servers

NOTES = {
    "pier.md": "# The pier\n\nThe ferry to Kessock leaves the north pier at seven.",
    "lamp.txt": "The lighthouse lamp is cleaned every Thursday by the keeper.",
    "fees.md": "# Harbour fees\n\nA mooring costs twelve pounds a night in summer.",
}


def test_bunko_ingest_waits_for_the_ingest_function_and_reports_each_file(
    moto_deployment, tmp_path: Path
):
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7 this is not a PDF")

    out = bunko(moto_deployment, "ingest", str(folder))

    assert out.returncode == 1, out.stdout + out.stderr  # one file failed: the command says so
    assert "3 indexed, 1 failed" in out.stdout, out.stdout
    assert "failed " in out.stderr and "broken.pdf" in out.stderr
    deployed = build_services(Settings(password_hash_cost="light"))
    try:  # indexed when the command said so: the functions' own search finds each file
        for name, query in (
            ("pier.md", "ferry"),
            ("lamp.txt", "lighthouse"),
            ("fees.md", "mooring"),
        ):
            hits = deployed.search.search(DEFAULT_WORKSPACE_ID, query, SearchOptions(limit=3)).items
            assert hits and hits[0].path.endswith(f"/notes/{name}"), (query, hits)
    finally:
        deployed.close()
