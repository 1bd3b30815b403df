"""A person's import over REST is counted and paced as their uploads are, and loses nothing
to the pace: the archive's claim that its files are the operator's (`cli`, never counted) is
not taken; past the upload rate (here 2 at once, then one each half second) the import waits
its turn, as a client waits for Retry-After, until every document is in the new library."""

from __future__ import annotations

import time

from bunko.services.ingest import Upload
from tests.e2e.library_move import HANDBOOK
from tests.e2e.rest_harness import wait_until_done

REST_SETTINGS = {"upload_burst": 2, "upload_rate_per_minute": 120}


def _ended(client, path: str) -> dict:
    for _ in range(1200):
        job = client.get(path).json()
        if job["status"] != "running":
            return job
        time.sleep(0.1)
    raise AssertionError(f"{path} still running")


def test_an_import_past_the_upload_rate_waits_its_turn_and_loses_nothing(rest):
    owner, importer = rest.new_user(), rest.new_user()
    library = owner.client.post("/libraries", json={"name": "Paced"}).json()["id"]
    owner.client.headers["X-Bunko-Library"] = library
    for path, (text, _, _) in HANDBOOK.items():  # the operator's: not paced
        doc = rest.services.ingest.submit(Upload(library, text.encode(), path=path, source="cli"))
        assert wait_until_done(owner.client, doc.id)["status"] == "completed"
    job = owner.client.post(f"/libraries/{library}/export", json={}).json()
    job = _ended(owner.client, f"/libraries/{library}/export/{job['id']}")
    archive = owner.client.get(job["download"]).content

    started = importer.client.post(
        "/libraries/import",
        files={"file": ("a.zip", archive, "application/zip")},
        data={"name": "Paced copy"},
    )
    assert started.status_code == 202, started.text
    job = _ended(importer.client, f"/libraries/import/{started.json()['id']}")
    assert job["status"] == "done", job
    result = job["result"]
    assert result["skipped"] == {} and result["failed"] == {}, result
    assert (result["added"], result["indexed"]) == (len(HANDBOOK), len(HANDBOOK))
    copied = rest.services.library.documents(job["libraryId"])
    assert len(copied) == len(HANDBOOK) and {d.source for d in copied} == {"upload"}
