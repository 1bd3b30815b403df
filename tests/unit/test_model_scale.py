"""A model's cosine scale, from the packaged parallel passages (services/search/model_scale.py)."""

from __future__ import annotations

import numpy as np

from bunko.services.search.model_scale import (
    SCALE_LANGUAGES,
    ModelScales,
    measure_scale,
    parallel_passages,
)
from tests.waiting import wait_for


class PassageIdEmbedder:
    """Knows which parallel passage a text translates: one axis per passage, plus noise
    shared by everything (a model whose unrelated texts are far from orthogonal)."""

    name = "passage-ids"

    def __init__(self, offset: float = 0.5) -> None:
        self.rows = parallel_passages()
        self.offset = offset
        self.calls = 0

    def _vector(self, text: str) -> np.ndarray:
        v = np.full(len(self.rows) + 1, 0.0)
        v[-1] = self.offset
        for i, row in enumerate(self.rows):
            if text in row.values():
                v[i] = 1.0
        return v / np.linalg.norm(v)

    def embed_documents(self, texts):
        self.calls += 1
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text):
        return self._vector(text)


def test_the_passages_are_translations_in_fourteen_languages():
    rows = parallel_passages()
    assert len(rows) >= 30
    more = {"tr", "el", "vi", "hi", "ro", "ru", "ar", "th", "ko"}
    assert all(set(row) == {*SCALE_LANGUAGES, *more} for row in rows)
    assert all(len(set(row.values())) == len(row) for row in rows)  # each one written out


def test_the_scale_is_read_from_its_five_languages_only():
    """The fitted scales were measured on five languages: the nine more the per-query scale
    reads must not move a model's measured anchors."""
    embedder = PassageIdEmbedder(offset=0.5)
    seen: list[str] = []
    embed = embedder.embed_documents
    embedder.embed_documents = lambda texts: seen.extend(texts) or embed(texts)
    measure_scale(embedder)
    rows = parallel_passages()
    assert sorted(seen) == sorted(row[lang] for row in rows for lang in SCALE_LANGUAGES)


def test_the_scale_reads_both_anchors():
    scale = measure_scale(PassageIdEmbedder(offset=0.5))
    # a translation: the same axis (cosine 1); another passage: only the shared offset
    assert scale.related == 1.0
    assert abs(scale.unrelated - 0.2) < 1e-3  # 0.25 / 1.25
    assert scale.scaled(scale.related) == 1.0 and scale.scaled(scale.unrelated) == 0.0


def test_each_model_is_measured_once_and_a_failure_is_not_remembered():
    embedder = PassageIdEmbedder()
    scales = ModelScales()
    assert scales.scale_for(embedder) is None  # measuring in the background: keywords decide
    scale = wait_for(lambda: scales.scale_for(embedder), 10)
    assert scale == measure_scale(PassageIdEmbedder()) and embedder.calls == 1

    class Down(PassageIdEmbedder):
        name = "down"

        def embed_documents(self, texts):
            self.calls += 1
            raise ConnectionError("endpoint down")

    down = Down()
    assert scales.measure(down) is None and scales.measure(down) is None
    assert down.calls == 2 and scales.scale_for(down) is None  # tried again: may be back


def test_a_model_that_separates_nothing_gets_no_scale():
    class Constant(PassageIdEmbedder):
        name = "constant"

        def _vector(self, text):
            return np.ones(4) / 2

    scales = ModelScales()
    assert scales.measure(Constant()) is None and scales.scale_for(Constant()) is None
