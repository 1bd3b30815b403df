"""Index generations and the startup check, over real SQLite files and index folders.

Each embedding model has its own generation; only the one in use follows metadata. Switching
back to a model whose generation sat idle while a file was replaced (the same number of
chunks, so the counts still agree) must not serve its stale entries: the startup check
rebuilds it and says so. `lsa` (unfitted: keyword entries only) and `none` stand for two
models, as they use two generations and load nothing.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import pytest

from bunko.adapters.local.engine import GenerationMarks
from bunko.bootstrap import index_generation
from bunko.bootstrap.background import rebuild_index, resume_ingest, stale_mark
from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.services.search.search import SearchOptions
from tests.conftest import make_services

STALE_LOG = "may miss changes made while another embedding model was in use"


def start(data: Path, embedder: str):
    """Services as `bunko serve` starts them: the startup check run (and its rebuild done)."""
    services = make_services(data, embedder=embedder)
    repair = resume_ingest(services)
    if repair is not None:
        repair.join(timeout=120)
    return services


def write(services, text: str) -> None:
    services.ingest.submit_text(WS, path="notes/a.txt", content=text)
    assert services.queue.join(timeout=120)


def paths_found(services, query: str) -> list[str]:
    return [i.path for i in services.search.search(WS, query, SearchOptions(min_score=0)).items]


def marks(services) -> GenerationMarks:
    return GenerationMarks(services.settings.index_dir / index_generation(services.embedder))


def test_switching_back_to_an_idle_generation_rebuilds_it(tmp_path, caplog):
    data = tmp_path / "data"
    services = start(data, "lsa")
    write(services, "The wombat digs a burrow.")
    services.close()
    services = start(data, "none")
    write(services, "The quokka smiles at tourists.")  # revision 2, one chunk as before
    services.close()

    caplog.set_level(logging.INFO, logger="bunko.bootstrap.background")
    services = start(data, "lsa")
    try:
        assert services.index.count() == services.metadata.count_chunks() == 1
        assert paths_found(services, "quokka") == ["notes/a.txt"]
        assert paths_found(services, "wombat") == []
        assert STALE_LOG in caplog.text and "index rebuilt with 1 entries" in caplog.text
        assert stale_mark(services) is None  # rebuilt: the mark is off
    finally:
        services.close()

    caplog.clear()
    services = start(data, "lsa")  # nothing changed since: no rebuild at the next start
    try:
        assert "startup check" not in caplog.text
        assert paths_found(services, "quokka") == ["notes/a.txt"]
    finally:
        services.close()


class MarkedMeanwhile:
    """The pipeline, with another process's write (`other` marking the rest stale) landing
    while its rebuild runs."""

    def __init__(self, pipeline, other: GenerationMarks) -> None:
        self.pipeline, self.other = pipeline, other

    def reindex(self, **options) -> int:
        count = self.pipeline.reindex(**options)
        self.other.mark_others()
        return count


class KilledMidway:
    """A pipeline whose process dies inside the rebuild."""

    def reindex(self, **options) -> int:
        raise KeyboardInterrupt


def test_a_mark_set_again_during_a_rebuild_stays(tmp_path):
    data = tmp_path / "data"
    services = start(data, "lsa")
    write(services, "The wombat digs a burrow.")
    services.close()
    services = start(data, "none")
    write(services, "The quokka smiles at tourists.")
    services.close()

    services = make_services(data, embedder="lsa")
    try:
        seen = stale_mark(services)
        assert seen is not None
        # Another process writes through its own generation while this one rebuilds.
        other = GenerationMarks(services.settings.index_dir / index_generation(None))
        rebuild_index(replace(services, pipeline=MarkedMeanwhile(services.pipeline, other)))
        assert stale_mark(services) not in (None, seen)  # still stale: rebuilt again later
        rebuild_index(services)  # what `bunko reindex` does
        assert stale_mark(services) is None
    finally:
        services.close()


def test_a_rebuild_killed_midway_is_redone_at_the_next_start(tmp_path, caplog):
    """The rebuild writes keyword entries first, so the entry count is already complete while
    vectors are missing: its own stale mark, left by the kill, is what the next start sees."""
    data = tmp_path / "data"
    services = start(data, "lsa")
    write(services, "The wombat digs a burrow.")
    services.close()

    services = make_services(data, embedder="lsa")
    try:
        with pytest.raises(KeyboardInterrupt):
            rebuild_index(replace(services, pipeline=KilledMidway()))
        assert stale_mark(services) is not None
        assert services.index.count() == services.metadata.count_chunks()
    finally:
        services.close()
    caplog.set_level(logging.INFO, logger="bunko.bootstrap.background")
    services = start(data, "lsa")
    try:
        assert "its last rebuild did not finish" in caplog.text
        assert stale_mark(services) is None
    finally:
        services.close()


def test_only_writes_mark_the_other_generations(tmp_path):
    data = tmp_path / "data"
    services = start(data, "lsa")
    write(services, "The wombat digs a burrow.")
    services.close()
    services = start(data, "none")  # rebuilt for this model: a write through it
    services.close()
    services = start(data, "lsa")  # rebuilt as it may have missed that write
    try:
        assert paths_found(services, "wombat") == ["notes/a.txt"]
        assert marks(services).stale() is None
        keyword_only = GenerationMarks(marks(services).folder.parent / index_generation(None))
        assert keyword_only.stale() is not None  # the rebuild wrote through lsa's generation
        token = keyword_only.stale()
        assert paths_found(services, "wombat")  # a search writes nothing
        assert keyword_only.stale() == token
    finally:
        services.close()
