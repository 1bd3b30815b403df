"""The data sets of bench_index: SciFact texts with clustered or near-duplicate vectors.

Texts are SciFact abstracts cut into chunks of 2-5 sentences; to reach N chunks the corpus
is cut again with other window sizes and offsets, as overlapping chunkings would. Chunks
are grouped into documents of 10-50 consecutive chunks (a file's chunks, written in one
call); each document has one category: "p1" (1% of documents), "p10" (10%), "p50" (50%)
or "rest", so a category filter selects 1%, 10% or 50% of the chunks.

Vectors are given, not embedded, so the engine is measured and not a model:
- clustered: a two-level mixture of Gaussians on the unit sphere (topic → source abstract
  → chunk), so a chunk's nearest neighbours are its siblings; queries near one abstract.
- neardup: the Universal Sentence Encoder vector of each chunk's whole abstract plus small
  noise (|noise| = 0.1, cosine to the original ≈ 0.995), so every abstract has ~N/5k near
  copies, as collections of versions and copies have; queries are the USE vectors of the
  SciFact claims. The USE vectors are computed once (~2 min) and cached in --cache-dir.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

DIM = 512
NEAR_NOISE = 0.1
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def chunk_texts(corpus: Path, n: int) -> tuple[list[str], np.ndarray]:
    """N chunk texts and, for each, the index of the abstract it was cut from."""
    docs = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    sentences = [_SENTENCE_END.split(f"{d['title']}. {d['text']}".strip()) for d in docs]
    texts: list[str] = []
    sources: list[int] = []
    replica = 0
    while len(texts) < n:
        window = 2 + replica % 4
        offset = replica % window
        for source, sents in enumerate(sentences):
            for start in range(-offset, len(sents), window):
                text = " ".join(sents[max(start, 0) : start + window]).strip()
                if text:
                    texts.append(text)
                    sources.append(source)
        replica += 1
    return texts[:n], np.asarray(sources[:n], dtype=np.int64)


def documents(n: int, seed: int) -> tuple[list[tuple[int, int]], list[str]]:
    """[(first chunk, end)] of documents of 10-50 chunks, and each document's category."""
    rng = np.random.default_rng(seed + 2)
    bounds, start = [], 0
    while start < n:
        end = min(n, start + int(rng.integers(10, 51)))
        bounds.append((start, end))
        start = end
    draw = rng.random(len(bounds))
    names = np.where(
        draw < 0.01, "p1", np.where(draw < 0.11, "p10", np.where(draw < 0.61, "p50", "rest"))
    )
    return bounds, names.tolist()


def clustered_vectors(sources: np.ndarray, *, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(chunk vectors, abstract vectors): cos(chunk, its abstract) ≈ 0.86, cos(abstract,
    its topic) ≈ 0.71, ≈ 0 across topics; about 1,000 chunks per topic."""
    rng = np.random.default_rng(seed)
    topics = max(10, len(sources) // 1000)
    n_sources = int(sources.max()) + 1
    noise = 1.0 / np.sqrt(DIM)
    centres = unit(rng.standard_normal((topics, DIM), dtype=np.float32))
    abstracts = unit(
        centres[rng.integers(0, topics, n_sources)]
        + noise * rng.standard_normal((n_sources, DIM), dtype=np.float32)
    )
    return _around(abstracts, sources, 0.6 * noise, rng), abstracts


def clustered_queries(scifact: Path, abstracts: np.ndarray, count: int, seed: int):
    texts = _claims(scifact)[:count]
    rng = np.random.default_rng(seed + 1)
    near = abstracts[rng.integers(0, len(abstracts), len(texts))]
    noise = 0.8 / np.sqrt(DIM)
    return texts, unit(near + noise * rng.standard_normal(near.shape, dtype=np.float32))


def neardup_vectors(
    scifact: Path, cache: Path, sources: np.ndarray, *, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(chunk vectors, the claims' vectors)."""
    corpus, claims = _use_vectors(scifact, cache)
    rng = np.random.default_rng(seed)
    return _around(corpus, sources, NEAR_NOISE / np.sqrt(DIM), rng), claims


def neardup_queries(scifact: Path, claims: np.ndarray, count: int):
    return _claims(scifact)[:count], claims[:count]


def _around(centres: np.ndarray, which: np.ndarray, scale: float, rng) -> np.ndarray:
    vectors = np.empty((len(which), DIM), dtype=np.float32)
    for start in range(0, len(which), 8192):  # in batches: no second N x DIM temporary
        part = which[start : start + 8192]
        jitter = scale * rng.standard_normal((len(part), DIM), dtype=np.float32)
        vectors[start : start + len(part)] = unit(centres[part] + jitter)
    return vectors


def _claims(scifact: Path) -> list[str]:
    lines = (scifact / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines]


def _use_vectors(scifact: Path, cache: Path) -> tuple[np.ndarray, np.ndarray]:
    corpus_file, claims_file = cache / "use_corpus.npy", cache / "use_queries.npy"
    if not (corpus_file.exists() and claims_file.exists()):
        from bunko.adapters.local.use_embedder import UniversalSentenceEncoderEmbedder

        cache.mkdir(parents=True, exist_ok=True)
        embedder = UniversalSentenceEncoderEmbedder(batch_size=32)
        docs = (scifact / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
        texts = [f"{d['title']}. {d['text']}" for d in map(json.loads, docs)]
        np.save(claims_file, embedder.embed_documents(_claims(scifact)).astype(np.float32))
        np.save(corpus_file, embedder.embed_documents(texts).astype(np.float32))
    return np.load(corpus_file), np.load(claims_file)


def exact_top(vectors: np.ndarray, query_vectors: np.ndarray, k: int, mask=None) -> np.ndarray:
    """Exact top-k rows per query (in blocks of queries: no queries x N temporaries);
    with `mask`, among the masked rows only."""
    out = []
    for start in range(0, len(query_vectors), 16):
        sims = query_vectors[start : start + 16] @ vectors.T
        if mask is not None:
            sims[:, ~mask] = -np.inf
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(sims, top, 1), 1)
        out.append(np.take_along_axis(top, order, 1))
    return np.concatenate(out)
