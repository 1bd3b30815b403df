"""Search naming a source on the AWS shape (issue 48, point 3), through the api and ingest
functions on the stand-ins (moto, osmem-server): the documents' source is read from
DynamoDB and handed to OpenSearch as the document filter every engine applies, so
/search?source=upload finds only the hand uploads and ?source=agent only an agent's note;
a name that is no source here is 400."""

from __future__ import annotations

from bunko import lambda_entry
from bunko.domain.sources import AGENT
from tests.aws.handlers import get, load_function, sign_in
from tests.aws.metadata_uploads import ingest_all, upload


def searched(api, token: str, source: str | None) -> list[str]:
    query = {"q": "harbour fee", "limit": "10"}
    if source is not None:
        query["source"] = source
    status, body = get(api, token, "/search", query)
    assert status == 200, body
    return sorted(item["path"] for item in body["items"])


def test_search_names_a_source_on_dynamodb_and_opensearch(api_with_accounts, aws_env):
    api, ingest = api_with_accounts, load_function("ingest")
    token = sign_in(api)
    upload(api, token, "lease.md", "The harbour lease and its yearly fee.", None)
    upload(api, token, "berths.md", "The harbour berths, each with its fee.", None)
    services = lambda_entry.api_app().state.services
    workspace = services.accounts.auth.users.get_user_by_username("ada").workspace_id
    services.ingest.submit_text(
        workspace, path="notes/agent.md", content="An agent's note on the harbour fee.",
        mime="text/markdown", source=AGENT,
    )  # fmt: skip
    ingest_all(aws_env, ingest)

    assert searched(api, token, None) == ["berths.md", "lease.md", "notes/agent.md"]
    assert searched(api, token, "upload") == ["berths.md", "lease.md"]
    assert searched(api, token, "agent") == ["notes/agent.md"]
    assert searched(api, token, "drop") == []
    status, body = get(api, token, "/search", {"q": "harbour", "source": "nowhere"})
    assert status == 400 and "no source named" in body["message"], body
    other = sign_in(api, "bob")  # another library: its own uploads, none of ada's
    assert searched(api, other, "upload") == []
