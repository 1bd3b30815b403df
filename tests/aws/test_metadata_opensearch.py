"""Metadata filters in OpenSearch (osmem-server): every operator answers as
`domain.metadata.matches` does over the same documents, in the engine, inside the workspace;
an edit relabels a document's entries in place; an index made before metadata filters gets
the field, and a collection that refuses it falls back to filtering by document ids."""

from __future__ import annotations

import math

import pytest
from opensearchpy.exceptions import AuthorizationException

from bunko.adapters.aws.opensearch import queries as q
from bunko.adapters.aws.opensearch.index import OpenSearchServerlessIndex
from bunko.adapters.aws.opensearch.metadata import (
    RECHECK_SECONDS,
    TERMS_FIELD,
    TERMS_MAPPING,
    TermsMapping,
)
from bunko.domain.metadata import (
    MAX_KEY_LENGTH,
    MAX_KEYS,
    MAX_LIST_ITEMS,
    check_metadata,
    exists_term,
    matches,
    number_term,
    parse_filter,
    string_term,
    terms_of,
)
from bunko.ports import IndexEntry, SearchFilter
from tests.aws.conftest import INDEX
from tests.aws.stand_ins import Tapped

WS, OTHER = "ws-1", "ws-2"
TEXT = "common harbour words"

# name → (metadata as a client sends it, category)
DOCS: dict[str, tuple[dict, str | None]] = {
    "a": (
        {"team": "search", "year": 2023, "published": "2024-01-15", "tags": ["ja", "api"]},
        "manuals",
    ),
    "b": (
        {"team": "infra", "year": 2024.5, "published": "2024-06-01T09:30:00+09:00", "tags": "en"},
        "notes",
    ),
    "c": ({"team": "search", "year": -3, "tags": ["api"], "日本語キー": "値"}, None),
    "d": ({}, "manuals"),
    "e": ({"year": 10000, "published": "2023-12-31", "price": 0.1}, None),
}
CANONICAL = {name: (check_metadata(md), cat) for name, (md, cat) in DOCS.items()}

# fmt: off
CASES: list[tuple[str, dict, set[str]]] = [
    ("equals a string", {"equals": {"key": "team", "value": "search"}}, {"a", "c"}),
    ("equals a number", {"equals": {"key": "year", "value": 2023}}, {"a"}),
    ("equals a fraction", {"equals": {"key": "year", "value": 2024.5}}, {"b"}),
    ("equals 0.1", {"equals": {"key": "price", "value": 0.1}}, {"e"}),
    ("equals a date", {"equals": {"key": "published", "value": "2024-01-15"}}, {"a"}),
    (
        "equals a time in another zone",
        {"equals": {"key": "published", "value": "2024-06-01T00:30:00Z"}},
        {"b"},
    ),
    ("equals a list item", {"equals": {"key": "tags", "value": "api"}}, {"a", "c"}),
    ("equals a one-item list", {"equals": {"key": "tags", "value": "en"}}, {"b"}),
    ("a unicode key", {"equals": {"key": "日本語キー", "value": "値"}}, {"c"}),
    ("a number is not its text", {"equals": {"key": "year", "value": "2023"}}, set()),
    ("in strings", {"in": {"key": "team", "values": ["infra", "nobody"]}}, {"b"}),
    ("in numbers", {"in": {"key": "year", "values": [-3, 10000]}}, {"c", "e"}),
    ("in list items", {"in": {"key": "tags", "values": ["ja", "en"]}}, {"a", "b"}),
    ("range gt", {"range": {"key": "year", "gt": 2023}}, {"b", "e"}),
    ("range gte", {"range": {"key": "year", "gte": 2023}}, {"a", "b", "e"}),
    ("range lt", {"range": {"key": "year", "lt": 2023}}, {"c"}),
    ("range lte", {"range": {"key": "year", "lte": 2023}}, {"a", "c"}),
    ("range gte lt", {"range": {"key": "year", "gte": -5, "lt": 2024.5}}, {"a", "c"}),
    ("range gt lte", {"range": {"key": "year", "gt": -3, "lte": 2024.5}}, {"a", "b"}),
    ("range of fractions", {"range": {"key": "price", "gt": 0.09, "lt": 0.11}}, {"e"}),
    (
        "range of dates gt lte",
        {"range": {"key": "published", "gt": "2023-12-31", "lte": "2024-06-01T00:30:00Z"}},
        {"a", "b"},
    ),
    ("range of dates lt", {"range": {"key": "published", "lt": "2024-01-01"}}, {"e"}),
    ("range of dates gte", {"range": {"key": "published", "gte": "2024-01-15"}}, {"a", "b"}),
    ("exists", {"exists": {"key": "tags"}}, {"a", "b", "c"}),
    ("category equals", {"equals": {"key": "category", "value": "manuals"}}, {"a", "d"}),
    ("category in", {"in": {"key": "category", "values": ["notes", "x"]}}, {"b"}),
    ("category exists", {"exists": {"key": "category"}}, {"a", "b", "d"}),
    (
        "andAll",
        {"andAll": [{"equals": {"key": "team", "value": "search"}},
                    {"range": {"key": "year", "gte": 0}}]},
        {"a"},
    ),
    (
        "orAll",
        {"orAll": [{"equals": {"key": "team", "value": "infra"}},
                   {"equals": {"key": "tags", "value": "api"}}]},
        {"a", "b", "c"},
    ),
    (
        "nested",
        {"andAll": [
            {"orAll": [{"equals": {"key": "category", "value": "manuals"}},
                       {"exists": {"key": "日本語キー"}}]},
            {"orAll": [{"range": {"key": "year", "lt": 0}},
                       {"equals": {"key": "tags", "value": "ja"}}]},
        ]},
        {"a", "c"},
    ),
    (
        "nested three deep",
        {"orAll": [
            {"andAll": [{"exists": {"key": "price"}},
                        {"orAll": [{"range": {"key": "year", "gt": 9999}},
                                   {"equals": {"key": "team", "value": "x"}}]}]},
            {"equals": {"key": "category", "value": "notes"}},
        ]},
        {"b", "e"},
    ),
    ("matches nothing", {"equals": {"key": "team", "value": "nobody"}}, set()),
    ("a key nobody uses", {"exists": {"key": "missing"}}, set()),
    (
        "contradiction",
        {"andAll": [{"equals": {"key": "team", "value": "search"}},
                    {"equals": {"key": "team", "value": "infra"}}]},
        set(),
    ),
]
# fmt: on


def entries(name: str, *, ws: str = WS, n: int = 2, metadata=None, category=None):
    md, cat = CANONICAL[name] if metadata is None else (metadata, category)
    return [
        IndexEntry(
            chunk_id=f"{ws}-{name}-{i}", document_id=f"doc-{name}", workspace_id=ws, revision=1,
            text=TEXT, category=cat, vector=[1.0, float(i), 0.0, 0.5],
            metadata_terms=tuple(terms_of(md, cat)),
        )
        for i in range(n)
    ]  # fmt: skip


def every_entry() -> list[IndexEntry]:
    mine = [e for name in DOCS for e in entries(name)]
    # Another workspace's documents answer to every filter above, and must never be found.
    theirs = [e for name in DOCS for e in entries(name, ws=OTHER)]
    return mine + theirs


def found(index: OpenSearchServerlessIndex, flt, ws: str = WS) -> set[str]:
    hits = index.keyword_search("harbour", SearchFilter(ws, metadata=flt), 100)
    assert all(h.chunk_id.startswith(f"{ws}-") for h in hits)
    return {h.document_id.removeprefix("doc-") for h in hits}


@pytest.fixture
def filled_index(search_index):
    search_index.index(every_entry())
    return search_index


@pytest.mark.parametrize(("raw", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_every_operator_filters_in_the_engine_as_the_reference_does(filled_index, raw, expected):
    flt = parse_filter(raw)
    reference = {n for n, (md, cat) in CANONICAL.items() if matches(flt, terms_of(md, cat))}
    assert reference == expected  # the case is right about the reference semantics
    assert filled_index.filters_metadata is True
    assert found(filled_index, flt) == expected
    assert found(filled_index, flt, ws=OTHER) == expected  # the same filter, their documents only


def test_no_filter_and_other_filters_still_apply(filled_index):
    assert found(filled_index, None) == set(DOCS)
    flt = parse_filter({"exists": {"key": "team"}})
    hits = filled_index.keyword_search(
        "harbour", SearchFilter(WS, category="manuals", metadata=flt), 100
    )
    assert {h.document_id for h in hits} == {"doc-a"}
    ids = frozenset({"doc-b", "doc-c"})
    hits = filled_index.keyword_search(
        "harbour", SearchFilter(WS, document_ids=ids, metadata=flt), 100
    )
    assert {h.document_id for h in hits} == {"doc-b", "doc-c"}


def test_the_mapping_holds_one_keyword_field_whatever_the_keys(opensearch, filled_index):
    props = opensearch.indices.get_mapping(index=INDEX)[INDEX]["mappings"]["properties"]
    assert props[TERMS_FIELD] == {"type": "keyword"}
    assert set(props) == set(q.index_body(4)["mappings"]["properties"])


def test_knn_and_bm25_carry_the_same_metadata_filter():
    # osmem does not run k-NN: the k-NN body is held to the BM25 one, which runs above.
    [nested] = [raw for name, raw, _ in CASES if name == "nested"]
    filters = SearchFilter(WS, category="manuals", metadata=parse_filter(nested))
    bm25 = q.keyword_body("harbour", filters, 5)["query"]["bool"]["filter"]
    knn = q.knn_body([0.5] * 4, filters, 5)["query"]["knn"]["vector"]["filter"]["bool"]["filter"]
    assert bm25 == knn
    f = TERMS_FIELD
    assert bm25 == [
        {"term": {"workspace_id": WS}},
        {"term": {"category": "manuals"}},
        {"bool": {"filter": [
            {"bool": {"should": [{"term": {f: string_term("category", "manuals")}},
                                 {"term": {f: exists_term("日本語キー")}}],
                      "minimum_should_match": 1}},
            {"bool": {"should": [{"range": {f: {"gte": "year\x1fn\x1f",
                                                "lt": number_term("year", 0.0)}}},
                                 {"term": {f: string_term("tags", "ja")}}],
                      "minimum_should_match": 1}},
        ]}},
    ]  # fmt: skip


# relabel ----------------------------------------------------------------------------------


def sources(index: OpenSearchServerlessIndex, ws: str, doc: str) -> dict[str, dict]:
    body = {"size": 100, "query": {"bool": {"filter": [
        {"term": {"workspace_id": ws}}, {"term": {"document_id": doc}}]}}}  # fmt: skip
    hits = index.client.search(index=index.index_name, body=body)["hits"]["hits"]
    return {h["_source"]["chunk_id"]: h["_source"] for h in hits}


def test_relabel_after_an_edit_moves_the_document_to_its_new_terms(ledgered):
    ledgered.index(every_entry())
    before = sources(ledgered, WS, "doc-a")
    count = ledgered.count(WS), ledgered.count(OTHER)
    edited = check_metadata({"team": "platform", "year": 1999})
    ledgered.relabel_document(WS, "doc-a", terms_of(edited, "manuals"))

    search = parse_filter({"equals": {"key": "team", "value": "search"}})
    assert found(ledgered, search) == {"c"}  # the old terms no longer match
    assert found(ledgered, parse_filter({"exists": {"key": "tags"}})) == {"b", "c"}
    assert found(ledgered, parse_filter({"equals": {"key": "team", "value": "platform"}})) == {"a"}
    assert found(ledgered, parse_filter({"range": {"key": "year", "lt": 2000}})) == {"a", "c"}
    assert found(ledgered, parse_filter({"equals": {"key": "category", "value": "manuals"}})) == {
        "a",
        "d",
    }
    assert found(ledgered, search, ws=OTHER) == {"a", "c"}  # their doc-a is not touched
    assert (ledgered.count(WS), ledgered.count(OTHER)) == count
    after = sources(ledgered, WS, "doc-a")
    assert after.keys() == before.keys()
    for chunk_id, source in after.items():
        assert source[TERMS_FIELD] == terms_of(edited, "manuals")
        assert {k: v for k, v in source.items() if k != TERMS_FIELD} == {
            k: v for k, v in before[chunk_id].items() if k != TERMS_FIELD
        }  # text, vector, entry id: the same
    # Deleting still reaches every entry (the ids did not change).
    ledgered.delete_document(WS, "doc-a")
    assert ledgered.count(WS) == count[0] - 2


def test_relabel_reaches_entries_not_yet_searchable(ledgered):
    ledgered.index(entries("a"))
    search = ledgered.client.search

    def unrefreshed(*args, **kwargs):  # as a collection before its next refresh
        response = search(*args, **kwargs)
        response["hits"]["hits"] = []
        return response

    ledgered.client.search = unrefreshed
    try:
        ledgered.relabel_document(WS, "doc-a", terms_of({"team": "new"}))
    finally:
        ledgered.client.search = search
    assert found(ledgered, parse_filter({"equals": {"key": "team", "value": "new"}})) == {"a"}


def test_relabel_without_a_ledger_and_of_a_missing_document(search_index):
    search_index.index(entries("a") + entries("b"))
    search_index.relabel_document(WS, "doc-a", [])  # metadata and category removed
    assert found(search_index, parse_filter({"exists": {"key": "category"}})) == {"b"}
    search_index.relabel_document(WS, "doc-zzz", terms_of({"team": "x"}))  # nothing to do
    search_index.relabel_document(OTHER, "doc-b", [])  # another workspace's id: not mine
    assert found(search_index, parse_filter({"exists": {"key": "category"}})) == {"b"}
    assert search_index.count(WS) == 4


# an index made before metadata filters ----------------------------------------------------


def old_index_body() -> dict:
    body = q.index_body(4)
    del body["mappings"]["properties"][TERMS_FIELD]
    return body


def test_an_older_index_gets_the_field_and_its_entries_await_heal(opensearch):
    opensearch.indices.create(index=INDEX, body=old_index_body())
    index = OpenSearchServerlessIndex(opensearch, index=INDEX, dimension=4)
    assert index.filters_metadata is False  # not mapped: filters resolve to document ids
    index.index(entries("a"))  # written as before: no terms, and no field mapped by them
    mapping = opensearch.indices.get_mapping(index=INDEX)[INDEX]["mappings"]["properties"]
    assert TERMS_FIELD not in mapping
    assert all(TERMS_FIELD not in s for s in sources(index, WS, "doc-a").values())

    assert index.ensure_index() is False  # there already; its mapping gets the field
    mapping = opensearch.indices.get_mapping(index=INDEX)[INDEX]["mappings"]["properties"]
    assert mapping[TERMS_FIELD] == {"type": "keyword"}
    assert index.filters_metadata is True
    index.index(entries("b"))
    team = parse_filter({"exists": {"key": "team"}})
    assert found(index, team) == {"b"}  # a's older entries have no terms yet
    assert found(index, None) == {"a", "b"}
    index.relabel_document(WS, "doc-a", terms_of(*CANONICAL["a"]))  # or /heal
    assert found(index, team) == {"a", "b"}
    assert index.count(WS) == 4


def test_a_collection_that_refuses_the_mapping_falls_back_to_document_ids(opensearch):
    opensearch.indices.create(index=INDEX, body=old_index_body())

    def refused(*args, **kwargs):
        raise AuthorizationException(403, "security_exception", {"error": "no UpdateIndex"})

    refusing = Tapped(opensearch, indices={"put_mapping": refused})
    index = OpenSearchServerlessIndex(refusing, index=INDEX, dimension=4)
    assert index.ensure_index() is False  # no error: a route still opens
    assert index.filters_metadata is False
    index.index(entries("a"))
    index.relabel_document(WS, "doc-a", terms_of({"team": "x"}))  # nothing to relabel
    assert all(TERMS_FIELD not in s for s in sources(index, WS, "doc-a").values())
    mapping = opensearch.indices.get_mapping(index=INDEX)[INDEX]["mappings"]["properties"]
    assert TERMS_FIELD not in mapping  # still free to be mapped as a keyword later
    assert found(index, None) == {"a"}


def test_a_field_mapped_otherwise_is_left_alone(opensearch):
    # An older index where something wrote the field unmapped: mapped as text, for good.
    opensearch.indices.create(index=INDEX, body=old_index_body())
    opensearch.bulk(body=[{"index": {"_index": INDEX}}, {TERMS_FIELD: ["x"], "entry_id": "e"}])
    index = OpenSearchServerlessIndex(opensearch, index=INDEX, dimension=4)
    assert index.ensure_index() is False
    assert index.filters_metadata is False


def test_the_mapping_is_asked_again_while_it_lacks_the_field(opensearch):
    opensearch.indices.create(index=INDEX, body=old_index_body())
    now = [0.0]
    asked: list[str] = []

    def counted(*args, **kwargs):
        asked.append(kwargs.get("index", ""))
        return opensearch.indices.get_mapping(*args, **kwargs)

    counting = Tapped(opensearch, indices={"get_mapping": counted})
    mapping = TermsMapping(counting, INDEX, clock=lambda: now[0])
    assert mapping.mapped() is False
    assert mapping.mapped() is False
    assert asked == [INDEX]  # known for a while
    opensearch.indices.put_mapping(index=INDEX, body={"properties": TERMS_MAPPING})
    now[0] += RECHECK_SECONDS - 1
    assert mapping.mapped() is False
    now[0] += 1
    assert mapping.mapped() is True  # another process (the index setup) mapped it
    now[0] = math.inf
    assert mapping.mapped() is True
    assert asked == [INDEX, INDEX]  # once mapped, known for good


def test_a_missing_index_does_not_filter_and_is_asked_again(opensearch):
    index = OpenSearchServerlessIndex(opensearch, index="absent", dimension=4)
    assert index.filters_metadata is False
    index.ensure_index()  # created now, with the field
    assert index.filters_metadata is True


# parity over generated documents and filters ----------------------------------------------

NUMBERS = [-1e6, -2.5, -1, 0, 0.1, 1, 2, 2.5, 10, 1e6, 1e200]
DATES = ["2023-01-01", "2023-12-31T23:59:59Z", "2024-01-01", "2024-02-29T12:00:00+09:00"]
WORDS = ["a", "b", "ab", "B", "ä", "日本", "a b"]
POOLS = {"n": NUMBERS, "d": DATES, "s": WORDS, "l": WORDS, "category": ["x", "y"]}


def generated_documents(rng) -> dict[str, tuple[dict, str | None]]:
    docs = {}
    for i in range(30):
        raw: dict = {}
        for key in ("n", "d", "s"):
            if rng.random() < 0.7:
                raw[key] = rng.choice(POOLS[key])
        if rng.random() < 0.7:
            raw["l"] = rng.sample(WORDS, rng.randint(1, 3))
        docs[f"g{i}"] = (check_metadata(raw), rng.choice([None, "x", "y"]))
    return docs


def generated_filter(rng, depth: int = 0) -> dict:
    if depth < 2 and rng.random() < 0.35:
        clauses = [generated_filter(rng, depth + 1) for _ in range(rng.randint(1, 3))]
        return {rng.choice(["andAll", "orAll"]): clauses}
    key = rng.choice(list(POOLS))
    pool = POOLS[key]
    op = rng.choice(["equals", "in", "range", "exists"])
    if op == "exists":
        return {"exists": {"key": key}}
    if op == "equals":
        return {"equals": {"key": key, "value": rng.choice(pool)}}
    if op == "in":
        return {"in": {"key": key, "values": rng.sample(pool, rng.randint(1, 2))}}
    bounds = rng.sample(["low", "high"], rng.randint(1, 2))
    body: dict = {"key": key}
    if "low" in bounds:
        body[rng.choice(["gt", "gte"])] = rng.choice(pool)
    if "high" in bounds:
        body[rng.choice(["lt", "lte"])] = rng.choice(pool)
    return {"range": body}


def test_generated_filters_answer_as_the_reference_does(search_index):
    import random

    rng = random.Random(36)
    docs = generated_documents(rng)
    search_index.index(
        [
            e
            for name, (md, cat) in docs.items()
            for e in entries(name, metadata=md, category=cat, n=1)
        ]
    )
    for _ in range(80):
        raw = generated_filter(rng)
        flt = parse_filter(raw)
        expected = {n for n, (md, cat) in docs.items() if matches(flt, terms_of(md, cat))}
        assert found(search_index, flt) == expected, raw


def maximal_metadata() -> dict:
    """Metadata at every limit that makes its terms long: the most keys, each as long as
    allowed, each a list of the most (short) items; one term per item, each naming its key."""
    key = "k" * (MAX_KEY_LENGTH - 2)
    return check_metadata({
        f"{key}{n:02d}": [f"{i:02d}" for i in range(MAX_LIST_ITEMS)] for n in range(MAX_KEYS)
    })  # fmt: skip


def test_a_relabel_with_maximal_metadata_stays_under_the_request_size_cap(ledgered):
    """Each entry's update repeats the document's terms (~80 KB of JSON at the limits): 500
    in one bulk were ~40 MiB, over OpenSearch's 10 MiB request cap, and the edit failed."""
    chunks = 300
    ledgered.index([
        IndexEntry(chunk_id=f"big-{i}", document_id="doc-big", workspace_id=WS, revision=1,
                   text=f"{TEXT} {i}", category=None, vector=[1.0, 0.0, 0.0, 0.0])
        for i in range(chunks)
    ])  # fmt: skip
    client = ledgered.client
    sizes: list[int] = []

    def measured(body, **kw):  # the bytes opensearch-py sends: its serializer's, in UTF-8
        dumps = client.transport.serializer.dumps
        sizes.append(sum(len(dumps(line).encode("utf-8")) + 1 for line in body))
        return client.bulk(body=body, **kw)

    measuring = OpenSearchServerlessIndex(
        Tapped(client, bulk=measured), index=INDEX, dimension=4, ledger=ledgered.ledger
    )
    terms = terms_of(maximal_metadata())
    measuring.relabel_document(WS, "doc-big", terms)
    assert len(sizes) >= 2 and max(sizes) <= 8 * 2**20, sizes
    assert sum(sizes) > 10 * 2**20  # one request would have been over the cap
    wanted = parse_filter({"equals": {"key": f"{'k' * 62}31", "value": "31"}})
    hits = ledgered.keyword_search(TEXT, SearchFilter(workspace_id=WS, metadata=wanted), 400)
    assert len({h.chunk_id for h in hits}) == chunks  # every entry relabelled
