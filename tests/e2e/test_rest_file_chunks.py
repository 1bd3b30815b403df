"""GET /knowledge-bases/:id/chunks over a real server, a page at a time (a Lambda response
stops at 6 MB): the first page without parameters, with what leads to the rest; every chunk
once when the pages are followed; the page holding a cited chunk; bad paging refused with a
message naming the parameter; another user's file 404 whatever the parameters."""

from __future__ import annotations

import pytest

from bunko.services.library import CHUNK_PAGE_SIZE, MAX_CHUNK_PAGE_SIZE
from tests.e2e.rest_harness import assert_error, wait_until_done

# One sentence a chunk at chunkSize=60: 33 chunks, so four default pages.
SENTENCES = [f"Sentence number {i:02d} tells of the lighthouse keeper." for i in range(33)]


@pytest.fixture(scope="module")
def owner(rest):
    return rest.new_user()


@pytest.fixture(scope="module")
def chunked_doc(owner):
    text = "\n\n".join(SENTENCES).encode()
    response = owner.client.post(
        "/upload",
        files={"file": ("log.txt", text, "text/plain")},
        data={"chunkSize": 60, "chunkOverlap": 0},
    )
    assert response.status_code == 201, response.text
    done = wait_until_done(owner.client, response.json()["id"])
    assert done["status"] == "completed", done["error"]
    assert done["chunkCount"] == len(SENTENCES)
    return done


def chunks_of(user, chunked_doc, **params) -> dict:
    response = user.client.get(f"/knowledge-bases/{chunked_doc['id']}/chunks", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_without_parameters_the_first_page_and_what_leads_to_the_rest(owner, chunked_doc):
    body = chunks_of(owner, chunked_doc)
    assert body["id"] == chunked_doc["id"] and body["name"] == "log.txt"
    assert (body["total"], body["offset"], body["limit"]) == (33, 0, CHUNK_PAGE_SIZE)
    assert [c["index"] for c in body["chunks"]] == list(range(CHUNK_PAGE_SIZE))
    first = body["chunks"][0]
    assert first["content"] == SENTENCES[0]
    assert set(first) == {"id", "index", "content", "start", "end", "page", "pageEnd"}


@pytest.mark.parametrize("limit", [None, 1, 7, MAX_CHUNK_PAGE_SIZE])
def test_following_the_pages_reads_every_chunk_once(owner, chunked_doc, limit):
    params = {} if limit is None else {"limit": limit}
    seen, offset = [], 0
    while True:
        body = chunks_of(owner, chunked_doc, offset=offset, **params)
        assert body["offset"] == offset and len(body["chunks"]) <= body["limit"]
        seen += [c["content"] for c in body["chunks"]]
        offset = body["offset"] + body["limit"]
        if offset >= body["total"]:
            break
    assert seen == SENTENCES


def test_a_page_past_the_end_is_empty(owner, chunked_doc):
    body = chunks_of(owner, chunked_doc, offset=1000)
    assert body["chunks"] == [] and body["total"] == 33 and body["offset"] == 1000


@pytest.mark.parametrize(
    ("params", "offset"),
    [
        ({"chunk": 0}, 0),
        ({"chunk": 23}, 20),
        ({"chunk": 23, "limit": 7}, 21),
        ({"chunk": 32}, 30),
        ({"chunk": 999}, 30),  # past the end (a citation of an older revision): the last page
    ],
)
def test_the_page_holding_a_chunk(owner, chunked_doc, params, offset):
    body = chunks_of(owner, chunked_doc, **params)
    assert body["offset"] == offset and body["total"] == 33
    indexes = [c["index"] for c in body["chunks"]]
    assert min(params["chunk"], 32) in indexes
    assert indexes == list(range(offset, min(offset + body["limit"], 33)))


@pytest.mark.parametrize(
    ("params", "names"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": MAX_CHUNK_PAGE_SIZE + 1}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"offset": -1}, "offset"),
        ({"offset": "1.5"}, "offset"),
        ({"offset": 10**30}, "offset"),
        ({"chunk": -3}, "chunk"),
        ({"chunk": "x"}, "chunk"),
        ({"chunk": 10**12}, "chunk"),
        ({"offset": 0, "chunk": 4}, "offset or chunk, not both"),
    ],
)
def test_bad_paging_is_400_naming_the_parameter(owner, chunked_doc, params, names):
    response = owner.client.get(f"/knowledge-bases/{chunked_doc['id']}/chunks", params=params)
    body = assert_error(response, 400)
    message = body["message"]
    assert names in (" ".join(message) if isinstance(message, list) else message)


@pytest.mark.parametrize("params", [{}, {"chunk": 3}, {"offset": 10, "limit": 5}])
def test_another_users_file_is_404(rest, chunked_doc, params):
    stranger = rest.new_user()
    response = stranger.client.get(f"/knowledge-bases/{chunked_doc['id']}/chunks", params=params)
    assert_error(response, 404)
    assert "lighthouse keeper" not in response.text
