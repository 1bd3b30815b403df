"""A file's original on the AWS shape: `original-link` is a presigned S3 GET (the API never
carries the bytes, which may be past Lambda's 6 MB), shown inline under the file's own name,
and `original` with a token redirects there; another user's file is a 404. Through the real
API handler, with events as API Gateway sends them, against moto's S3 server."""

from __future__ import annotations

from urllib.parse import quote

import requests

from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import api_event, call, created_event, load_function, presign, sign_in
from tests.report_pdf import LIGHTHOUSE_REPORT, make_report_pdf

REPORT = make_report_pdf(LIGHTHOUSE_REPORT)


def test_the_original_opens_from_s3_for_its_reader_only(api_with_accounts, aws_env):
    api, ingest = api_with_accounts, load_function("ingest")
    token = sign_in(api)
    status, upload = presign(api, token, {
        "path": "reports/灯台 report.pdf", "contentType": "application/pdf", "size": len(REPORT),
    })  # fmt: skip
    assert status == 200, upload
    assert requests.put(upload["url"], data=REPORT, headers=upload["headers"], timeout=10).ok
    assert ingest.handler(created_event(upload["key"]), FakeLambdaContext()) == {
        "batchItemFailures": []
    }
    [file] = call(api, "GET", "/knowledge-bases", token=token)[1]

    status, link = call(api, "GET", f"/knowledge-bases/{file['id']}/original-link", token=token)
    assert status == 200, link
    assert link["url"].startswith("http") and link["expiresIn"] == 300
    opened = requests.get(link["url"], timeout=10)  # a new tab: no token
    assert opened.status_code == 200 and opened.content == REPORT
    assert opened.headers["Content-Type"] == "application/pdf"
    disposition = opened.headers["Content-Disposition"]
    assert disposition.startswith("inline; ")
    assert link["fileName"] == "灯台 report.pdf"
    assert disposition.endswith(f"filename*=UTF-8''{quote(link['fileName'], safe='')}")

    # With the token, the original route sends the browser on to S3.
    event = api_event(
        "GET", f"/knowledge-bases/{file['id']}/original",
        headers={"Authorization": f"Bearer {token}"},
    )  # fmt: skip
    response = api.handler(event, FakeLambdaContext())
    assert response["statusCode"] == 307
    assert response["headers"]["location"].startswith("http")

    stranger = sign_in(api, "grace")
    status, body = call(api, "GET", f"/knowledge-bases/{file['id']}/original-link", token=stranger)
    assert status == 404 and set(body) == {"statusCode", "message", "error"}
    # A link's signature covers its object: pointing it at another key is refused by S3.
    other_key = link["url"].replace(quote(file["id"]), "x" * len(file["id"]), 1)
    assert other_key != link["url"]
    assert requests.get(other_key, timeout=10).status_code == 403
