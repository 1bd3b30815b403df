"""Conversations on the AWS shape: the api function (Mangum, API Gateway events) keeps them in
the single table on moto, per user, with the table's TTL attribute under the retention
setting; another user's id is 404."""

from __future__ import annotations

from bunko import lambda_entry
from bunko.deploy_schema import TTL_ATTRIBUTE
from tests.aws.handlers import call, sign_in
from tests.aws.stand_ins import TABLE


def test_conversations_live_in_the_table_with_their_ttl(api_with_accounts, monkeypatch):
    monkeypatch.setenv("BUNKO_CONVERSATION_RETENTION_DAYS", "7")
    api = api_with_accounts
    ada, bob = sign_in(api, "ada"), sign_in(api, "bob")
    status, made = call(api, "POST", "/conversations", {"title": "Lighthouse"}, token=ada)
    assert status == 201, made
    services = lambda_entry.api_app().state.services
    ws = services.identity.authenticate(ada).workspace_id
    owner = services.identity.authenticate(ada).user_id
    services.conversations.record_turn(
        ws, owner, made["id"], question="Who trims the lamp?", answer="The keeper [1].",
        sources=[{"fileName": "lighthouse.txt", "content": "The keeper trims the lamp.",
                  "score": 0.9, "chunkIndex": 0, "documentId": "doc-1"}],
    )  # fmt: skip
    status, got = call(api, "GET", f"/conversations/{made['id']}", token=ada)
    assert status == 200 and [m["role"] for m in got["messages"]] == ["user", "assistant"]
    assert got["messages"][1]["sources"][0]["fileName"] == "lighthouse.txt"
    assert got["expiresAt"] is not None
    status, renamed = call(api, "PATCH", f"/conversations/{made['id']}", {"title": "灯台"},
                           token=ada)  # fmt: skip
    assert status == 200 and renamed["title"] == "灯台"
    status, listed = call(api, "GET", "/conversations", token=ada)
    assert [c["id"] for c in listed] == [made["id"]]

    for method, body in (("GET", None), ("PATCH", {"title": "x"}), ("DELETE", None)):
        status, refused = call(api, method, f"/conversations/{made['id']}", body, token=bob)
        assert status == 404 and refused["statusCode"] == 404
    assert call(api, "GET", "/conversations", token=bob) == (200, [])

    dynamodb = services.conversations.store.table.client
    items = dynamodb.scan(TableName=TABLE)["Items"]
    kept = [i for i in items if i["pk"]["S"].endswith(f"#CONV#{made['id']}")]
    assert len(kept) == 3 and all(TTL_ATTRIBUTE in i for i in kept)  # head and 2 messages
    status, _ = call(api, "DELETE", f"/conversations/{made['id']}", token=ada)
    assert status == 200
    items = dynamodb.scan(TableName=TABLE)["Items"]
    assert not [i for i in items if f"#CONV#{made['id']}" in i["pk"]["S"]]
