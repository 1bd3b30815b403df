"""What only the local index promises: crash recovery, its files, compaction, threads."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest

from bunko.adapters.local.engine import (
    EngineTuning,
    LocalSearchIndex,
    vector_index,
    vector_sketches,
)
from bunko.adapters.local.engine.duplicate_groups import DuplicateGroups
from bunko.adapters.local.engine.workspace_engines import Added, WorkspaceEngines
from bunko.domain.keyword_analysis import query_terms
from bunko.errors import ValidationError
from bunko.ports import IndexEntry, SearchFilter

WS = "ws-1"
ALL = SearchFilter(workspace_id=WS)


def entry(chunk: str, text: str, vector=None, *, doc: str = "d", category=None) -> IndexEntry:
    return IndexEntry(chunk, doc, WS, 1, text, category=category, vector=vector)


def unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_korean_word_is_found_inside_running_text(tmp_path: Path):
    index = LocalSearchIndex(tmp_path, dimension=None)
    index.index([entry("ko1", "한국어검색엔진을 만들었다"), entry("ko2", "오늘은 비가 온다")])
    assert [h.chunk_id for h in index.keyword_search("검색", ALL, 10)] == ["ko1"]


def test_vectors_written_after_the_last_save_survive_a_crash(tmp_path: Path):
    first = LocalSearchIndex(tmp_path, dimension=4)
    first.index([entry("a", "alpha", [1, 0, 0, 0])])
    first.flush()  # a saved graph that the next write makes stale
    first.index([entry("b", "beta", [0, 1, 0, 0])])
    first.delete_chunks(WS, ["a"])
    # No close(): the process "dies" here. The reopened index must notice the stale graph.
    second = LocalSearchIndex(tmp_path, dimension=4)
    hits = second.vector_search([1, 1, 0, 0], ALL, 10)
    assert [h.chunk_id for h in hits] == ["b"]
    second.close()


def test_a_torn_graph_file_is_rebuilt_from_the_database(tmp_path: Path):
    index = LocalSearchIndex(tmp_path, dimension=4)
    index.index([entry("a", "alpha", [1, 0, 0, 0])])
    index.close()
    graphs = list((tmp_path / "workspaces").glob("*/*.usearch"))
    assert graphs
    for graph in graphs:
        graph.write_bytes(b"not a graph")
    reopened = LocalSearchIndex(tmp_path, dimension=4)
    assert [h.chunk_id for h in reopened.vector_search([1, 0, 0, 0], ALL, 10)] == ["a"]


def test_opening_with_another_dimension_is_refused(tmp_path: Path):
    LocalSearchIndex(tmp_path, dimension=4).index([entry("a", "x", [1, 0, 0, 0])])
    with pytest.raises(ValidationError, match="4-dimensional"):
        LocalSearchIndex(tmp_path, dimension=8)
    assert LocalSearchIndex(tmp_path, dimension=None).dimension == 4


def test_a_changed_analyzer_empties_the_index_for_a_rebuild(tmp_path: Path):
    LocalSearchIndex(tmp_path).index([entry("a", "text")])
    with sqlite3.connect(tmp_path / "index.db") as db:
        db.execute("UPDATE meta SET value = 'old' WHERE name = 'analyzer'")
    reopened = LocalSearchIndex(tmp_path)
    assert reopened.count() == 0


def test_many_replacements_are_compacted_and_stay_correct(tmp_path: Path):
    index = LocalSearchIndex(tmp_path, dimension=4)
    for round_ in range(30):
        index.index([entry(f"c{i}", f"round{round_} item", [1, 0, 0, i]) for i in range(100)])
    assert index.count(WS) == 100
    assert len(index.keyword_search("round29", ALL, 1000)) == 100
    assert index.keyword_search("round28", ALL, 1000) == []
    assert len(index.vector_search([1, 0, 0, 0], ALL, 1000)) == 100


def test_filtered_vector_search_over_a_large_subset_uses_the_graph(tmp_path: Path):
    # exact_max 100: a filter keeping half the rows takes the oversampling path.
    tuning = EngineTuning(exact_max=100, exact_fraction=0.0, pending_max=256)
    rng = np.random.default_rng(3)
    vectors = unit(rng, 3000, 16)
    index = LocalSearchIndex(tmp_path, dimension=16, tuning=tuning)
    index.index(
        [
            entry(f"c{i}", "x", vectors[i], doc=f"d{i}", category="even" if i % 2 == 0 else "odd")
            for i in range(3000)
        ]
    )
    query = unit(rng, 1, 16)[0]
    hits = index.vector_search(query, SearchFilter(WS, category="odd"), 20)
    odd = np.arange(1, 3000, 2)
    exact = {f"c{i}" for i in odd[np.argsort(-(vectors[odd] @ query))[:20]]}
    assert len(hits) == 20
    assert all(int(h.chunk_id[1:]) % 2 == 1 for h in hits)
    assert len(exact & {h.chunk_id for h in hits}) >= 18


@pytest.mark.parametrize("saved", ["without sketches", "with another basis"])
def test_a_large_filtered_scan_is_shortlisted_by_sketches_and_stays_exact(
    tmp_path: Path, monkeypatch, saved: str
):
    shortlists: list[tuple[int, int]] = []
    real = vector_sketches.shortlist

    def spy(sketches, query, rows, limit, **options):
        kept = real(sketches, query, rows, limit, **options)
        shortlists.append((len(rows), len(kept)))
        return kept

    monkeypatch.setattr(vector_sketches, "shortlist", spy)
    rng = np.random.default_rng(11)
    centres = unit(rng, 40, 256)
    vectors = centres[rng.integers(0, 40, 6000)] + 0.08 * unit(rng, 6000, 256)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    category = ["a" if i % 4 == 0 else "b" for i in range(6000)]
    tuning = EngineTuning(shortlist_min=400)  # shortlists this small set
    index = LocalSearchIndex(tmp_path, dimension=256, tuning=tuning)
    for start in range(0, 6000, 25):  # per-document writes
        index.index(
            [
                entry(f"c{i}", "x", vectors[i], doc=f"d{start}", category=category[i])
                for i in range(start, start + 25)
            ]
        )
        if start == 5000:
            index.flush()  # every row so far in the graph (and sketched); the rest pending
    queries = centres[:20] + 0.05 * unit(rng, 20, 256)
    allowed = np.arange(0, 6000, 4)

    def check(subject: LocalSearchIndex) -> list[list[str]]:
        found, overlap = [], []
        for query in queries:
            query = query / np.linalg.norm(query)
            hits = subject.vector_search(query, SearchFilter(WS, category="a"), 10)
            exact = allowed[np.argsort(-(vectors[allowed] @ query))[:10]]
            overlap.append(len({f"c{i}" for i in exact} & {h.chunk_id for h in hits}) / 10)
            for hit in hits:  # the cosine reported is the exact one, not the sketch's
                assert hit.score == pytest.approx(
                    float(vectors[int(hit.chunk_id[1:])] @ query), abs=2e-3
                )
            found.append([h.chunk_id for h in hits])
        assert np.mean(overlap) >= 0.97
        return found

    before = check(index)
    assert shortlists and all(kept < rows for rows, kept in shortlists)
    index.close()
    # A snapshot saved before sketches existed, or whose sketches another projection made
    # (another NumPy's), gets them computed when it opens.
    (manifest,) = tmp_path.glob("workspaces/*/manifest.json")
    part = json.loads(manifest.read_text())
    basis = part["vectors"]["sketch_basis"]
    if saved == "without sketches":
        for path in manifest.parent.glob("*.sketch"):
            path.unlink()
        del part["vectors"]["sketch_file"], part["vectors"]["sketch_basis"]
    else:
        sketch_file = manifest.parent / part["vectors"]["sketch_file"]
        sketch_file.write_bytes(bytes(len(sketch_file.read_bytes())))  # all zero: useless
        part["vectors"]["sketch_basis"] = "another"
    manifest.write_text(json.dumps(part))
    reopened = LocalSearchIndex(tmp_path, dimension=256, tuning=tuning)
    assert check(reopened) == before
    assert list(manifest.parent.glob("*.sketch"))
    reopened.close()  # saves the snapshot again, with its sketches: computed once, not per start
    assert json.loads(manifest.read_text())["vectors"]["sketch_basis"] == basis


def test_concurrent_writers_and_readers(tmp_path: Path):
    index = LocalSearchIndex(tmp_path, dimension=4)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(50):
                index.index([entry(f"w{n}-{i}", f"shared writer{n}", [1, n, i, 0], doc=f"d{n}")])
        except BaseException as exc:
            errors.append(exc)

    def read() -> None:
        try:
            for _ in range(100):
                index.hybrid_search("shared", [1, 0, 0, 0], ALL, 10)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(3)]
    threads += [threading.Thread(target=read) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert index.count(WS) == 150
    assert len(index.keyword_search("shared", ALL, 1000)) == 150


def test_near_duplicates_are_all_found_and_survive_their_representative(tmp_path: Path):
    # Many graph adds (groups form), every search through the graph.
    tuning = EngineTuning(pending_max=64, exact_max=0, exact_fraction=0.0)
    rng = np.random.default_rng(5)
    bases = unit(rng, 200, 32)
    index = LocalSearchIndex(tmp_path, dimension=32, tuning=tuning)
    for copy in range(8):  # copies arrive in separate batches, as versions of files do
        noisy = bases + 0.01 * rng.standard_normal(bases.shape).astype(np.float32)
        index.index([entry(f"b{b}-{copy}", "x", noisy[b], doc=f"d{b}") for b in range(200)])
    expected = {f"b7-{copy}" for copy in range(8)}
    assert {h.chunk_id for h in index.vector_search(bases[7], ALL, 8)} == expected
    index.delete_chunks(WS, ["b7-0"])  # the group's representative
    index.close()
    reopened = LocalSearchIndex(tmp_path, dimension=32, tuning=tuning)
    hits = reopened.vector_search(bases[7], ALL, 7)
    assert {h.chunk_id for h in hits} == expected - {"b7-0"}


def test_a_snapshot_after_keyword_only_entries_reopens_without_a_rebuild(tmp_path: Path, caplog):
    tuning = EngineTuning(pending_max=4)
    index = LocalSearchIndex(tmp_path, dimension=4, tuning=tuning)
    index.index([entry("v", "with vector", [1, 0, 0, 0])])
    index.flush()
    index.index([entry(f"k{i}", "keyword only") for i in range(10)])  # drained: zero rows
    index.close()
    with caplog.at_level("INFO", logger="bunko.adapters.local"):
        reopened = LocalSearchIndex(tmp_path, dimension=4, tuning=tuning)
        assert [h.chunk_id for h in reopened.vector_search([1, 0, 0, 0], ALL, 10)] == ["v"]
    assert "opened, 0 entries replayed" in caplog.text
    assert len(reopened.keyword_search("keyword", ALL, 100)) == 10


def test_a_filtered_search_sees_writes_and_deletes_made_since_the_last_one(tmp_path: Path):
    """The allowed masks kept per filter follow every change."""
    rng = np.random.default_rng(5)
    vectors = unit(rng, 3, 8)
    index = LocalSearchIndex(tmp_path, dimension=8)
    index.index([entry("c0", "apple pie", vectors[0], doc="d0", category="a")])
    only_a = SearchFilter(WS, category="a")
    assert [h.chunk_id for h in index.keyword_search("apple", only_a, 10)] == ["c0"]
    assert [h.chunk_id for h in index.vector_search(vectors[1], only_a, 10)] == ["c0"]
    index.index([entry("c1", "apple tart", vectors[1], doc="d1", category="a")])
    assert {h.chunk_id for h in index.keyword_search("apple", only_a, 10)} == {"c0", "c1"}
    assert index.vector_search(vectors[1], only_a, 10)[0].chunk_id == "c1"
    index.delete_document(WS, "d0")
    assert [h.chunk_id for h in index.keyword_search("apple", only_a, 10)] == ["c1"]
    assert [h.chunk_id for h in index.vector_search(vectors[0], only_a, 10)] == ["c1"]


def test_rows_entering_the_graph_in_the_background_are_found_throughout(tmp_path: Path):
    # Through the graph, with the tail.
    tuning = EngineTuning(pending_max=64, exact_max=0, exact_fraction=0.0)
    rng = np.random.default_rng(11)
    vectors = unit(rng, 1600, 64)
    index = LocalSearchIndex(tmp_path, dimension=64, tuning=tuning)
    errors: list[BaseException] = []
    found: list[bool] = []
    stop = threading.Event()

    def read() -> None:  # searches while inserts run: each written row should find itself
        picks = np.random.default_rng(1)
        try:
            while not stop.is_set():
                written = index.count(WS)
                if written:
                    i = int(picks.integers(0, written))
                    hits = index.vector_search(vectors[i], ALL, 10)
                    found.append(f"c{i}" in {h.chunk_id for h in hits})
        except BaseException as exc:
            errors.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    for start in range(0, 1600, 20):  # per-document writes of 20 chunks
        index.index([entry(f"c{i}", "x", vectors[i]) for i in range(start, start + 20)])
    stop.set()
    reader.join()
    assert errors == []
    # The graph is approximate: random 64-d vectors leave a few nodes hard to reach (as
    # with inserts in the writer's thread); a row lost between tail and graph would not be.
    assert len(found) > 50 and sum(found) >= 0.97 * len(found)
    assert 0 < index._workspaces[WS].vectors._in_graph <= 1600
    index.close()
    reopened = LocalSearchIndex(tmp_path, dimension=64, tuning=tuning)
    assert reopened._workspaces == {} and reopened.count(WS) == 1600
    hits = [reopened.vector_search(vectors[i], ALL, 10) for i in range(1600)]
    kept = sum(f"c{i}" in {h.chunk_id for h in hits[i]} for i in range(1600))
    assert kept >= 0.98 * 1600
    assert reopened._workspaces[WS].vectors._in_graph == 1600  # the snapshot drained the tail


def test_a_failed_background_insert_is_raised_to_a_writer_and_loses_nothing(
    tmp_path: Path, monkeypatch
):
    real_insert = vector_index.VectorIndex._insert
    failures = []

    def failing_once(self, start, block):
        if not failures:
            failures.append(start)
            raise MemoryError("the graph could not grow")
        return real_insert(self, start, block)

    monkeypatch.setattr(vector_index.VectorIndex, "_insert", failing_once)
    rng = np.random.default_rng(12)
    vectors = unit(rng, 200, 8)
    index = LocalSearchIndex(tmp_path, dimension=8, tuning=EngineTuning(pending_max=32))
    raised = 0
    for i in range(200):
        try:
            index.index([entry(f"c{i}", f"word{i}", vectors[i])])
        except MemoryError:
            raised += 1
    assert failures and raised == 1  # the next writer learns of it, once
    assert index.count(WS) == 200
    for i in range(0, 200, 9):  # every committed row is there, the failed batch's too
        assert index.vector_search(vectors[i], ALL, 1)[0].chunk_id == f"c{i}"
        assert index.keyword_search(f"word{i}", ALL, 1)[0].chunk_id == f"c{i}"


class LegsSeen(WorkspaceEngines):
    """A workspace's engines that note the thread each search leg runs in; `broken`: the
    vector leg is slow and the keyword leg fails."""

    def __init__(self, workspace_id: str, directory: Path) -> None:
        super().__init__(workspace_id, directory)
        self.threads: dict[str, str] = {}
        self.broken = False
        self.vector_done = threading.Event()

    def vector_search(self, *args):
        self.threads["vector"] = threading.current_thread().name
        if self.broken:
            self.vector_done.wait(0.2)
            self.vector_done.set()
            return []
        return super().vector_search(*args)

    def keyword_search(self, *args):
        self.threads["keyword"] = threading.current_thread().name
        if self.broken:
            raise RuntimeError("the keyword leg broke")
        return super().keyword_search(*args)


def test_a_hybrid_search_runs_its_legs_side_by_side_with_each_legs_answer(tmp_path: Path):
    rng = np.random.default_rng(5)
    vectors = unit(rng, 300, 16)
    index = LocalSearchIndex(tmp_path, dimension=16)
    index.index(
        [
            entry(
                f"c{i}", f"word{i % 7} common", vectors[i], doc=f"d{i % 30}", category=f"k{i % 3}"
            )
            for i in range(300)
        ]
    )
    for filters in (ALL, SearchFilter(workspace_id=WS, category="k1")):
        keyword, semantic = index.hybrid_search("word3 common", vectors[4], filters, 20)
        assert keyword == index.keyword_search("word3 common", filters, 20) and keyword
        assert semantic == index.vector_search(vectors[4], filters, 20) and semantic
    assert index.hybrid_search("", vectors[4], ALL, 5)[0] == []
    assert index.hybrid_search("word3", None, ALL, 5)[1] == []

    ws = LegsSeen(WS, tmp_path / "legs")
    # keys start at 1, as the store's do
    added = [Added(i + 1, f"c{i}", "d", None, [f"word{i % 7}"], vectors[i]) for i in range(300)]
    ws.add(added, 16)
    ws.hybrid_search(query_terms("word3"), vectors[4], ALL, 5)
    assert ws.threads["keyword"] == threading.current_thread().name
    assert ws.threads["vector"].startswith("vector-leg")

    ws.broken = True
    with pytest.raises(RuntimeError, match="keyword leg broke"):
        ws.hybrid_search(query_terms("word3"), vectors[4], ALL, 5)
    assert ws.vector_done.is_set()  # the vector leg ended before the error left the lock


def test_a_search_during_a_background_insert_waits_for_one_step_not_the_batch(
    tmp_path: Path, monkeypatch
):
    # search_first_seconds 30: no race on a busy host.
    tuning = EngineTuning(pending_max=64, insert_step=8, search_first_seconds=30.0)
    rng = np.random.default_rng(21)
    vectors = unit(rng, 64, 8)
    index = LocalSearchIndex(tmp_path, dimension=8, tuning=tuning)
    events: list[str] = []
    real_add = vector_index.add_to_graph
    searched = threading.Event()

    def search() -> None:
        index.vector_search(vectors[0], ALL, 3)
        events.append("search")
        searched.set()

    def add_step(graph, groups, rows, start, block):
        events.append(f"step {start}")
        if start == 0:  # the search arrives while the first step holds the graph
            threading.Thread(target=search).start()
            while not index._workspaces[WS].vectors._searches:
                searched.wait(0.001)
        real_add(graph, groups, rows, start, block)

    monkeypatch.setattr(vector_index, "add_to_graph", add_step)
    index.index([entry(f"c{i}", f"word{i}", vectors[i]) for i in range(64)])
    assert searched.wait(30)
    index.flush()
    assert events[:3] == ["step 0", "search", "step 8"]  # in after the first step
    assert [e for e in events if e.startswith("step")] == [f"step {i}" for i in range(0, 64, 8)]
    assert index.vector_search(vectors[40], ALL, 1)[0].chunk_id == "c40"


def test_a_writer_waiting_for_the_graph_does_not_hold_up_searches(tmp_path: Path):
    rng = np.random.default_rng(22)
    vectors = unit(rng, 120, 8)
    index = LocalSearchIndex(
        tmp_path, dimension=8, tuning=EngineTuning(pending_max=16, pending_limit=2)
    )
    index.index([entry("c0", "word0", vectors[0])])  # the workspace's vector index exists
    vectors_index = index._workspaces[WS].vectors
    graph, waited = vectors_index._graph_lock, threading.Event()
    graph.acquire()  # the graph is busy (a slow step holds it): the writer falls behind it
    try:
        writer = threading.Thread(
            target=lambda: [
                index.index([entry(f"c{i}", f"word{i}", vectors[i])]) for i in range(1, 120)
            ]
        )
        writer.start()
        for _ in range(3000):  # until the writer waits for the graph
            if vectors_index.backlog(1):
                break
            waited.wait(0.01)
        assert vectors_index.backlog(1)
        found: list = []
        reader = threading.Thread(
            target=lambda: found.append(index.keyword_search("word3", ALL, 5))
        )
        reader.start()
        reader.join(30)  # the keyword leg needs neither the graph nor the waiting writer
        alive = reader.is_alive()
    finally:
        graph.release()
    writer.join(60)
    assert not alive and [h.chunk_id for h in found[0]] == ["c3"]
    assert index.count(WS) == 120


def test_duplicate_group_sizes_follow_every_extend_and_survive_a_reload(tmp_path: Path):
    groups = DuplicateGroups()
    rng = np.random.default_rng(3)
    rep_of: list[int] = []
    for _batch in range(6):  # past the sizes' first capacity (1,024 rows)
        rows = np.arange(len(rep_of), len(rep_of) + 500)
        for row in rows.tolist():  # a third are copies of an earlier row (any batch)
            copy = row > 0 and rng.random() < 0.3
            rep_of.append(rep_of[int(rng.integers(0, row))] if copy else row)
        groups.extend(rows, np.asarray(rep_of[rows[0] :]))
    expected = np.bincount(rep_of, minlength=len(rep_of)).tolist()
    every = np.arange(len(rep_of))
    assert groups.sizes(every).tolist() == expected
    groups.save(tmp_path / "groups.npy")
    assert (
        DuplicateGroups.load(tmp_path / "groups.npy", len(rep_of)).sizes(every).tolist() == expected
    )
    representatives = every[np.asarray(expected) > 0]
    assert sorted(groups.expand(representatives).tolist()) == every.tolist()
