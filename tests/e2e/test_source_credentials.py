"""A source's credential (issue 48): encrypted at rest with the cipher model configs' keys use,
never answered by a door (REST, CLI), replaceable, gone with the source; and the shared GET of
API connectors (services/sources/api.py) over a real socket: Retry-After waited out within
bounds, a rejected credential told apart."""

from __future__ import annotations

import json
import os
import subprocess
import time
from email.utils import formatdate

import pytest

from bunko.adapters.web_fetcher import HttpWebFetcher
from bunko.errors import UpstreamError, ValidationError
from bunko.services.embedding import check_outbound_url
from bunko.services.sources import SyncReport
from bunko.services.sources.api import ApiClient, CredentialRejected, retry_after
from bunko.services.sources.sources import CREDENTIAL_SCOPE, SCOPE
from tests.e2e.cli_harness import BUNKO, run
from tests.e2e.local_server import LocalServer
from tests.e2e.rest_harness import serve

SECRET = "me@example.com:ATATT3xSECRET-token-4711"
OTHER = "ATATT3xREPLACED-token-0815"
# No name resolves here: the guard lets the operator's sources reach loopback.
CONFLUENCE = {"url": "http://127.0.0.1:9/wiki", "space": "ENG"}


def _stored_bytes(data) -> bytes:
    """Every byte of every file the embedded deployment keeps (its data folder)."""
    return b"".join(p.read_bytes() for p in sorted(data.rglob("*")) if p.is_file())


def test_a_credential_is_kept_encrypted_replaced_and_removed_with_its_source(services, tmp_path):
    ws = "default"
    store = services.sources.store
    record = services.sources.add(
        ws, "confluence", "wiki", CONFLUENCE, operator=True, credential=SECRET
    )
    assert record.has_credential
    kept = store.get_settings(CREDENTIAL_SCOPE, record.id)
    assert SECRET not in json.dumps(kept) and kept["encrypted"]
    assert SECRET not in json.dumps(store.get_settings(SCOPE, f"{ws}/wiki"))
    assert len(_stored_bytes(tmp_path / "data")) > 10_000  # the database is there
    assert SECRET.encode() not in _stored_bytes(tmp_path / "data")  # nowhere in plain text
    assert services.sources.credential(record) == SECRET
    assert services.sources.list(ws)[0].has_credential

    services.sources.set_credential(ws, "wiki", "  " + OTHER + "\n")
    assert services.sources.credential(record) == OTHER
    assert store.get_settings(CREDENTIAL_SCOPE, record.id)["encrypted"] != kept["encrypted"]
    services.sources.set_credential(ws, "wiki", None)
    assert not services.sources.get(ws, "wiki").has_credential
    assert services.sources.credential(record) is None
    services.sources.set_credential(ws, "wiki", SECRET)

    services.sources.remove(ws, "wiki")
    assert store.get_settings(CREDENTIAL_SCOPE, record.id) is None
    again = services.sources.add(ws, "confluence", "wiki", CONFLUENCE, operator=True)
    assert not again.has_credential and services.sources.credential(again) is None

    services.sources.set_credential(ws, "wiki", SECRET)
    services.sources.forget_workspace(ws)  # a library deleted
    assert store.get_settings(CREDENTIAL_SCOPE, again.id) is None


def test_a_credential_is_refused_where_it_would_not_be_used_or_is_malformed(services):
    ws = "default"
    with pytest.raises(ValidationError, match="without a credential"):
        services.sources.add(ws, "web", "w", {"url": "https://example.com/"}, credential=SECRET)
    with pytest.raises(ValidationError, match="credential"):
        services.sources.add(ws, "confluence", "c", CONFLUENCE, operator=True, credential="   ")
    with pytest.raises(ValidationError, match="4096"):
        services.sources.add(
            ws, "confluence", "c", CONFLUENCE, operator=True, credential="x" * 4097
        )
    assert services.sources.list(ws) == []  # nothing half-added
    with pytest.raises(ValidationError, match="space"):
        services.sources.add(ws, "confluence", "c", {"url": CONFLUENCE["url"]}, operator=True)


@pytest.fixture(scope="module")
def private_rest(tmp_path_factory):
    """A server whose operator lets sources reach private addresses (loopback)."""
    with serve(tmp_path_factory.mktemp("creds") / "data", allow_private_sources=True) as rest:
        yield rest


def test_over_rest_a_credential_is_written_and_never_answered(private_rest):
    rest = private_rest
    owner = rest.new_user()
    client = owner.client
    made = client.post(
        "/sources",
        json={"kind": "confluence", "name": "wiki", **CONFLUENCE, "credential": SECRET},
    )
    assert made.status_code == 201, made.text
    assert made.json()["hasCredential"] is True and SECRET not in made.text
    listed = client.get("/sources")
    assert listed.json()[0]["hasCredential"] is True and "ATATT3x" not in listed.text
    replaced = client.put("/sources/wiki/credential", json={"credential": OTHER})
    assert replaced.status_code == 200 and "ATATT3x" not in replaced.text
    removed = client.put("/sources/wiki/credential", json={"credential": None})
    assert removed.json()["hasCredential"] is False
    refused = client.post(
        "/sources",
        json={"kind": "web", "name": "w", "url": "https://example.com/", "credential": SECRET},
    )
    assert refused.status_code == 400
    assert client.put("/sources/nothing/credential", json={"credential": OTHER}).status_code == 404


@pytest.mark.slow  # real `bunko source` processes
def test_from_the_command_line_a_credential_comes_from_the_environment_or_stdin(tmp_path):
    data = tmp_path / "data"
    add = ["source", "add", "confluence", "--name", "wiki", "--url", CONFLUENCE["url"]]
    added = run([*add, "--space", "ENG", "--credential-env", "WIKI_TOKEN"], data,
                env={"WIKI_TOKEN": SECRET})  # fmt: skip
    assert SECRET not in added.stdout + added.stderr
    listed = run(["source", "list", "--json"], data).stdout
    assert json.loads(listed)[0]["has_credential"] is True and "ATATT3x" not in listed
    assert "credential kept" in run(["source", "list"], data).stdout
    missing = run([*add, "--space", "ENG", "--credential-env", "NOT_SET_ANYWHERE"], data,
                  check=False)  # fmt: skip
    assert missing.returncode != 0 and "NOT_SET_ANYWHERE" in missing.stderr
    env = {"BUNKO_DATA_DIR": str(data), "BUNKO_EMBEDDER": "none"}
    piped = subprocess.run(
        [*BUNKO, "source", "credential", "wiki", "--credential-stdin"],
        input=OTHER + "\n", capture_output=True, text=True, timeout=600,
        env={**os.environ, **env},
    )  # fmt: skip
    assert piped.returncode == 0 and "replaced" in piped.stdout, piped.stderr
    gone = run(["source", "credential", "wiki", "--remove"], data).stdout
    assert "removed" in gone
    assert json.loads(run(["source", "list", "--json"], data).stdout)[0]["has_credential"] is False


# -- the shared GET of API connectors --------------------------------------------------------


class Throttling(LocalServer):
    """A service on a local socket that answers each path from a script of answers, logging
    every request's Authorization header."""

    def __init__(self) -> None:
        self.script: dict[str, list[tuple[int, dict[str, str], bytes]]] = {}
        self.seen: list[tuple[str, str | None]] = []
        super().__init__()

    def answer(self, path: str, headers) -> tuple[int, dict[str, str], bytes]:
        self.seen.append((path, headers.get("Authorization")))
        answers = self.script.get(path) or [(404, {}, b"")]
        return answers.pop(0) if len(answers) > 1 else answers[0]


@pytest.fixture
def service():
    s = Throttling()
    yield s
    s.close()


def _fetcher() -> HttpWebFetcher:
    return HttpWebFetcher(
        lambda url, private: check_outbound_url(url, what="source", allow_private=private)
    )


def test_throttling_is_waited_out_as_retry_after_says(service):
    ok = (200, {"Content-Type": "application/json"}, b'{"results": [1]}')
    service.script["/a"] = [(429, {"Retry-After": "7"}, b""), (503, {}, b"busy"), ok]
    later = formatdate(time.time() + 30, usegmt=True)
    service.script["/b"] = [(503, {"Retry-After": later}, b""), ok]
    waits: list[float] = []
    report = SyncReport()
    client = ApiClient(_fetcher(), report, allow_private=True,
                       headers={"Authorization": "Bearer T0KEN"}, sleep=waits.append)  # fmt: skip
    assert client.json(service.url + "/a") == {"results": [1]}
    assert waits == [7.0, 2.0]  # Retry-After, then 2**1 without one
    assert client.json(service.url + "/b") == {"results": [1]}
    assert 25 <= waits[2] <= 30  # an HTTP date
    assert report.throttled == 3 and report.requests == 5
    assert {auth for _, auth in service.seen} == {"Bearer T0KEN"}


def test_waits_are_bounded(service):
    service.script["/long"] = [(429, {"Retry-After": "3600"}, b"")]
    service.script["/always"] = [(429, {"Retry-After": "1"}, b"")]
    waits: list[float] = []
    client = ApiClient(_fetcher(), SyncReport(), allow_private=True, sleep=waits.append,
                       max_wait=120, retries=3)  # fmt: skip
    with pytest.raises(UpstreamError, match="3600 s"):
        client.json(service.url + "/long")
    assert waits == []  # not waited at all: past the cap
    with pytest.raises(UpstreamError, match="after 3 waits"):
        client.json(service.url + "/always")
    assert waits == [1.0, 1.0, 1.0]
    budget = ApiClient(_fetcher(), SyncReport(), allow_private=True, sleep=waits.append,
                       max_waited=2.5)  # fmt: skip
    with pytest.raises(UpstreamError, match="s a sync"):
        budget.json(service.url + "/always")


def test_a_rejected_credential_is_its_own_failure(service):
    service.script["/who"] = [(401, {}, b'{"message": "token expired"}')]
    service.script["/no"] = [(403, {}, b"")]
    service.script["/boom"] = [(500, {}, b"")]
    client = ApiClient(_fetcher(), SyncReport(), allow_private=True, sleep=lambda s: None)
    with pytest.raises(CredentialRejected, match=r"401.*token expired"):
        client.json(service.url + "/who")
    with pytest.raises(CredentialRejected, match="403"):
        client.json(service.url + "/no")
    with pytest.raises(UpstreamError, match="500") as failed:
        client.json(service.url + "/boom")
    assert not isinstance(failed.value, CredentialRejected)


def test_the_outbound_guard_runs_before_any_request(service):
    client = ApiClient(_fetcher(), SyncReport(), allow_private=False, sleep=lambda s: None)
    with pytest.raises(ValidationError):
        client.json(service.url + "/a")
    with pytest.raises(ValidationError):
        client.json("http://169.254.169.254/latest/meta-data/")
    assert service.seen == []


def test_retry_after_reads_seconds_and_dates():
    assert retry_after("120") == 120.0
    assert retry_after(None) is None and retry_after("soon") is None
    assert retry_after(formatdate(1_000, usegmt=True), now=lambda: 990.0) == 10.0
    assert retry_after(formatdate(1_000, usegmt=True), now=lambda: 2_000.0) == 0.0
