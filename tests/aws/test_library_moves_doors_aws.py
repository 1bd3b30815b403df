"""A library's move at the REST door on the AWS shape (DynamoDB and S3 on moto, OpenSearch on
osmem-server, the ingest function fed from SQS): its owner exports it as a job and downloads
the archive by its link; another member imports it into a new library of theirs, indexed by
the ingest function; the copy holds the same documents and ranks the same top hits (keyword
search: this deployment has no embedding model); each start is one audit event."""

from __future__ import annotations

import time

import httpx

from bunko.domain.audit import AuditQuery
from bunko.http.app import create_app
from tests.e2e.library_move import HANDBOOK, PASSWORD, documents, make_library, top_hits
from tests.e2e.live_server import LiveServer


def _ended(client: httpx.Client, path: str) -> dict:
    for _ in range(1200):
        job = client.get(path).json()
        if job["status"] != "running":
            return job
        time.sleep(0.1)
    raise AssertionError(f"{path} still running")


def _signed_in(url: str, username: str) -> httpx.Client:
    with httpx.Client(base_url=url, timeout=60) as anonymous:
        token = anonymous.post(
            "/auth/login", json={"username": username, "password": PASSWORD}
        ).json()["access_token"]
    return httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {token}"})


def test_export_and_import_over_rest_on_the_aws_shape(aws_shape):
    aws = aws_shape
    library = make_library(aws)
    before, hits = documents(aws, library), top_hits(aws, library)
    with LiveServer(create_app(aws)) as live:
        ada, grace = _signed_in(live.url, "ada"), _signed_in(live.url, "grace")
        events = aws.audit.store.events(AuditQuery(limit=1)).total
        started = ada.post(f"/libraries/{library}/export", json={})
        assert started.status_code == 202, started.text
        export = _ended(ada, f"/libraries/{library}/export/{started.json()['id']}")
        assert (export["status"], export["documents"]) == ("done", len(HANDBOOK)), export
        archive = httpx.get(live.url + export["download"], timeout=60)  # no token
        assert archive.status_code == 200 and len(archive.content) == export["bytes"]

        moved = grace.post(
            "/libraries/import",
            files={"file": ("handbook.zip", archive.content, "application/zip")},
            data={"name": "Handbook on AWS"},
        )
        assert moved.status_code == 202, moved.text
        job = _ended(grace, f"/libraries/import/{moved.json()['id']}")
        assert job["status"] == "done", job
        assert (job["result"]["added"], job["result"]["indexed"]) == (len(HANDBOOK),) * 2
        actions = [e.action for e in aws.audit.store.events(AuditQuery(limit=10)).events]
        assert aws.audit.store.events(AuditQuery(limit=1)).total - events == 2
        assert actions[:2] == ["POST /libraries/import", "POST /libraries/{library_id}/export"]
        ada.close()
        grace.close()
    copy = job["libraryId"]
    assert documents(aws, copy) == before
    assert top_hits(aws, copy) == hits
