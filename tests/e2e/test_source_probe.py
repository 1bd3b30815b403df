"""Testing a Confluence, SharePoint or Google Drive source's connection over REST (issue 48,
point 3) against the fakes on local sockets: with the credential the request gives (never kept,
never answered), the one request its sync starts from (after the token exchange, for client
credentials or a service account key), counted at the fake; and what a person can act on
when it fails: the credential rejected, the space, drive or folder not found, no credential."""

from __future__ import annotations

import pytest

from tests.e2e.fake_confluence import FakeConfluence
from tests.e2e.fake_gdrive import FakeGDrive
from tests.e2e.fake_graph import FakeGraph

# The module's server lets the people on it add sources on loopback (the fakes).
REST_SETTINGS = {"allow_private_sources": True}

CLOUD_KEY = "me@example.com:ATATT3xFAKE-cloud-token"
DC_KEY = "NjQ4MzE3OTk5ODg0OkFAKE-personal-access-token"


@pytest.fixture(params=["cloud", "datacenter"])
def one_page_wiki(request):
    key = CLOUD_KEY if request.param == "cloud" else DC_KEY
    site = FakeConfluence(request.param, credential=key)
    site.key = key
    site.page("101", "Home", "<p>Welcome.</p>")
    yield site
    site.close()


@pytest.fixture
def graph():
    d = FakeGraph()
    yield d
    d.close()


@pytest.fixture
def gdrive():
    d = FakeGDrive()
    yield d
    d.close()


def _test(client, body: dict, secret: str | None = None) -> dict:
    answer = client.post("/sources/test", json=body)
    assert answer.status_code == 200, answer.text
    if secret:
        assert secret not in answer.text  # never echoed
    return answer.json()


def test_a_confluence_test_asks_for_the_space_with_the_credential(rest, one_page_wiki):
    wiki = one_page_wiki
    client = rest.new_user().client
    body = {"kind": "confluence", "url": wiki.url, "space": "ENG", "edition": wiki.edition}
    ok = _test(client, {**body, "credential": wiki.key}, wiki.key)
    assert ok["ok"] is True and ok["status"] == 200 and "space ENG" in ok["message"], ok
    log = wiki.requests()
    assert len(log) == 1 and log[0][1] == 200 and log[0][2] is not None, log  # authenticated
    assert ("/api/v2/spaces?keys=ENG" if wiki.edition == "cloud" else "/rest/api/space/ENG/") in (
        log[0][0]
    )

    other = _test(client, {**body, "space": "NOPE", "credential": wiki.key}, wiki.key)
    assert other["ok"] is False and "space NOPE not found" in other["message"], other
    assert len(wiki.requests()) == 1

    wrong = "me@example.com:ATATT3xWRONG-token" if wiki.edition == "cloud" else "WRONG-PAT-0815"
    refused = _test(client, {**body, "credential": wrong}, wrong)
    assert len(wiki.requests()) == 1
    assert refused["ok"] is False
    if wiki.edition == "cloud":
        assert refused["status"] == 401 and "credential rejected" in refused["message"], refused
    else:  # Data Center serves a wrong token as an anonymous visitor, who sees no space
        assert refused["status"] == 404 and "personal access token" in refused["message"]

    anonymous = _test(client, body)
    assert anonymous["ok"] is False and len(wiki.requests()) == 1
    if wiki.edition == "cloud":
        assert anonymous["status"] == 401 and "give a credential" in anonymous["message"]
    assert client.get("/sources").json() == []  # nothing added


def test_a_sharepoint_test_gets_the_drive_or_folder(rest, graph):
    client = rest.new_user().client
    folder = graph.folder("Policies")
    file = graph.put("leave.txt", b"twenty days", parent=folder)
    body = {"kind": "sharepoint", "url": graph.url, "driveId": graph.drive_id}

    ok = _test(client, {**body, "credential": graph.token}, graph.token)
    assert ok["ok"] is True and ok["status"] == 200 and "drive" in ok["message"], ok
    assert graph.requests() == [(f"/v1.0/drives/{graph.drive_id}", 200)]

    inside = _test(client, {**body, "itemId": folder, "credential": graph.token})
    assert inside["ok"] is True and "Policies" in inside["message"], inside
    assert graph.requests() == [(f"/v1.0/drives/{graph.drive_id}/items/{folder}", 200)]
    not_folder = _test(client, {**body, "itemId": file, "credential": graph.token})
    assert not_folder["ok"] is False and "not a folder" in not_folder["message"]
    assert len(graph.requests()) == 1

    missing = _test(client, {**body, "driveId": "b!other", "credential": graph.token})
    assert missing["ok"] is False and missing["status"] == 404
    assert "not found" in missing["message"] and len(graph.requests()) == 1

    expired = _test(client, {**body, "credential": "expired-token"}, "expired-token")
    assert expired["status"] == 401 and "credential rejected" in expired["message"], expired
    assert len(graph.requests()) == 1

    # Client credentials: the token exchange, then the drive's GET, and the message says so.
    app = graph.client_credentials()
    exchanged = _test(client, {**body, "credential": app}, graph.client_secret)
    assert exchanged["ok"] is True and "token exchange" in exchanged["message"], exchanged
    log = graph.requests()
    assert [p for p, _ in log] == [
        f"/{graph.tenant}/oauth2/v2.0/token",
        f"/v1.0/drives/{graph.drive_id}",
    ]
    bad = app.replace(graph.client_secret, "not-the-secret")
    refused = _test(client, {**body, "credential": bad}, "not-the-secret")
    assert refused["ok"] is False and "credential rejected" in refused["message"], refused
    assert refused["status"] == 401 and len(graph.requests()) == 1  # no drive asked

    none = _test(client, body)
    assert none["ok"] is False and "no credential given" in none["message"]
    assert graph.requests() == []
    assert client.get("/sources").json() == []


def test_a_google_drive_test_gets_the_folder(rest, gdrive):
    drive = gdrive
    client = rest.new_user().client
    folder = drive.folder("Handbook")
    doc = drive.add("leave.txt", "text/plain", folder, b"twenty days")
    body = {"kind": "gdrive", "url": drive.url, "folderId": folder}

    ok = _test(client, {**body, "credential": drive.token}, drive.token)
    assert ok["ok"] is True and "Handbook" in ok["message"], ok
    log = drive.requests()
    assert len(log) == 1 and log[0][0].startswith(f"/drive/v3/files/{folder}?"), log

    missing = _test(client, {**body, "folderId": "1nope", "credential": drive.token})
    assert missing["ok"] is False and missing["status"] == 404
    assert "not found" in missing["message"] and len(drive.requests()) == 1
    a_file = _test(client, {**body, "folderId": doc, "credential": drive.token})
    assert a_file["ok"] is False and "not a folder" in a_file["message"]
    assert len(drive.requests()) == 1

    refused = _test(client, {**body, "credential": "ya29.expired"}, "ya29.expired")
    assert refused["status"] == 401 and "credential rejected" in refused["message"], refused
    assert len(drive.requests()) == 1

    key = drive.service_account_key()
    exchanged = _test(client, {**body, "credential": key}, "PRIVATE KEY")
    assert exchanged["ok"] is True and "token exchange" in exchanged["message"], exchanged
    assert [p.split("?")[0] for p, _ in drive.requests()] == [
        "/token",
        f"/drive/v3/files/{folder}",
    ]

    none = _test(client, body)
    assert none["ok"] is False and "no credential given" in none["message"]
    assert drive.requests() == []
    assert client.get("/sources").json() == []
