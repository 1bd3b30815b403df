"""A model's cosine scale, measured on passages shipped in the package, so that a model
without a fitted calibration row still has its vectors judged (services/calibration.py).

Cosines mean different things per model: USE scores unrelated passages ~0.07 and a
translation ~0.71, e5 ~0.74 and ~0.90. The packaged parallel passages (data/
scale_passages.jsonl: thirty short everyday passages, each in English, Japanese, German,
Spanish and Chinese, written for Bunko) give both anchors for any model: `related` is the
mean cosine of a passage (embedded as a query) with its translations (as documents),
`unrelated` the mean over different passages. One measurement per model and process: 150
short texts, one batch of documents and 150 query embeddings.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import numpy as np

from bunko.ports import Embedder
from bunko.services.calibration import ModelScale

log = logging.getLogger(__name__)

PASSAGES = Path(__file__).with_name("data") / "scale_passages.jsonl"


def parallel_passages() -> list[dict[str, str]]:
    with PASSAGES.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def measure_scale(embedder: Embedder) -> ModelScale:
    """Embed the parallel passages with `embedder` and read its two anchors."""
    rows = parallel_passages()
    texts = [text for row in rows for text in row.values()]
    passage = np.array([i for i, row in enumerate(rows) for _ in row])
    language = np.array([lang for row in rows for lang in row])
    queries = np.stack([np.asarray(embedder.embed_query(t), dtype=np.float64) for t in texts])
    documents = np.asarray(embedder.embed_documents(texts), dtype=np.float64)
    queries /= np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
    documents /= np.maximum(np.linalg.norm(documents, axis=1, keepdims=True), 1e-12)
    cosines = queries @ documents.T
    same = passage[:, None] == passage[None, :]
    translated = same & (language[:, None] != language[None, :])
    return ModelScale(
        unrelated=round(float(cosines[~same].mean()), 4),
        related=round(float(cosines[translated].mean()), 4),
    )


class ModelScales:
    """Each model's scale, measured once a process (None when it cannot be: the model's
    endpoint failed, or it separates nothing)."""

    def __init__(self) -> None:
        self._known: dict[str, ModelScale | None] = {}
        self._lock = threading.Lock()

    def scale_for(self, embedder: Embedder) -> ModelScale | None:
        with self._lock:
            if embedder.name in self._known:
                return self._known[embedder.name]
        try:
            scale: ModelScale | None = measure_scale(embedder)
        except Exception:
            log.exception("could not measure the cosine scale of %s", embedder.name)
            return None  # measured again next time: the endpoint may be back
        if scale.related - scale.unrelated < 0.05:
            log.warning("%s does not separate related passages; keywords decide", embedder.name)
            scale = None
        with self._lock:
            self._known[embedder.name] = scale
        return scale
