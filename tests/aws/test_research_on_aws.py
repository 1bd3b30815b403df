"""Research corpora on the AWS shape: the Lambda API (Mangum) over DynamoDB (moto), fed API
Gateway events. A sealed corpus keeps its text after its document is edited and deleted, and
research_corpora_get's REST twin answers the sosoapi page's schema."""

from __future__ import annotations

from bunko import lambda_entry
from bunko.ports import IngestJob
from tests.aws.handlers import call, sign_in
from tests.e2e.research_contract import validate_snapshot

TEXT = "Tidal forces from the moon raise two bulges of ocean water."


def _ingest(services, ws: str, path: str, content: str) -> str:
    doc = services.ingest.submit_text(ws, path=path, content=content)
    # The SQS message would run the ingest function; run its pipeline directly instead.
    services.pipeline.process([IngestJob(ws, doc.id, doc.revision)])
    return doc.id


def test_a_sealed_corpus_on_dynamodb_outlives_its_document(api_with_accounts):
    api = api_with_accounts
    token = sign_in(api)
    services = lambda_entry.api_app().state.services
    ws = services.identity.authenticate(token).workspace_id
    doc_id = _ingest(services, ws, "tides.md", TEXT)
    status, body = call(api, "POST", "/research-api/projects/create",
                        {"workspace_id": ws, "name": "Tides"}, token)  # fmt: skip
    assert status == 200, body
    common = {"workspace_id": ws, "project_id": body["project"]["id"]}
    status, _ = call(api, "POST", "/research-api/evidence/add",
                     {**common, "document_id": doc_id, "revision": 1}, token)  # fmt: skip
    assert status == 200
    status, sealed = call(api, "POST", "/research-api/corpora/seal", common, token)
    assert status == 200 and sealed["snapshot"]["coverage"] == "supplied_set"
    corpus = {"workspace_id": ws, "id": sealed["snapshot"]["id"]}
    search = {**corpus, "query": "moon tides ocean", "min_score": 0.0}
    _, before = call(api, "POST", "/research-api/corpora/search", search, token)
    assert before["hits"][0]["content"] == TEXT

    _ingest(services, ws, "tides.md", "Rewritten: nothing about the sea.")
    status, _ = call(api, "DELETE", f"/knowledge-bases/{doc_id}", token=token)
    assert status == 200
    _ingest(services, ws, "other.md", "The moon and the ocean tides, again.")
    _, after = call(api, "POST", "/research-api/corpora/search", search, token)
    assert after == before
    status, got = call(api, "POST", "/research-api/corpora/get", corpus, token)
    assert status == 200
    validate_snapshot(got)
    assert got == {"snapshot": sealed["snapshot"]}
    # A new project can still cite the deleted revision: a corpus retains its text.
    status, body = call(api, "POST", "/research-api/projects/create",
                        {"workspace_id": ws, "name": "Again"}, token)  # fmt: skip
    again = {"workspace_id": ws, "project_id": body["project"]["id"]}
    status, _ = call(api, "POST", "/research-api/evidence/add",
                     {**again, "document_id": doc_id, "revision": 1}, token)  # fmt: skip
    assert status == 200
    status, resealed = call(api, "POST", "/research-api/corpora/seal", again, token)
    assert resealed["snapshot"]["coverage"] == "supplied_set"
    status, hits = call(api, "POST", "/research-api/corpora/search",
                        {**search, "id": resealed["snapshot"]["id"]}, token)  # fmt: skip
    assert [h["content"] for h in hits["hits"]] == [TEXT]
    missing = {**again, "document_id": doc_id, "revision": 2}
    status, _ = call(api, "POST", "/research-api/evidence/add", missing, token)
    assert status == 404  # revision 2 was deleted and no corpus holds it
    status, _ = call(api, "POST", "/research-api/corpora/get", {**corpus, "revision": 0}, token)
    assert status == 400
