"""Postings carry their chunk's length; a snapshot saved before they did still opens, scores
the same, and is written whole by the next save."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bunko.adapters.local.engine.keyword_index import KeywordIndex
from bunko.domain.keyword_analysis import QueryTerm


def test_segments_saved_without_lengths_open_score_alike_and_are_rewritten(tmp_path: Path):
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(25)]
    docs = [list(rng.choice(words, size=int(rng.integers(1, 40)))) for _ in range(2000)]
    index = KeywordIndex()
    for start in range(0, len(docs), 11):
        index.add_many(start, docs[start : start + 11])
    live = np.ones(len(docs), dtype=bool)
    names = iter(range(1, 10_000))
    part = index.save(tmp_path, lambda: f"{next(names):05d}")
    query = [QueryTerm(t) for t in ("w3", "w9", "w21")]
    expected = index.search(query, live, 100)
    lens_files = sorted(tmp_path.glob("*.lens.npy"))
    assert len(lens_files) == len(part["segments"]) > 1
    for path in lens_files:  # as an older Bunko saved them
        path.unlink()

    reopened = KeywordIndex.load(tmp_path, part, live)
    assert reopened.search(query, live, 100) == expected
    assert all(seg.name == "" for seg in reopened.segments)  # to be written whole

    again = reopened.save(tmp_path, lambda: f"{next(names):05d}")
    assert set(again["segments"]).isdisjoint(part["segments"])
    assert all((tmp_path / f).exists() for f in reopened.files(again))
    assert KeywordIndex.load(tmp_path, again, live).search(query, live, 100) == expected


def test_a_posting_holds_its_chunk_length():
    index = KeywordIndex()
    index.add_many(0, [["a", "b", "a"], ["b"], ["a"] * 7])
    index.seal()
    (segment,) = index.segments
    # term "a" (id 0): slots 0 and 2, lengths 3 and 7; term "b": slots 0 and 1, 3 and 1.
    assert segment.slots.tolist() == [0, 2, 0, 1]
    assert segment.lens.tolist() == [3, 7, 3, 1]
    assert segment.tfs.tolist() == [2, 7, 1, 1]
