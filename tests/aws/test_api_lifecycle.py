"""A document's life through the api function's REST routes, with the ingest function in
between: multipart upload (a binary body, base64 in the event), indexing from the queue,
search, delete; and a model config whose API key is envelope-encrypted with KMS. Besides
what it asserts, it makes the calls the permission contract records for these paths."""

from __future__ import annotations

import json

import pytest

from bunko import lambda_entry
from bunko.domain import DocumentStatus
from bunko.services.search.search import SearchOptions
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import call, load_event, load_function, sign_in, upload


def test_upload_index_search_delete_through_the_functions(api_with_accounts, aws_env):
    api, ingest = api_with_accounts, load_function("ingest")
    token = sign_in(api)
    file = upload(api, token, "notes.md", "# 議事録\n\n検索基盤の移行について話しました。".encode())
    assert file["status"] == "pending"
    [message] = aws_env.receive_all(aws_env.queue_url)
    event = load_event("sqs_ingest_job.json")
    event["Records"][0]["body"] = message["Body"]
    assert ingest.handler(event, FakeLambdaContext()) == {"batchItemFailures": []}

    services = lambda_entry.api_app().state.services
    workspace = services.accounts.auth.users.get_user_by_username("ada").workspace_id
    doc = services.metadata.get_document(workspace, file["id"])
    assert doc.status is DocumentStatus.COMPLETED
    found = services.search.search(workspace, "検索基盤", SearchOptions(min_score=0.0))
    assert [hit.document_id for hit in found.items] == [doc.id]

    status, _ = call(api, "DELETE", f"/knowledge-bases/{doc.id}", token=token)
    assert status == 200
    assert services.metadata.get_document(workspace, doc.id) is None
    assert services.index.count(workspace) == 0
    status, files = call(api, "GET", "/knowledge-bases", token=token)
    assert status == 200 and files == []


def test_model_api_keys_are_encrypted_with_kms(api_with_accounts):
    api = api_with_accounts
    token = sign_in(api)
    status, created = call(api, "POST", "/model-configs", {
        "name": "chat", "provider": "openai", "modelId": "gpt-4o-mini", "type": "llm",
        "apiKey": "sk-secret-1234",
    }, token=token)  # fmt: skip
    assert status == 201, created
    assert "sk-secret-1234" not in json.dumps(created)
    services = lambda_entry.api_app().state.services
    workspace = services.accounts.auth.users.get_user_by_username("ada").workspace_id
    stored = services.accounts.model_configs.get(workspace, created["id"])
    assert stored.api_key_encrypted and "sk-secret" not in stored.api_key_encrypted
    assert services.accounts.model_configs.api_key(workspace, created["id"]) == "sk-secret-1234"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9001/2018-06-01/runtime",
        "http://10.0.3.7:8000/v1",
        "http://169.254.169.254/",
    ],
)
def test_model_configs_cannot_point_inside_the_network_on_aws(api_with_accounts, url):
    """On AWS a baseUrl must be public: loopback is the Lambda runtime API, private addresses
    are the VPC's services, link-local is instance metadata."""
    api = api_with_accounts
    token = sign_in(api)
    status, body = call(api, "POST", "/model-configs", {
        "name": "inside", "provider": "openai", "modelId": "m", "type": "llm", "baseUrl": url,
    }, token=token)  # fmt: skip
    assert status == 400 and "inside the network" in body["message"], body
    status, listed = call(api, "GET", "/model-configs", token=token)
    assert status == 200 and all(c["name"] != "inside" for c in listed)
