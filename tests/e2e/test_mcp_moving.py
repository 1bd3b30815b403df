"""A library's export over MCP with the official client (issue 50, point 4): an owner's key
exports its library and gets a `resource_link` to the REST door's download link (no token
needed) and, the archive being small, the archive itself as an embedded resource: the same
bytes; an editor's and a viewer's keys are refused; the call leaves one audit event."""

from __future__ import annotations

import base64
import io
import json
import zipfile

import httpx
import pytest

from bunko.domain.audit import AuditQuery
from tests.e2e.chat_harness import load_documents
from tests.e2e.mcp_harness import http_client, ok, refusal, shared_library

pytestmark = pytest.mark.anyio

DOCUMENTS = {
    "lighthouse.txt": "The Kessock lighthouse was built in 1872 on the northern shore.",
    "harbour.txt": "Ferries leave the harbour every hour from the north pier.",
}


@pytest.fixture(scope="module")
def keyed_handbook(rest):
    owner, library, keys = shared_library(rest)
    load_documents(owner, DOCUMENTS)
    return library, keys


def _events(rest) -> int:
    return rest.services.audit.store.events(AuditQuery(limit=1)).total


async def test_an_owner_exports_the_library_and_gets_where_to_download_it(rest, keyed_handbook):
    library, keys = keyed_handbook
    before = _events(rest)
    async with http_client(rest.url, keys["owner"]) as client:
        result = await client.call_tool("export_library", {"conversations": True, "wait": 120})
        out = ok(result)
    assert (out["status"], out["documents"], out["embedded"]) == ("done", 2, True)
    assert _events(rest) - before == 1
    event = rest.services.audit.store.events(AuditQuery(limit=1)).events[0]
    assert (event.action, event.outcome, event.library_id) == (
        "mcp:export_library", "ok", library)  # fmt: skip
    link = next(c for c in result.content if c.type == "resource_link")
    embedded = next(c for c in result.content if c.type == "resource")
    assert str(link.uri) == out["download"] and link.uri.startswith(rest.url)
    assert link.mime_type == "application/zip" and link.name == "Handbook.bunko.zip"
    downloaded = httpx.get(out["download"], timeout=60)  # no token
    assert downloaded.status_code == 200 and len(downloaded.content) == out["bytes"]
    assert base64.b64decode(embedded.resource.blob) == downloaded.content
    with zipfile.ZipFile(io.BytesIO(downloaded.content)) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    assert manifest["library"]["name"] == "Handbook" and manifest["documents"] == 2
    # asked again by its id: the same export, nothing new started
    async with http_client(rest.url, keys["owner"]) as client:
        again = ok(await client.call_tool("export_library", {"export_id": out["exportId"]}))
    assert (again["exportId"], again["download"]) == (out["exportId"], out["download"])


async def test_editors_and_viewers_keys_cannot_export(rest, keyed_handbook):
    _, keys = keyed_handbook
    for role in ("editor", "viewer"):
        before = _events(rest)
        async with http_client(rest.url, keys[role]) as client:
            said = await refusal(client, "export_library", {})
        assert "only the library's owners" in said or "scope" in said, said
        assert _events(rest) - before == 1
    # another library's export id answers nothing
    outsider = rest.new_user()
    key = outsider.client.post("/api-keys", json={"scopes": ["kb:read", "kb:write"]}).json()
    async with http_client(rest.url, keys["owner"]) as client:
        mine = ok(await client.call_tool("export_library", {"wait": 120}))
    async with http_client(rest.url, key["key"]) as client:
        said = await refusal(client, "export_library", {"export_id": mine["exportId"]})
    assert "no export" in said and mine["download"].split("link=")[1] not in said
