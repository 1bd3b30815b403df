"""Metadata in the SQLite store: migration 0010 turns an older database's categories into
terms; the term index answers every filter exactly as domain/metadata.matches does (random
metadata and random filters); writes of every kind keep the index in step (insert, save,
the pipeline's group write, delete); and the pipeline's write never undoes an edit."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.adapters.local.sqlite.store import SqliteMetadataStore
from bunko.domain import Document
from bunko.domain.document_query import DocumentQuery
from bunko.domain.metadata import check_metadata, matches, parse_filter, terms_of
from bunko.ports import DocumentWrite
from tests.sqlite_migrations import database_before

WS, OTHER = "ws-1", "ws-2"
MIGRATION = "0010_document_metadata.sql"


def _older_database(path: Path) -> None:
    conn = database_before(path, MIGRATION)
    for doc_id, category in (("a", "sea"), ("b", None), ("c", "和書"), ("d", "")):
        conn.execute(
            "INSERT INTO documents (id, workspace_id, path, name, mime, status, chunk_size,"
            " chunk_overlap, category, created_at, updated_at) VALUES (?, ?, ?, ?,"
            " 'text/plain', 'completed', 1000, 200, ?, '2024-01-01T00:00:00+00:00',"
            " '2024-01-01T00:00:00+00:00')",
            (doc_id, WS, f"{doc_id}.txt", f"{doc_id}.txt", category),
        )
    conn.commit()
    conn.close()


def test_an_older_databases_categories_become_filterable(tmp_path):
    path = tmp_path / "bunko.db"
    _older_database(path)
    metadata_store = SqliteMetadataStore(SqliteDatabase(path))
    try:
        sea = parse_filter({"equals": {"key": "category", "value": "sea"}})
        assert metadata_store.documents_matching(WS, sea) == {"a"}
        has = parse_filter({"exists": {"key": "category"}})
        assert metadata_store.documents_matching(WS, has) == {"a", "c"}
        assert metadata_store.get_document(WS, "b").metadata == {}
    finally:
        metadata_store.db.close()


@pytest.fixture
def sqlite_metadata(tmp_path):
    db = SqliteDatabase(tmp_path / "bunko.db")
    yield SqliteMetadataStore(db)
    db.close()


def _doc(doc_id: str, metadata: dict, *, workspace: str = WS, category: str | None = None):
    return Document(
        id=doc_id, workspace_id=workspace, path=f"{doc_id}.txt", name=f"{doc_id}.txt",
        mime="text/plain", category=category, metadata=check_metadata(metadata),
    )  # fmt: skip


TEAMS = ["legal", "ops", "hr", "ほうむ"]
DATES = ["2020-01-05", "2021-06-30", "2023-02-01T10:00:00Z", "2024-12-31"]


def _random_metadata(rng: random.Random) -> dict:
    out: dict = {}
    if rng.random() < 0.7:
        out["team"] = rng.choice(TEAMS)
    if rng.random() < 0.7:
        out["year"] = rng.choice([-3, 0, 1.5, 2020, 2021, 2024, 1e9])
    if rng.random() < 0.5:
        out["tags"] = rng.sample(["a", "b", "c", "d"], rng.randint(1, 3))
    if rng.random() < 0.5:
        out["signed"] = rng.choice(DATES)
    return out


def _random_leaf(rng: random.Random) -> dict:
    kind = rng.choice(["equals", "in", "range", "exists"])
    if kind == "exists":
        return {"exists": {"key": rng.choice(["team", "year", "tags", "signed", "category"])}}
    if kind == "equals":
        key, value = rng.choice(
            [("team", rng.choice(TEAMS)), ("year", 2021), ("tags", "b"), ("category", "sea")]
        )
        return {"equals": {"key": key, "value": value}}
    if kind == "in":
        return {"in": {"key": "tags", "values": rng.sample(["a", "b", "c", "z"], 2)}}
    if rng.random() < 0.5:
        low, high = sorted(rng.sample([-5, 0, 1.5, 2020, 2022, 2024, 2e9], 2))
        return {
            "range": {
                "key": "year",
                rng.choice(["gt", "gte"]): low,
                rng.choice(["lt", "lte"]): high,
            }
        }
    return {"range": {"key": "signed", rng.choice(["gt", "gte", "lt", "lte"]): rng.choice(DATES)}}


def _random_filter(rng: random.Random, depth: int = 0) -> dict:
    if depth < 2 and rng.random() < 0.4:
        op = rng.choice(["andAll", "orAll"])
        return {op: [_random_filter(rng, depth + 1) for _ in range(rng.randint(1, 3))]}
    return _random_leaf(rng)


def test_the_term_index_answers_as_the_reference_does(sqlite_metadata):
    rng = random.Random(36)
    docs = [
        _doc(f"d{i}", _random_metadata(rng), category=rng.choice([None, "sea", "land"]))
        for i in range(120)
    ]
    for doc in docs:
        sqlite_metadata.add_document(doc)
    sqlite_metadata.add_document(
        _doc("elsewhere", {"team": "legal", "year": 2021}, workspace=OTHER)
    )
    for _ in range(300):
        raw = _random_filter(rng)
        flt = parse_filter(raw)
        expected = {d.id for d in docs if matches(flt, terms_of(d.metadata, d.category))}
        assert sqlite_metadata.documents_matching(WS, flt) == expected, raw
        page = sqlite_metadata.find_documents(WS, DocumentQuery(filter=flt), limit=1000)
        assert {d.id for d in page.documents} == expected and page.total == len(expected), raw


def test_every_write_keeps_the_terms_in_step(sqlite_metadata):
    legal = parse_filter({"equals": {"key": "team", "value": "legal"}})
    doc = _doc("d1", {"team": "legal"})
    sqlite_metadata.add_document(doc)
    assert sqlite_metadata.documents_matching(WS, legal) == {"d1"}
    doc.metadata = {"team": "ops"}
    sqlite_metadata.save_document(doc)
    assert sqlite_metadata.documents_matching(WS, legal) == set()
    # the pipeline's group write (a copy read before an edit) does not undo the edit
    stale = sqlite_metadata.get_document(WS, "d1")
    doc.metadata = {"team": "legal"}
    sqlite_metadata.save_document(doc)
    stale.metadata, stale.chunk_count = {"team": "ops"}, 3
    sqlite_metadata.write_documents([DocumentWrite(document=stale, chunks=None)])
    kept = sqlite_metadata.get_document(WS, "d1")
    assert kept.metadata == {"team": "legal"} and kept.chunk_count == 3
    assert sqlite_metadata.documents_matching(WS, legal) == {"d1"}
    doc.category = "sea"
    sqlite_metadata.save_document(doc)
    sea = parse_filter({"equals": {"key": "category", "value": "sea"}})
    assert sqlite_metadata.documents_matching(WS, sea) == {"d1"}
    sqlite_metadata.delete_document(WS, "d1")
    assert sqlite_metadata.documents_matching(WS, legal) == set()
    left = sqlite_metadata.db.connect().execute("SELECT COUNT(*) FROM document_terms").fetchone()[0]
    assert left == 0
