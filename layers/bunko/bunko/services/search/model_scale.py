"""A model's cosine scale, measured on passages shipped in the package, so that a model
without a fitted calibration row still has its vectors judged (services/search/calibration.py).

Cosines mean different things per model: USE scores unrelated passages ~0.07 and a
translation ~0.71, e5 ~0.74 and ~0.90. The packaged parallel passages (data/
scale_passages.jsonl: thirty short everyday passages written for Bunko, each in English,
Japanese, German, Spanish and Chinese, the five a scale is read from, and in nine more
languages services/search/query_scale.py reads) give both anchors for any model: `related`
is the mean cosine of a passage (embedded as a query) with its translations (as documents),
`unrelated` the mean over different passages. One measurement per model and process: the 150
texts as one batch of documents and the 30 English ones as queries, in a background thread
(a search never waits for it: until it is known, keywords alone decide, as they did for such
a model before).
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import numpy as np

from bunko.ports import Embedder
from bunko.services.search.calibration import ModelScale

log = logging.getLogger(__name__)

PASSAGES = Path(__file__).with_name("data") / "scale_passages.jsonl"
# The languages a model's scale is read from (the fitted scales were measured on these).
SCALE_LANGUAGES = ("en", "ja", "de", "es", "zh")


def parallel_passages() -> list[dict[str, str]]:
    with PASSAGES.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def measure_scale(embedder: Embedder) -> ModelScale:
    """Embed the parallel passages with `embedder` and read its two anchors."""
    rows = [{lang: row[lang] for lang in SCALE_LANGUAGES} for row in parallel_passages()]
    texts = [text for row in rows for text in row.values()]
    passage = np.array([i for i, row in enumerate(rows) for _ in row])
    language = np.array([lang for row in rows for lang in row])
    asked = [row["en"] for row in rows]  # the queries: one language is enough for a scale
    queries = np.stack([np.asarray(embedder.embed_query(t), dtype=np.float64) for t in asked])
    documents = np.asarray(embedder.embed_documents(texts), dtype=np.float64)
    queries /= np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
    documents /= np.maximum(np.linalg.norm(documents, axis=1, keepdims=True), 1e-12)
    cosines = queries @ documents.T
    same = np.arange(len(rows))[:, None] == passage[None, :]
    translated = same & (language[None, :] != "en")
    return ModelScale(
        unrelated=round(float(cosines[~same].mean()), 4),
        related=round(float(cosines[translated].mean()), 4),
    )


class ModelScales:
    """Each model's scale, measured once a process in a background thread; None until then,
    and when it cannot be measured (the endpoint failed: tried again at the next search) or
    the model separates nothing."""

    def __init__(self) -> None:
        self._known: dict[str, ModelScale | None] = {}
        self._measuring: set[str] = set()
        self._lock = threading.Lock()

    def scale_for(self, embedder: Embedder) -> ModelScale | None:
        """The scale if known; else None, with a measurement started."""
        with self._lock:
            if embedder.name in self._known:
                return self._known[embedder.name]
            if embedder.name in self._measuring:
                return None
            self._measuring.add(embedder.name)
        threading.Thread(
            target=self.measure, args=(embedder,), name="model-scale", daemon=True
        ).start()
        return None

    def measure(self, embedder: Embedder) -> ModelScale | None:
        """Measure now (and remember the result unless the model could not be reached)."""
        # The name is read once: for a remote model it may need the endpoint (a probe),
        # which is what has just failed when the handler below runs.
        name = embedder.name
        try:
            scale: ModelScale | None = measure_scale(embedder)
        except Exception:
            log.exception("could not measure the cosine scale of %s", name)
            with self._lock:
                self._measuring.discard(name)
            return None
        if scale.related - scale.unrelated < 0.05:
            log.warning("%s does not separate related passages; keywords decide", name)
            scale = None
        with self._lock:
            self._known[name] = scale
            self._measuring.discard(name)
        return scale
