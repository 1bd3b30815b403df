"""Per-query normalisation of a model's cosines against a background of passages shipped
with the package, so the gate judges a question in another language than the files on the
same scale as one in their language (docs/relevance.md, "Questions in another language").

e5's cosines for a question in another language than the passages sit lower across the
board (xquad-dev: the gold paragraph 0.82 for German and 0.80 for Greek questions against
0.87 for English ones), so a fixed scale fitted mostly on same-language questions refuses
them. Here each query is first scored against the background passages *in the library's
language* (the thirty packaged parallel passages, services/search/data/scale_passages.jsonl):
their mean `m` and spread `s` say where unrelated passages in that language fall for this
query. Its cosines are then read as a z-score and put back on the model's scale where a
same-language query's would fall:

    cos_eff = U + (cos − m) · S / s

`U` and `S` being the mean and spread a question in that language gets (the background
passages asked as queries against the others). For a same-language question m ≈ U and
s ≈ S, so little moves; for a cross-lingual one the whole row rises by the language gap.
The mixing of languages matters: background passages in the question's own language would
raise `m` and `s` instead, which is why only the library's language counts. The library's
language is read from the text of the best vector candidates (`text_language`); a language
the background does not hold, or no text, leaves the cosines as they are.

Only models listed in PER_QUERY are normalised (e5, the refined generation's): the instant
USE generation keeps its fitted scale. The background is embedded once per model and
process, in a background thread (a search never waits: until then, the fixed scale).
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass

import numpy as np

from bunko.ports import Embedder
from bunko.services.search.calibration import ModelScale
from bunko.services.search.model_scale import parallel_passages

log = logging.getLogger(__name__)

# Embedder name prefixes whose cosines are normalised per query.
PER_QUERY = ("multilingual-e5-small",)

_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"[a-zà-öø-ÿ]+")
# A few of each language's commonest words (no overlap between the lists).
_STOPWORDS = {
    "en": frozenset(
        [
            "the",
            "and",
            "of",
            "to",
            "in",
            "is",
            "was",
            "for",
            "that",
            "with",
            "as",
            "by",
            "on",
            "are",
            "from",
            "which",
        ]
    ),
    "de": frozenset(
        [
            "der",
            "die",
            "und",
            "das",
            "ist",
            "nicht",
            "ein",
            "eine",
            "den",
            "von",
            "mit",
            "sich",
            "des",
            "auf",
            "für",
            "im",
        ]
    ),
    "es": frozenset(
        [
            "el",
            "la",
            "los",
            "las",
            "y",
            "que",
            "en",
            "del",
            "por",
            "con",
            "una",
            "para",
            "es",
            "se",
            "al",
        ]
    ),
}


def text_language(text: str) -> str | None:
    """The background language `text` is written in (en, ja, de, es, zh), or None."""
    if _KANA.search(text):
        return "ja"
    if len(_HAN.findall(text)) >= 5:
        return "zh"
    words = _LATIN_WORD.findall(text.lower())
    counts = {lang: sum(w in stop for w in words) for lang, stop in _STOPWORDS.items()}
    best = max(counts, key=lambda lang: counts[lang])
    return best if counts[best] >= 2 else None


@dataclass(frozen=True)
class _Background:
    vectors: dict[str, np.ndarray]  # language → [30, dim] unit passage vectors
    typical: dict[str, tuple[float, float]]  # language → (U, S) of same-language questions


def _unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float64)
    return rows / np.maximum(np.linalg.norm(rows, axis=-1, keepdims=True), 1e-12)


def measure_background(embedder: Embedder) -> _Background:
    """Embed the background passages (as documents, and as queries for U and S)."""
    rows = parallel_passages()
    vectors: dict[str, np.ndarray] = {}
    typical: dict[str, tuple[float, float]] = {}
    for lang in rows[0]:
        texts = [row[lang] for row in rows]
        docs = _unit(embedder.embed_documents(texts))
        asked = _unit(np.stack([embedder.embed_query(t) for t in texts]))
        cosines = asked @ docs.T
        others = ~np.eye(len(texts), dtype=bool)  # a passage is not its own background
        means = np.array([c[o].mean() for c, o in zip(cosines, others, strict=True)])
        spreads = np.array([c[o].std() for c, o in zip(cosines, others, strict=True)])
        vectors[lang] = docs
        typical[lang] = (float(means.mean()), float(spreads.mean()))
    return _Background(vectors, typical)


class QueryScales:
    """Each normalised model's background, measured once a process in a background thread."""

    def __init__(self) -> None:
        self._known: dict[str, _Background | None] = {}
        self._lock = threading.Lock()
        self.enabled = True  # off: every model on its fixed scale (the bench compares)

    def applies(self, embedder: Embedder | None) -> bool:
        """Whether `embedder`'s cosines are normalised per query."""
        return self.enabled and embedder is not None and embedder.name.startswith(PER_QUERY)

    def scale_for(
        self, embedder: Embedder, query_vector: np.ndarray, language: str | None, base: ModelScale
    ) -> ModelScale | None:
        """The query's own scale for passages in `language` (see the module's text), or
        None: not a normalised model, an unknown language, or the background not measured
        yet (a measurement is then started)."""
        if not self.applies(embedder) or language is None:
            return None
        background = self._background(embedder)
        if background is None or language not in background.vectors:
            return None
        cosines = background.vectors[language] @ _unit(query_vector)
        m, s = float(cosines.mean()), float(cosines.std())
        U, S = background.typical[language]
        if s <= 1e-6 or S <= 1e-6:
            return None
        # cos_eff = U + (cos − m)·S/s, folded into the base scale's two anchors.
        stretch = s / S
        unrelated = m - (U - base.unrelated) * stretch
        return ModelScale(
            unrelated=unrelated, related=unrelated + (base.related - base.unrelated) * stretch
        )

    def _background(self, embedder: Embedder) -> _Background | None:
        with self._lock:
            if embedder.name in self._known:
                return self._known[embedder.name]
            self._known[embedder.name] = None  # measuring: not asked for again
        threading.Thread(
            target=self.measure, args=(embedder,), name="query-scale", daemon=True
        ).start()
        return None

    def measure(self, embedder: Embedder) -> _Background | None:
        """Measure now; on failure it is tried again at the next search."""
        name = embedder.name
        try:
            background = measure_background(embedder)
        except Exception:
            log.exception("could not embed the background passages with %s", name)
            with self._lock:
                self._known.pop(name, None)
            return None
        with self._lock:
            self._known[name] = background
        return background
