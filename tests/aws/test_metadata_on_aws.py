"""Document metadata through the api and ingest functions on the stand-ins (moto,
osmem-server): set at upload, stored in DynamoDB, carried by each OpenSearch entry, filtered
by in the engine for /search and in memory for the library listing; an edit relabels the
entries at once, and another user's filter never reaches these files."""

from __future__ import annotations

import json

from bunko import lambda_entry
from bunko.domain.metadata import parse_filter
from bunko.ports import SearchFilter
from tests.aws.handlers import call, get, load_function, sign_in
from tests.aws.metadata_uploads import ingest_all, upload

FILES = {
    "lease.md": ("The harbour lease and its yearly fee.", {"team": "legal", "year": 2021}),
    "berths.md": ("The harbour berths, each with its fee.", {"team": "ops", "year": 2023}),
    "plain.md": ("Harbour notes on the fee, with no metadata.", None),
}


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
