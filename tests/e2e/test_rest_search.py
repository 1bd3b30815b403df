"""GET /search, /search/categories and /knowledge-bases/:id/chunks over a real server:
a Japanese word is found inside running text with its scores, the category filter and
`limit` apply, another user's files never show, and bad queries are 400."""

from __future__ import annotations

from tests.e2e.rest_harness import assert_error, wait_until_done

JA = "東京の図書館では古い巻物を修復している。職人は和紙を丁寧に貼り合わせる。"
EN = "Lighthouses guide ships along the rocky coast.\n\nThe keeper trims the lamp each night."


def put(user, name: str, text: str, **form) -> dict:
    data = text.encode()
    response = user.client.post("/upload", files={"file": (name, data, "text/plain")}, data=form)
    assert response.status_code == 201, response.text
    done = wait_until_done(user.client, response.json()["id"])
    assert done["status"] == "completed", done["error"]
    return done


def test_finds_a_japanese_word_inside_running_text(rest):
    user = rest.new_user()
    ja = put(user, "巻物.txt", JA, category="和書")
    put(user, "coast.txt", EN, category="sea")
    assert ja["category"] == "和書"
    body = user.client.get("/search", params={"q": "和紙"}).json()
    assert [i["document_id"] for i in body["items"]] == [ja["id"]]
    hit = body["items"][0]
    assert "和紙" in hit["content"] and hit["name"] == "巻物.txt"
    assert 0 < hit["similarity"] <= 1 and hit["text_score"] > 0
    assert {"vector_score", "chunk_index", "id"} <= set(hit)
    assert body["vector_search_used"] is False  # keyword-only test server
    assert hit["engines"] == ["keyword"]
    assert user.client.get("/search/categories").json() == {"categories": ["sea", "和書"]}
    filtered = user.client.get("/search", params={"q": "lamp", "category": "和書"}).json()
    assert filtered["items"] == []
    lamp = user.client.get("/search", params={"q": "lamp", "category": "sea", "limit": 1}).json()
    assert len(lamp["items"]) == 1 and "lamp" in lamp["items"][0]["content"]


def test_chunks_of_a_file_and_isolation(rest):
    alice, bob = rest.new_user(), rest.new_user()
    doc = put(alice, "coast.txt", EN, chunkSize=50, chunkOverlap=0)
    chunks = alice.client.get(f"/knowledge-bases/{doc['id']}/chunks").json()
    assert chunks["id"] == doc["id"] and chunks["name"] == "coast.txt"
    assert [c["index"] for c in chunks["chunks"]] == list(range(doc["chunkCount"]))
    assert any("lamp" in c["content"] for c in chunks["chunks"])
    assert_error(bob.client.get(f"/knowledge-bases/{doc['id']}/chunks"), 404)
    assert bob.client.get("/search", params={"q": "lamp"}).json()["items"] == []
    assert bob.client.get("/search/categories").json() == {"categories": []}


def test_bad_queries_are_400(rest):
    user = rest.new_user()
    assert_error(user.client.get("/search"), 400)
    assert_error(user.client.get("/search", params={"q": ""}), 400)
    assert_error(user.client.get("/search", params={"q": "x", "limit": 0}), 400)
    assert_error(user.client.get("/search", params={"q": "x" * 4001}), 400)
    assert_error(rest.client().get("/search", params={"q": "x"}), 401)
