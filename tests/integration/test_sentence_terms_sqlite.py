"""The relevance gate's sentence readings on the embedded default (the graph `bunko serve`
builds, a real SQLite file, the packaged USE model): each chunk keeps its reading from ingest
(migration 0017) and a search reads no chunk's text for its evidence; an edited item is read
again. A library indexed before 0017 opens with no readings, and its searches read the text
and give the same similarities."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path

from bunko.adapters.collecting_queue import CollectingQueue
from bunko.bootstrap.root import build_services
from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.services.search import SearchOptions, read_sentences
from bunko.services.search import evidence as evidence_module

MIGRATION = "0017_chunk_sentence_terms.sql"
FILES = {
    "offices.md": "# Offices\n\nThe Osaka office has 24 desks. Visitors sign in at the office "
    "reception on the ground floor.\n\nThe London office has 60 desks and opens at 08:00.",
    "leave.md": "# Leave\n\nEmployees receive 25 days of paid leave a year. Tell your manager "
    "before 10:00 when you are ill.\n\nUnused leave days carry over until March.",
    "規程.md": "# 就業規則\n\nリモートワークは週に3日まで認められています。残業は事前に上長の"
    "承認が必要です。",
}
QUESTIONS = [
    "How many desks does the Osaka office have?",
    "Can I bring my dog to the office?",  # the library's topic, answered nowhere
    "リモートワークは週に何日までできますか？",
    "育児休業は何か月取れますか？",
]


@contextmanager
def library(data_dir: Path):
    queue = CollectingQueue()
    services = build_services(Settings(data_dir=data_dir, embedder="use"), queue=queue)
    try:
        yield services, queue
    finally:
        services.close()


def asked(services) -> tuple[dict[str, list[tuple]], int]:
    """Each question's (path, chunk index, similarity) hits, asked with the sentence caches
    empty, and how many chunks the gate read from their text."""
    read = 0
    out = {}
    for question in QUESTIONS:
        evidence_module._units.cache_clear()
        evidence_module._stored_units.cache_clear()
        items = services.search.search(WS, question, SearchOptions(limit=10, min_score=0.0)).items
        out[question] = sorted((i.path, i.chunk_index, i.similarity) for i in items)
        read += evidence_module._units.cache_info().misses
    return out, read


def chunks(services) -> list:
    metadata = services.metadata
    return [c for d in metadata.iter_documents(WS) for c in metadata.get_chunks(WS, d.id)]


def test_readings_stored_at_ingest_and_a_library_from_before_reads_its_text_alike(tmp_path):
    with library(tmp_path) as (services, queue):
        for path, text in FILES.items():
            services.ingest.submit_text(WS, path=path, content=text)
        services.pipeline.process(queue.take())
        stored = chunks(services)
        assert stored and all(c.sentence_terms == read_sentences(c.content) for c in stored)
        with_readings, read = asked(services)
        assert read == 0  # every candidate's sentences came with it
        best = max(with_readings[QUESTIONS[0]], key=lambda hit: hit[2])
        assert best[0] == "offices.md"

    # The library as Bunko left it before migration 0017: no column, the migration pending.
    conn = sqlite3.connect(tmp_path / "bunko.db")
    conn.execute("ALTER TABLE chunks DROP COLUMN sentence_terms")
    conn.execute("DELETE FROM schema_migrations WHERE name = ?", (MIGRATION,))
    conn.commit()
    conn.close()

    with library(tmp_path) as (services, _):
        assert all(c.sentence_terms is None for c in chunks(services))
        from_text, read = asked(services)
        assert read > 0
        assert from_text == with_readings


def test_an_edited_item_is_read_again(tmp_path):
    with library(tmp_path) as (services, queue):
        services.ingest.submit_text(WS, path="offices.md", content=FILES["offices.md"])
        services.pipeline.process(queue.take())
        (chunk, *_) = chunks(services)
        edited = "The Kyoto office has a roof terrace and 12 desks."
        services.items.update_item(WS, chunk.id, edited)
        (again,) = [c for c in chunks(services) if c.id == chunk.id]
        assert again.content == edited and again.sentence_terms == read_sentences(edited)
