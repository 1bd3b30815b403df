"""The engines LocalSearchIndex did not choose, on bench_index's data (for the record).

Run through `bench_index.py --compare-engines`. Vector engines: numpy brute force, usearch
HNSW float16 without re-scoring, hnswlib and sqlite-vec (each skipped when not installed).
Keyword engine: SQLite FTS5 `porter unicode61` with bm25(), an OR of the query's terms.
"""

from __future__ import annotations

import argparse
import sqlite3
import time

import numpy as np

from tests.bench.bench_index import (
    DIM,
    chunk_texts,
    clustered_vectors,
    cpu_seconds,
    eval_dir,
    exact_top,
    pct,
    queries,
    timed,
)

K = 10


def _recall(found: list[np.ndarray], truth: np.ndarray) -> float:
    return float(
        np.mean(
            [len(set(f.tolist()) & set(t.tolist())) / K for f, t in zip(found, truth, strict=True)]
        )
    )


def _build(fn) -> tuple[object, float, float]:
    wall, cpu = time.perf_counter(), cpu_seconds()
    built = fn()
    return built, time.perf_counter() - wall, cpu_seconds() - cpu


def numpy_brute_force(vectors, qs, truth) -> dict:
    times, found = timed(lambda q: np.argpartition(-(vectors @ q), K)[:K], qs)
    return {"p50_ms": round(pct(times, 50), 2), "recall10": round(_recall(found, truth), 3)}


def usearch_f16(vectors, qs, truth) -> dict:
    from usearch.index import Index

    def build():
        index = Index(
            ndim=DIM,
            metric="cos",
            dtype="f16",
            connectivity=16,
            expansion_add=64,
            expansion_search=128,
        )
        index.add(np.arange(len(vectors), dtype=np.uint64), vectors, threads=0)
        return index

    index, wall, cpu = _build(build)
    times, found = timed(lambda q: np.asarray(index.search(q, K, threads=1).keys), qs)
    return {
        "index_s": round(wall, 1),
        "index_cpu_s": round(cpu, 1),
        "p50_ms": round(pct(times, 50), 2),
        "recall10": round(_recall(found, truth), 3),
    }


def hnswlib_engine(vectors, qs, truth) -> dict:
    import hnswlib

    def build():
        index = hnswlib.Index(space="cosine", dim=DIM)
        index.init_index(max_elements=len(vectors), M=16, ef_construction=64)
        index.add_items(vectors, np.arange(len(vectors)), num_threads=2)
        index.set_ef(128)
        return index

    index, wall, cpu = _build(build)
    times, found = timed(lambda q: index.knn_query(q, k=K, num_threads=1)[0][0], qs)
    return {
        "index_s": round(wall, 1),
        "index_cpu_s": round(cpu, 1),
        "p50_ms": round(pct(times, 50), 2),
        "recall10": round(_recall(found, truth), 3),
    }


def sqlite_vec_engine(vectors, qs, truth) -> dict:
    import sqlite_vec

    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    sqlite_vec.load(db)

    def build():
        db.execute(
            f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{DIM}] distance_metric=cosine)"
        )
        db.executemany(
            "INSERT INTO v (rowid, embedding) VALUES (?, ?)",
            ((i, v.tobytes()) for i, v in enumerate(vectors)),
        )
        return db

    _, wall, _ = _build(build)
    sql = "SELECT rowid FROM v WHERE embedding MATCH ? AND k = ?"
    times, found = timed(
        lambda q: np.asarray([r[0] for r in db.execute(sql, (q.tobytes(), K))]), qs[:50]
    )
    return {
        "index_s": round(wall, 1),
        "p50_ms": round(pct(times, 50), 2),
        "recall10": round(_recall(found, truth[:50]), 3),
    }


def fts5_bm25(texts, query_texts, limit: int) -> dict:
    from bunko.domain.keyword_analysis import query_terms

    db = sqlite3.connect(":memory:")

    def build():
        db.execute("CREATE VIRTUAL TABLE f USING fts5(body, tokenize='porter unicode61')")
        db.executemany("INSERT INTO f (rowid, body) VALUES (?, ?)", enumerate(texts))
        return db

    _, wall, _ = _build(build)
    sql = "SELECT rowid, -bm25(f) FROM f WHERE f MATCH ? ORDER BY rank LIMIT ?"

    def search(text: str):
        expression = " OR ".join(f'"{t.text}"' for t in query_terms(text))
        return db.execute(sql, (expression, limit)).fetchall() if expression else []

    times, _ = timed(search, query_texts[:100])
    return {
        "index_s": round(wall, 1),
        "keyword_p50_ms": round(pct(times, 50), 2),
        "keyword_p95_ms": round(pct(times, 95), 2),
    }


def compare(n: int, args: argparse.Namespace) -> dict:
    scifact = eval_dir(args.eval_dir) / "scifact"
    texts, sources = chunk_texts(scifact / "corpus.jsonl", n)
    vectors, abstracts = clustered_vectors(sources, seed=args.seed)
    query_texts, qs = queries(scifact, abstracts, args.queries, args.seed)
    truth = exact_top(vectors, qs, K)
    results = {
        "numpy brute force": numpy_brute_force(vectors, qs, truth),
        "usearch f16 (no re-scoring)": usearch_f16(vectors, qs, truth),
    }
    for name, engine in (("hnswlib", hnswlib_engine), ("sqlite-vec", sqlite_vec_engine)):
        try:
            results[name] = engine(vectors, qs, truth)
        except ImportError:
            results[name] = {"skipped": "not installed"}
        except AttributeError:  # a Python whose sqlite3 was built without extension loading
            results[name] = {"skipped": "this Python's sqlite3 cannot load extensions"}
    results[f"FTS5 bm25 top-{args.limit}"] = fts5_bm25(texts, query_texts, args.limit)
    return results
