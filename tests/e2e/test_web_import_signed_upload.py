"""The web app on the AWS shape imports an archive larger than a request's body may be, in a
real headless Chromium: POST /libraries/import/upload, a cross-origin PUT of the archive to
the signed URL under the bucket's CORS rule as the CDK stack writes it (S3 is moto's HTTP
server), then POST /libraries/import naming the upload. The work runs in the ingest function
fed from the queue (the import's message, then its documents' and its looks at them), and
the page follows the job to its end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bunko import lambda_entry
from bunko.bootstrap.moving import moving_parts
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.services.ingest import Upload
from bunko.services.moving import export_library
from tests.conftest import make_services
from tests.e2e.aws_web import BUCKET, World, serve_as_deployed
from tests.e2e.browser import SCREENSHOTS, Tab, enter, needs_chromium
from tests.e2e.browser import tab as browser_tab

pytestmark = [needs_chromium]
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
pytest.importorskip("aws_cdk")  # the bucket's CORS rule comes from infra's construct

THRESHOLD = 1024  # config.json's presignUploadsAbove here (4 MiB on AWS): the archive is over
PASSWORD = "correct horse battery"
DOCUMENTS = {
    "keeper/lamp.md": "The keeper trims the lamp wick at dusk.",
    "keeper/weather.md": "Fog over the pond: the horn sounds every minute.",
    "boats/ferry.md": "The ferry leaves the pier at seven and returns at noon.",
}


@pytest.fixture
def importing_shape(moto_url, osmem_clone, monkeypatch) -> Iterator[World]:
    """The deployed shape (moto_url: tests/e2e/conftest.py) signing archives over THRESHOLD,
    and the ingest function fed from the queue."""
    with serve_as_deployed(
        moto_url=moto_url, opensearch_url=osmem_clone.url, monkeypatch=monkeypatch,
        presign_above=THRESHOLD,
    ) as served:  # fmt: skip
        lambda_entry.moves.cache_clear()
        import os

        from tests.aws.handlers import QueuePump

        pump = QueuePump(os.environ["BUNKO_INGEST_QUEUE_URL"])  # the ingest function
        pump.start()
        try:
            yield served
        finally:
            pump.stop()
            lambda_entry.moves.cache_clear()


@pytest.fixture
def small_archive(tmp_path) -> Path:
    """A small library's archive, written by `bunko export`'s code on a data folder."""
    services = make_services(tmp_path / "data", embedder="none", backend="local")
    try:
        for path, text in DOCUMENTS.items():
            doc = services.ingest.submit(Upload(DEFAULT_WORKSPACE_ID, text.encode(), path=path))
            services.library.wait_until_indexed(DEFAULT_WORKSPACE_ID, doc.id, timeout=60)
        target = tmp_path / "lighthouse.bunko.zip"
        export_library(moving_parts(services), DEFAULT_WORKSPACE_ID, target)
    finally:
        services.close()
    assert target.stat().st_size > THRESHOLD
    return target


@pytest.fixture
def tab(chromium, importing_shape) -> Iterator[Tab]:
    """A fresh context on the app, signed up, its requests not routed (the bucket's CORS rule
    is what is under test)."""
    with browser_tab(chromium, importing_shape.url + "/", routed=False) as opened:
        enter(opened.page, "hanako", PASSWORD, new=True)
        yield opened


def test_a_large_archive_goes_to_the_bucket_and_is_imported(importing_shape, tab, small_archive):
    page = tab.page
    importing_shape.allow_origins(importing_shape.url)
    sent = []
    page.on("request", lambda r: sent.append((r.method, r.url)))
    page.get_by_role("link", name="Settings").click()
    form = page.get_by_role("form", name="Import a library from an archive")
    form.get_by_label("Archive (.zip)").set_input_files(str(small_archive))
    form.get_by_label("Name for the imported library (optional)").fill("Lighthouse")
    form.get_by_role("button", name="Import").click()
    done = f"Imported {len(DOCUMENTS)} documents into Lighthouse"
    # the page polls the job: the ingest function imports, then looks at the indexing
    expect(form.get_by_role("status")).to_have_text(done, timeout=120_000)
    expect(page.get_by_role("region", name="Lighthouse")).to_be_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "import-signed-upload.png", full_page=True)

    api = [(m, u.removeprefix(importing_shape.url)) for m, u in sent]
    assert ("POST", "/libraries/import/upload") in api and ("POST", "/libraries/import") in api
    [put] = [u for m, u in sent if m == "PUT"]
    assert put.startswith(f"{importing_shape.moto_url}/{BUCKET}/moves/upload-")
    # the import read the upload, then deleted it
    left = importing_shape.s3.list_objects_v2(Bucket=BUCKET, Prefix="moves/").get("KeyCount")
    assert left == 0
    assert tab.errors == []
