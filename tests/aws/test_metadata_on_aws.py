"""Document metadata through the api and ingest functions on the stand-ins (moto,
osmem-server): set at upload, stored in DynamoDB, carried by each OpenSearch entry, filtered
by in the engine for /search and in memory for the library listing; an edit relabels the
entries at once, and another user's filter never reaches these files."""

from __future__ import annotations

import base64
import json

from bunko import lambda_entry
from bunko.domain.metadata import parse_filter
from bunko.ports import SearchFilter
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import api_event, call, get, load_event, load_function, sign_in

BOUNDARY = "bunko-metadata-boundary"
FILES = {
    "lease.md": ("The harbour lease and its yearly fee.", {"team": "legal", "year": 2021}),
    "berths.md": ("The harbour berths, each with its fee.", {"team": "ops", "year": 2023}),
    "plain.md": ("Harbour notes on the fee, with no metadata.", None),
}


def upload(api, token: str, name: str, text: str, metadata: dict | None) -> dict:
    parts = [
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        f"Content-Type: text/markdown\r\n\r\n{text}\r\n"
    ]
    if metadata is not None:
        parts.append(
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n'
            f"{json.dumps(metadata)}\r\n"
        )
    body = ("".join(parts) + f"--{BOUNDARY}--\r\n").encode()
    event = api_event("POST", "/upload", headers={
        "Authorization": f"Bearer {token}",
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
        "Content-Length": str(len(body)),
    })  # fmt: skip
    event["body"] = base64.b64encode(body).decode()
    event["isBase64Encoded"] = True
    response = api.handler(event, FakeLambdaContext())
    assert response["statusCode"] == 201, response["body"]
    return json.loads(response["body"])


def ingest_all(aws_env, ingest) -> None:
    template = load_event("sqs_ingest_job.json")
    for message in aws_env.receive_all(aws_env.queue_url):
        event = json.loads(json.dumps(template))
        event["Records"][0]["body"] = message["Body"]
        assert ingest.handler(event, FakeLambdaContext()) == {"batchItemFailures": []}


def searched(api, token: str, flt: dict | None) -> list[str]:
    query = {"q": "harbour fee", "limit": "10"}
    if flt is not None:
        query["filter"] = json.dumps(flt)
    status, body = get(api, token, "/search", query)
    assert status == 200, body
    return sorted(item["path"] for item in body["items"])


def listed(api, token: str, flt: dict) -> list[str]:
    status, body = get(api, token, "/knowledge-bases", {"filter": json.dumps(flt), "sort": "name"})
    assert status == 200, body
    return [f["name"] for f in body]


def test_metadata_from_upload_to_filtered_search_and_an_edit(api_with_accounts, aws_env):
    api, ingest = api_with_accounts, load_function("ingest")
    token = sign_in(api)
    ids = {name: upload(api, token, name, text, md)["id"] for name, (text, md) in FILES.items()}
    ingest_all(aws_env, ingest)

    services = lambda_entry.api_app().state.services
    assert services.index.filters_metadata is True  # filters run in the engine
    legal = {"equals": {"key": "team", "value": "legal"}}
    assert searched(api, token, None) == ["berths.md", "lease.md", "plain.md"]
    assert searched(api, token, legal) == ["lease.md"]
    assert searched(api, token, {"range": {"key": "year", "gte": 2022}}) == ["berths.md"]
    assert searched(api, token, {"exists": {"key": "team"}}) == ["berths.md", "lease.md"]
    assert searched(api, token, {"equals": {"key": "team", "value": "nobody"}}) == []
    assert listed(api, token, {"exists": {"key": "year"}}) == ["berths.md", "lease.md"]

    status, edited = call(
        api, "PUT", f"/knowledge-bases/{ids['berths.md']}/metadata",
        {"metadata": {"team": "legal", "year": 2024}}, token=token,
    )  # fmt: skip
    assert status == 200 and edited["metadata"] == {"team": "legal", "year": 2024}, edited
    assert searched(api, token, legal) == ["berths.md", "lease.md"]
    assert searched(api, token, {"equals": {"key": "team", "value": "ops"}}) == []
    assert listed(api, token, legal) == ["berths.md", "lease.md"]
    workspace = services.accounts.auth.users.get_user_by_username("ada").workspace_id
    assert services.index.count(workspace) == 3  # relabelled in place, not duplicated
    # The engine's own answer (the search service checks hits against metadata again, so
    # the REST answers above alone would not show the entries were relabelled).
    engine = services.index.keyword_search(
        "harbour", SearchFilter(workspace, metadata=parse_filter(legal)), 10
    )
    assert {h.document_id for h in engine} == {ids["berths.md"], ids["lease.md"]}

    other = sign_in(api, "bob")  # another library: the same filter finds nothing of ada's
    assert searched(api, other, legal) == []
    assert listed(api, other, legal) == []
