"""Document metadata over a real server: set at upload, shown on every file record, edited,
and filtered by in the library listing, /search, /chat/stream and /v1 with every operator;
bad metadata and bad filters are 400 naming the key and change nothing; another user's
file is 404."""

from __future__ import annotations

import json

import pytest
from openai import OpenAI

from tests.e2e.rest_harness import assert_error, serve, wait_until_done

FILES = {
    "contract.txt": (
        "The lease contract renews each spring; the tenant pays the harbour fee.",
        {"team": "legal", "year": 2021, "tags": ["lease", "harbour"], "signed": "2021-03-04"},
    ),
    "handbook.txt": (
        "The harbour handbook explains the fee for each berth and the tenant rules.",
        {"team": "ops", "year": 2023, "tags": ["harbour"], "signed": "2023-11-30"},
    ),
    "memo.txt": (
        "A memo on the harbour fee, for the tenant council; no contract yet.",
        {"team": "legal", "year": 2024.5},
    ),
    "notes.txt": ("Harbour notes about the fee and the tenant, with no metadata at all.", None),
}


@pytest.fixture(scope="module")
def metadata_library(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("rest-metadata") / "data") as rest:
        user = rest.new_user()
        ids = {}
        for name, (text, metadata) in FILES.items():
            form = {"metadata": json.dumps(metadata)} if metadata is not None else {}
            if name == "handbook.txt":
                form["category"] = "manuals"
            sent = user.client.post(
                "/upload", files={"file": (name, text.encode(), "text/plain")}, data=form
            )
            assert sent.status_code == 201, sent.text
            ids[name] = sent.json()["id"]
        for file_id in ids.values():
            assert wait_until_done(user.client, file_id)["status"] == "completed"
        yield rest, user, ids


def names(user, flt: dict | None, **params) -> list[str]:
    if flt is not None:
        params["filter"] = json.dumps(flt)
    response = user.client.get("/knowledge-bases", params={"sort": "name", **params})
    assert response.status_code == 200, response.text
    assert response.headers["X-Total-Count"] == str(len(response.json()))
    return [f["name"] for f in response.json()]


def found(user, flt: dict | None, q: str = "harbour fee tenant") -> list[str]:
    params = {"q": q, "limit": 10}
    if flt is not None:
        params["filter"] = json.dumps(flt)
    response = user.client.get("/search", params=params)
    assert response.status_code == 200, response.text
    return sorted(i["path"] for i in response.json()["items"])


def test_metadata_is_kept_in_canonical_form_and_shown(metadata_library):
    _, user, ids = metadata_library
    record = user.client.get(f"/knowledge-bases/{ids['contract.txt']}").json()
    assert record["metadata"] == {
        "team": "legal", "year": 2021, "tags": ["lease", "harbour"], "signed": "2021-03-04",
    }  # fmt: skip
    assert user.client.get(f"/knowledge-bases/{ids['memo.txt']}").json()["metadata"] == {
        "team": "legal",
        "year": 2024.5,
    }
    assert user.client.get(f"/knowledge-bases/{ids['notes.txt']}").json()["metadata"] == {}
    keys = {k["key"]: k for k in user.client.get("/search/metadata-keys").json()["keys"]}
    assert set(keys) == {"team", "year", "tags", "signed"}
    assert keys["team"]["types"] == ["string"] and keys["team"]["values"] == ["legal", "ops"]
    assert keys["year"]["types"] == ["number"] and keys["signed"]["types"] == ["date"]
    assert keys["tags"]["values"] == ["harbour", "lease"]  # most common first


EVERY_OPERATOR = [
    ({"equals": {"key": "team", "value": "legal"}}, ["contract.txt", "memo.txt"]),
    ({"equals": {"key": "year", "value": 2023}}, ["handbook.txt"]),
    ({"equals": {"key": "tags", "value": "lease"}}, ["contract.txt"]),
    ({"equals": {"key": "category", "value": "manuals"}}, ["handbook.txt"]),
    ({"in": {"key": "team", "values": ["ops", "finance"]}}, ["handbook.txt"]),
    ({"range": {"key": "year", "gte": 2021, "lt": 2024}}, ["contract.txt", "handbook.txt"]),
    ({"range": {"key": "year", "gt": 2021}}, ["handbook.txt", "memo.txt"]),
    ({"range": {"key": "year", "lte": 2024.5, "gt": 2023}}, ["memo.txt"]),
    ({"range": {"key": "signed", "gte": "2022-01-01"}}, ["handbook.txt"]),
    ({"range": {"key": "signed", "lt": "2021-03-04T00:00:01Z"}}, ["contract.txt"]),
    ({"exists": {"key": "tags"}}, ["contract.txt", "handbook.txt"]),
    (
        {"andAll": [{"equals": {"key": "team", "value": "legal"}}, {"exists": {"key": "tags"}}]},
        ["contract.txt"],
    ),
    (
        {
            "orAll": [
                {"equals": {"key": "team", "value": "ops"}},
                {"range": {"key": "year", "gte": 2024}},
            ]
        },
        ["handbook.txt", "memo.txt"],
    ),
    ({"equals": {"key": "team", "value": "nobody"}}, []),
    ({"exists": {"key": "unknown-key"}}, []),
]


@pytest.mark.parametrize(("flt", "expected"), EVERY_OPERATOR)
def test_every_operator_filters_the_library_and_search_alike(metadata_library, flt, expected):
    _, user, _ = metadata_library
    assert names(user, flt) == expected
    assert found(user, flt) == expected


def test_filters_combine_with_the_name_query_and_the_category(metadata_library):
    _, user, _ = metadata_library
    legal = {"equals": {"key": "team", "value": "legal"}}
    assert names(user, legal, q="memo") == ["memo.txt"]
    assert names(user, None) == sorted(FILES)
    response = user.client.get(
        "/search", params={"q": "harbour", "category": "manuals", "filter": json.dumps(legal)}
    )
    assert response.json()["items"] == []


def test_an_edit_applies_at_once_and_a_new_revision_keeps_it(metadata_library):
    _, user, ids = metadata_library
    file_id = ids["notes.txt"]
    edited = user.client.put(
        f"/knowledge-bases/{file_id}/metadata",
        json={"metadata": {"team": "legal", "reviewed": "yes"}},
    )
    assert edited.status_code == 200, edited.text
    assert edited.json()["metadata"] == {"team": "legal", "reviewed": "yes"}
    reviewed = {"exists": {"key": "reviewed"}}
    assert names(user, reviewed) == found(user, reviewed) == ["notes.txt"]
    # a new revision of the file without metadata keeps what it has
    replaced = user.client.post(
        "/upload",
        files={"file": ("notes.txt", b"Harbour notes, second edition: the fee.", "text/plain")},
        data={"replaceId": file_id},
    )
    assert replaced.status_code == 201, replaced.text
    done = wait_until_done(user.client, file_id)
    assert done["revision"] == 2 and done["metadata"] == {"team": "legal", "reviewed": "yes"}
    assert found(user, reviewed, q="second edition fee") == ["notes.txt"]
    cleared = user.client.put(f"/knowledge-bases/{file_id}/metadata", json={"metadata": {}})
    assert cleared.json()["metadata"] == {}
    assert names(user, reviewed) == found(user, reviewed) == []


BAD_METADATA = [
    ('{"team": ', "not valid JSON"),
    ('["legal"]', "JSON object"),
    ('{"category": "x"}', "metadata.category"),
    ('{"team.name": "x"}', "team.name"),
    ('{"_hidden": "x"}', "_hidden"),
    ('{"flag": true}', "metadata.flag"),
    ('{"nothing": null}', "metadata.nothing"),
    ('{"empty": ""}', "metadata.empty"),
    ('{"nested": {"a": 1}}', "metadata.nested"),
    ('{"mixed": ["a", 1]}', "metadata.mixed"),
    ('{"huge": "' + "x" * 300 + '"}', "metadata.huge"),
    ('{"nan": NaN}', "metadata.nan"),
    (json.dumps({f"k{i}": "v" for i in range(40)}), "at most 32 keys"),
    (json.dumps({"k" * 65: "v"}), "over 64"),
]


@pytest.mark.parametrize(("text", "named"), BAD_METADATA)
def test_bad_metadata_is_400_naming_it_and_nothing_is_stored(metadata_library, text, named):
    _, user, ids = metadata_library
    before = user.client.get("/knowledge-bases").json()
    sent = user.client.post(
        "/upload", files={"file": ("bad.txt", b"some text", "text/plain")}, data={"metadata": text}
    )
    assert named in str(assert_error(sent, 400)["message"])
    assert user.client.get("/knowledge-bases").json() == before
    if text.startswith("{") and not text.startswith('{"team": '):
        edit = user.client.put(
            f"/knowledge-bases/{ids['memo.txt']}/metadata",
            content=f'{{"metadata": {text}}}',
            headers={"Content-Type": "application/json"},
        )
        assert named in str(assert_error(edit, 400)["message"])
        assert user.client.get("/knowledge-bases").json() == before


BAD_FILTERS = [
    ("{", "not valid JSON"),
    ('{"near": {"key": "team"}}', "unknown operator"),
    ('{"equals": {"key": "team"}}', "a key and a value"),
    ('{"equals": {"key": "team", "value": "a"}, "in": {}}', "one operator"),
    ('{"in": {"key": "team", "values": []}}', "non-empty list"),
    ('{"range": {"key": "year"}}', "at least one of"),
    ('{"range": {"key": "year", "gt": 1, "gte": 2}}', "not both"),
    ('{"range": {"key": "year", "gt": 1, "lt": "2020-01-01"}}', "both bounds"),
    ('{"andAll": []}', "non-empty list"),
    ('{"exists": {"key": "a\\u001fb"}}', "letters, digits"),
    # over 1,000 characters in a query string, and over 64 clauses
    (json.dumps({"andAll": [{"exists": {"key": f"k{i}"}} for i in range(70)]}), "at most"),
    (
        json.dumps({"andAll": [{"orAll": [{"andAll": [{"orAll": [{"andAll": [{}]}]}]}]}]}),
        "nest at most",
    ),
]


@pytest.mark.parametrize(("text", "named"), BAD_FILTERS)
def test_bad_filters_are_400_naming_the_clause(metadata_library, text, named):
    _, user, _ = metadata_library
    for response in (
        user.client.get("/knowledge-bases", params={"filter": text}),
        user.client.get("/search", params={"q": "fee", "filter": text}),
    ):
        assert named in str(assert_error(response, 400)["message"])


def test_another_users_file_and_filter_see_nothing_of_it(metadata_library):
    rest, _, ids = metadata_library
    other = rest.new_user()
    edit = other.client.put(
        f"/knowledge-bases/{ids['memo.txt']}/metadata", json={"metadata": {"team": "x"}}
    )
    assert_error(edit, 404)
    legal = {"equals": {"key": "team", "value": "legal"}}
    assert names(other, legal) == [] and found(other, legal) == []
    assert other.client.get("/search/metadata-keys").json() == {"keys": []}


def sources_of_chat(user, flt: dict | None) -> set[str]:
    body = {"message": "What is the harbour fee for the tenant?"}
    if flt is not None:
        body["filter"] = flt
    names_seen: set[str] = set()
    with user.client.stream("POST", "/chat/stream", json=body) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: {"):
                event = json.loads(line[6:])
                if event["type"] == "sources":
                    names_seen |= {s["fileName"] for s in event["data"]}
    return names_seen


def test_chat_and_the_openai_door_answer_only_from_passing_files(metadata_library):
    rest, user, _ = metadata_library
    assert len(sources_of_chat(user, None)) > 1
    ops = {"equals": {"key": "team", "value": "ops"}}
    assert sources_of_chat(user, ops) == {"handbook.txt"}
    bad = user.client.post("/chat/stream", json={"message": "fee?", "filter": {"near": {}}})
    assert "unknown operator" in str(assert_error(bad, 400)["message"])
    many = {"orAll": [{"exists": {"key": f"k{i}"}} for i in range(70)]}
    bad = user.client.post("/chat/stream", json={"message": "fee?", "filter": many})
    assert "at most 64 clauses" in str(assert_error(bad, 400)["message"])
    client = OpenAI(base_url=f"{rest.url}/v1", api_key=user.token)
    answer = client.chat.completions.create(
        model="bunko-extractive",
        messages=[{"role": "user", "content": "What is the harbour fee for the tenant?"}],
        extra_body={"filter": ops},
    )
    cited = {s["fileName"] for s in answer.model_extra["sources"]}
    assert cited == {"handbook.txt"}
