"""Same-name files are distinct files (issue: nothing lost): over a real server, two
different uploads called `report.txt` are two documents; the same bytes again are the same
document; `replaceId` makes a new revision of one file, only in the caller's workspace. A
zip bomb disguised as .docx fails readably without starving the server."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.e2e.rest_harness import assert_error, wait_until_done
from tests.fixtures_files import make_zip_bomb


def upload(client, name: str, data: bytes, **form):
    return client.post("/upload", files={"file": (name, data, "text/plain")}, data=form)


def search(rest, user, query: str) -> set[str]:
    from bunko.services.search.search import SearchOptions

    workspace = rest.services.identity.authenticate(user.token).workspace_id
    found = rest.services.search.search(workspace, query, SearchOptions(min_score=0)).items
    return {hit.document_id for hit in found}


def test_two_different_files_with_one_name_are_two_files(rest):
    user = rest.new_user()
    first = upload(user.client, "folder-a/report.txt", b"Sales rose in the north region.")
    second = upload(user.client, "folder-b/report.txt", b"Costs fell in the south region.")
    assert first.status_code == second.status_code == 201, second.text
    a, b = first.json(), second.json()
    assert a["id"] != b["id"]
    assert (a["name"], b["name"]) == ("report.txt", "report (2).txt")
    assert a["originalName"] == b["originalName"] == "report.txt"
    assert a["revision"] == b["revision"] == 1
    for record in (a, b):
        assert wait_until_done(user.client, record["id"])["status"] == "completed"
    assert search(rest, user, "north") == {a["id"]} and search(rest, user, "south") == {b["id"]}
    assert len(user.client.get("/knowledge-bases").json()) == 2


def test_the_same_bytes_under_the_same_name_again_is_the_same_file(rest):
    user = rest.new_user()
    one = upload(user.client, "notes.txt", b"Identical bytes twice.").json()
    upload(user.client, "notes.txt", b"Other bytes with the same name.")
    again = upload(user.client, "notes.txt", b"Identical bytes twice.")
    assert again.status_code == 201
    assert again.json()["id"] == one["id"] and again.json()["revision"] == 1
    assert len(user.client.get("/knowledge-bases").json()) == 2


def test_parallel_same_name_uploads_lose_nothing(rest):
    user = rest.new_user()
    texts = [f"Parallel upload number {n} mentions token{n}x.".encode() for n in range(6)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        responses = list(pool.map(lambda t: upload(user.client, "same.txt", t), texts))
    assert [r.status_code for r in responses] == [201] * 6, [r.text for r in responses]
    ids = {r.json()["id"] for r in responses}
    assert len(ids) == 6
    for file_id in ids:
        assert wait_until_done(user.client, file_id)["status"] == "completed"
    for n in range(6):
        assert len(search(rest, user, f"token{n}x")) == 1


def test_replace_id_makes_a_new_revision_of_that_file(rest):
    user = rest.new_user()
    record = upload(user.client, "plan.txt", b"The old plan mentions zebras.").json()
    wait_until_done(user.client, record["id"])
    replaced = upload(user.client, "plan-v2.txt", b"The new plan mentions otters.",
                      replaceId=record["id"])  # fmt: skip
    assert replaced.status_code == 201, replaced.text
    body = replaced.json()
    assert (body["id"], body["revision"], body["name"]) == (record["id"], 2, "plan.txt")
    done = wait_until_done(user.client, record["id"])
    assert done["status"] == "completed" and done["revision"] == 2
    assert search(rest, user, "otters") == {record["id"]} and search(rest, user, "zebras") == set()


def test_replace_id_of_another_workspace_or_unknown_is_404_and_changes_nothing(rest):
    owner, intruder = rest.new_user(), rest.new_user()
    record = upload(owner.client, "secret.txt", b"The owner's words about herons.").json()
    wait_until_done(owner.client, record["id"])
    for target in (record["id"], "00000000-0000-4000-8000-000000000000"):
        response = upload(intruder.client, "x.txt", b"Intruder text.", replaceId=target)
        assert_error(response, 404)
    assert intruder.client.get("/knowledge-bases").json() == []
    still = owner.client.get(f"/knowledge-bases/{record['id']}").json()
    assert still["revision"] == 1 and search(rest, owner, "herons") == {record["id"]}


@pytest.mark.parametrize("kind", ["docx", "xlsx"])
def test_a_zip_bomb_fails_readably_and_the_server_keeps_answering(rest, kind):
    user = rest.new_user()
    bomb = make_zip_bomb(kind, 200 if kind == "docx" else 64)
    response = user.client.post(
        "/upload", files={"file": (f"bomb.{kind}", bomb, "application/octet-stream")}
    )
    assert response.status_code == 201, response.text
    started = time.monotonic()
    health = user.client.get("/health", timeout=5)
    assert health.status_code == 200
    done = wait_until_done(user.client, response.json()["id"], timeout=30)
    assert done["status"] == "failed" and "inflates to" in done["error"], done
    assert time.monotonic() - started < 30
