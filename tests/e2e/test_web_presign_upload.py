"""The web app on the AWS shape uploads a large file straight to S3, in a real headless
Chromium: POST /uploads/presign with the upload's options, then a cross-origin PUT to the
presigned URL with exactly the signed headers. S3 is moto's HTTP server (as a browser must
reach it), honouring the bucket's CORS rule as the CDK stack writes it; OpenSearch is
osmem-server; the app is the Lambda app under uvicorn. The object's S3 notification is fed
to the ingest function, which indexes it with the chosen chunkSize.

Also: a bucket whose CORS does not list the page's origin, and an S3 error body, end in a
message on the file's row instead of a silent hang."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest

from bunko import lambda_entry
from bunko.domain import DocumentStatus
from bunko.ports import SearchFilter
from tests.e2e.aws_web import BUCKET
from tests.e2e.browser import needs_chromium, shoot

pytestmark = [needs_chromium]
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
pytest.importorskip("aws_cdk")  # the bucket's CORS rule comes from infra's construct

PASSWORD = "correct horse battery"
MARKER = "quillwort"  # a word only the large file holds, near its end
CHUNK_SIZE, CHUNK_OVERLAP = 4000, 400
UPLOADED = 60_000  # ms for presign and the PUT of 1.4 MB to end, on a busy machine too


@pytest.fixture
def log_and_note(tmp_path) -> tuple[Path, Path]:
    """A ~1.5 MB log (over the threshold) and a small note (under it)."""
    lines = [f"Entry {n}: the keeper trims the lamp wick and logs the weather at dusk.\n"
             for n in range(20_000)]  # fmt: skip
    lines.insert(19_000, f"Entry 19000b: a {MARKER} grows in the pond below the light.\n")
    large = tmp_path / "lighthouse-log.txt"
    large.write_text("".join(lines), encoding="utf-8")
    assert 1.4e6 < large.stat().st_size < 1.7e6
    small = tmp_path / "note.txt"
    small.write_text("A short note about the lighthouse.\n", encoding="utf-8")
    return large, small


def ingest(key: str) -> dict:
    """The ingest function, fed the SQS message S3's notification sends for `key`."""
    from tests.aws.conftest import FakeLambdaContext
    from tests.aws.handlers import load_event, load_function

    event = load_event("sqs_s3_object_created.json")
    body = json.loads(event["Records"][0]["body"])
    body["Records"][0]["s3"]["bucket"]["name"] = BUCKET
    body["Records"][0]["s3"]["object"]["key"] = quote(key)
    event["Records"][0]["body"] = json.dumps(body)
    return load_function("ingest").handler(event, FakeLambdaContext())


def test_a_large_file_goes_straight_to_s3_with_its_options(
    deployed_shape, deployed_tab, log_and_note
):
    large, small = log_and_note
    page = deployed_tab.page
    deployed_shape.allow_origins(deployed_shape.url)
    sent = []
    page.on("request", lambda r: sent.append((r.method, r.url, r.headers)))

    page.get_by_text("Advanced options").click()
    page.get_by_label("Chunk size").fill(str(CHUNK_SIZE))
    page.get_by_label("Chunk overlap").fill(str(CHUNK_OVERLAP))
    page.get_by_label("Category").fill("灯台")
    page.get_by_text("Metadata for these files (optional)").click()
    editor = page.locator(".upload-meta")
    editor.get_by_label("Key 1").fill("team")
    editor.get_by_label("Value 1").fill("灯台守")
    page.locator("input[type=file]").set_input_files([str(large), str(small)])
    expect(page.get_by_text("Recommended:")).to_have_count(2, timeout=UPLOADED)  # advice applied
    page.get_by_role("combobox", name=f"Mode: {large.name}").select_option("precise")
    page.get_by_role("button", name="Upload").click()

    row = page.get_by_role("listitem").filter(has_text=large.name)
    expect(row).to_contain_text("Uploaded — being indexed", timeout=UPLOADED)
    expect(row.get_by_role("progressbar")).to_have_js_property("value", 1)
    shoot(page, "presign-01-uploaded")

    # the small file took POST /upload; the large one presign, then a PUT to S3 itself
    posts = [
        u.removeprefix(deployed_shape.url)
        for m, u, _ in sent
        if m == "POST" and u.startswith(deployed_shape.url)
    ]
    assert posts.count("/upload") == 1 and posts.count("/uploads/presign") == 1
    [(_, url, headers)] = [(m, u, h) for m, u, h in sent if m == "PUT"]
    assert url.startswith(f"{deployed_shape.moto_url}/{BUCKET}/drop/")
    assert "authorization" not in {k.lower() for k in headers}

    [(key, head)] = [(k, h) for k, h in deployed_shape.drops().items() if k.endswith(large.name)]
    assert head["ContentLength"] == large.stat().st_size
    assert head["ContentType"] == "text/plain"
    assert head["Metadata"] == {
        "bunko-category": quote("灯台", safe=""),
        "bunko-chunk-size": str(CHUNK_SIZE),
        "bunko-chunk-overlap": str(CHUNK_OVERLAP),
        "bunko-mode": "precise",
        "bunko-presigned": "1",  # a person's upload: its ingest applies their quota
    }

    assert ingest(key) == {"batchItemFailures": []}
    services = lambda_entry.ingest_handler().services
    workspace = key.split("/")[1]
    doc = services.metadata.get_document_by_path(workspace, large.name)
    assert doc.status is DocumentStatus.COMPLETED
    assert (doc.chunk_size, doc.chunk_overlap, doc.category) == (CHUNK_SIZE, CHUNK_OVERLAP, "灯台")
    # its metadata went ahead as the key's sidecar, read when the file arrived
    assert doc.metadata == {"team": "灯台守"}
    assert f"{key}.metadata.json" in deployed_shape.drops()
    chunks = services.metadata.get_chunks(workspace, doc.id)
    assert len(chunks) > 300 and max(len(c.content) for c in chunks) <= CHUNK_SIZE

    # searchable in the web app, the whole file through (the word is near its end)
    page.reload()
    library_row = page.get_by_role("row").filter(has=page.get_by_role("link", name=large.name))
    expect(library_row.get_by_text("completed")).to_be_visible()
    shoot(page, "presign-02-library")
    page.get_by_role("link", name="Search").click()
    page.get_by_role("searchbox", name="Search").fill(MARKER)
    page.get_by_role("searchbox", name="Search").press("Enter")
    expect(page.locator(".hit")).to_have_count(1)
    expect(page.locator(".hit mark")).to_have_text(MARKER)
    hits = services.index.keyword_search(MARKER, SearchFilter(workspace), 5)
    assert {h.document_id for h in hits} == {doc.id}
    shoot(page, "presign-03-search")
    assert deployed_tab.errors == []


def test_a_bucket_that_does_not_allow_the_page_fails_on_the_row(
    deployed_shape, deployed_tab, log_and_note
):
    large, _ = log_and_note
    page = deployed_tab.page
    deployed_shape.allow_origins("https://elsewhere.example")
    page.locator("input[type=file]").set_input_files([str(large)])
    page.get_by_role("button", name="Upload").click()

    row = page.get_by_role("listitem").filter(has_text=large.name)
    alert = row.get_by_role("alert")
    expect(alert).to_contain_text("CORS", timeout=UPLOADED)
    expect(alert).to_contain_text(deployed_shape.url)
    expect(alert).to_contain_text("bunko:corsOrigins")
    shoot(page, "presign-04-cors-refused")
    assert deployed_shape.drops() == {}
    # Chromium's own report of the refusal, and nothing else
    assert deployed_tab.errors and all(
        "CORS" in e or "net::ERR_FAILED" in e for e in deployed_tab.errors
    )


def test_an_s3_error_body_becomes_a_message_on_the_row(deployed_shape, deployed_tab, log_and_note):
    """S3 answers a changed signed header with 403 and an XML body (moto checks no signatures,
    so S3's answer is played back here, CORS headers and all)."""
    large, _ = log_and_note
    page = deployed_tab.page
    deployed_shape.allow_origins(deployed_shape.url)
    cors = {
        "Access-Control-Allow-Origin": deployed_shape.url,
        "Access-Control-Allow-Methods": "PUT",
        "Access-Control-Allow-Headers": "Content-Type, x-amz-meta-*",
    }
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code>'
        "<Message>The request signature we calculated does not match the signature you "
        "provided. Check your key and signing method.</Message></Error>"
    )

    def s3_refuses(route) -> None:
        if route.request.method == "OPTIONS":
            route.fulfill(status=200, headers=cors)
        else:
            route.fulfill(status=403, headers={**cors, "Content-Type": "application/xml"},
                          body=xml)  # fmt: skip

    page.route(f"{deployed_shape.moto_url}/**", s3_refuses)
    page.locator("input[type=file]").set_input_files([str(large)])
    page.get_by_role("button", name="Upload").click()
    alert = page.get_by_role("listitem").filter(has_text=large.name).get_by_role("alert")
    # the 1.4 MB body passes through Playwright's route on its way to the handler
    expect(alert).to_contain_text(
        "refused the upload's signature (SignatureDoesNotMatch", timeout=UPLOADED
    )
    expect(alert).to_contain_text("Upload the file again")
    shoot(page, "presign-05-signature-refused")
