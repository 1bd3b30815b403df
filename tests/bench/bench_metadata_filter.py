"""Metadata filters on one machine, against the category filter they generalise.

    .venv/bin/python -m tests.bench.bench_metadata_filter --size 100000 --queries 200

bench_index's data (SciFact chunk texts, clustered vectors, documents of 10-50 chunks whose
category selects 1%, 10% or 50% of the chunks), written one document per call into a
LocalSearchIndex, and the same documents into a SQLite metadata store with metadata: `share`
(the category's value again), `year` (2000-2024, one document in 25 each) and `tags`.

Per query, taking turns (so a busy neighbour slows all alike):
- "category": hybrid search filtered by the engine's own category codes (the path before
  metadata existed);
- "metadata": the same selection as a metadata filter — the store resolves it to document
  ids (its term index), the engine searches those ids (what SearchService does locally);
- "resolve": the store's resolution alone;
- "range" / "or": a year range and an OR of two clauses, resolved and searched;
- "numpy": the peer — exact filtered top 10 by numpy over the masked rows (a user's own
  brute force), also the recall reference.
Recall@10 is the vector leg's top 10 against numpy's exact filtered top 10.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from tests.bench.bench_index import WS, entries, interleaved, load_data, pct


def _metadata_store(directory: Path, data: dict):
    from bunko.adapters.local.sqlite.db import SqliteDatabase
    from bunko.adapters.local.sqlite.store import SqliteMetadataStore
    from bunko.domain import Document

    store = SqliteMetadataStore(SqliteDatabase(directory / "bunko.db"))
    tags = ["alpha", "beta", "gamma", "delta"]
    years = []
    for doc, (start, _) in enumerate(data["bounds"]):
        year = 2000 + doc % 25
        years.append(year)
        metadata = {
            "share": str(data["categories"][start]),
            "year": float(year),
            "tags": [tags[doc % 4], tags[(doc // 4) % 4]],
        }
        store.add_document(
            Document(
                id=f"d{doc}", workspace_id=WS, path=f"d{doc}.txt", name=f"d{doc}.txt",
                mime="text/plain", metadata=metadata,
            )
        )  # fmt: skip
    return store, np.asarray(years)


def _chunk_mask(data: dict, doc_mask: np.ndarray) -> np.ndarray:
    mask = np.zeros(len(data["texts"]), dtype=bool)
    for doc, (start, end) in enumerate(data["bounds"]):
        mask[start:end] = doc_mask[doc]
    return mask


def _recall(hits: list, truth: np.ndarray) -> float:
    found = [{int(h.chunk_id[1:]) for h in got[:10]} for got in hits]
    return float(
        np.mean([len(f & set(t.tolist())) / 10 for f, t in zip(found, truth, strict=True)])
    )


def run(args: argparse.Namespace) -> dict:
    from bunko.adapters.local.engine import LocalSearchIndex
    from bunko.domain.metadata import parse_filter
    from bunko.ports import SearchFilter

    data = load_data(args.size, args)
    folder = Path(tempfile.mkdtemp(prefix="bench-metadata-", dir=args.tmp_dir))
    index = LocalSearchIndex(folder / "index", dimension=data["vectors"].shape[1])
    for doc in range(len(data["bounds"])):
        index.index(entries(data, doc))
    index.flush()
    started = time.perf_counter()
    store, years = _metadata_store(folder, data)
    store_s = time.perf_counter() - started

    share = parse_filter({"equals": {"key": "share", "value": "p10"}})
    year_range = parse_filter({"range": {"key": "year", "gte": 2000, "lt": 2003}})  # 12%
    either = parse_filter(
        {
            "orAll": [
                {"equals": {"key": "share", "value": "p1"}},
                {"equals": {"key": "tags", "value": "alpha"}},
            ]
        }
    )
    doc_shares = np.asarray([data["categories"][s] for s, _ in data["bounds"]])
    doc_tags = np.asarray([d % 4 == 0 or (d // 4) % 4 == 0 for d in range(len(data["bounds"]))])
    masks = {
        "share": _chunk_mask(data, doc_shares == "p10"),
        "range": _chunk_mask(data, years < 2003),
        "or": _chunk_mask(data, (doc_shares == "p1") | doc_tags),
    }
    vectors32 = data["vectors"].astype(np.float32)
    truth = {
        name: exact_top_masked(vectors32, data["query_vectors"], m) for name, m in masks.items()
    }
    category = SearchFilter(workspace_id=WS, category="p10")
    limit = args.limit

    def by_metadata(flt):
        def call(text, vector):
            ids = store.documents_matching(WS, flt)
            return index.hybrid_search(text, vector, SearchFilter(WS, document_ids=ids), limit)

        return call

    def vector10(flt):
        def call(text, vector):
            ids = store.documents_matching(WS, flt)
            return index.vector_search(vector, SearchFilter(WS, document_ids=ids), 10)

        return call

    calls = {
        "category": lambda t, v: index.hybrid_search(t, v, category, limit),
        "metadata": by_metadata(share),
        "resolve": lambda t, v: store.documents_matching(WS, share),
        "range": by_metadata(year_range),
        "or": by_metadata(either),
        "numpy": lambda t, v: exact_top_masked(vectors32, v[None, :], masks["share"]),
        "category_vector10": lambda t, v: index.vector_search(v, category, 10),
        "share_vector10": vector10(share),
        "range_vector10": vector10(year_range),
        "or_vector10": vector10(either),
    }
    pairs = list(zip(data["query_texts"], data["query_vectors"], strict=True))
    for text, vector in pairs[:10]:
        calls["category"](text, vector)
    wall, _, out = interleaved(calls, pairs)
    row = {
        "chunks": args.size,
        "documents": len(data["bounds"]),
        "store_build_s": round(store_s, 2),
        **{
            f"{name}_p50_ms": round(pct(wall[name], 50), 3)
            for name in calls
            if "vector10" not in name
        },
        **{
            f"{name}_p95_ms": round(pct(wall[name], 95), 3)
            for name in ("category", "metadata", "resolve")
        },
        "recall10_category": _recall(out["category_vector10"], truth["share"]),
        "recall10_metadata": _recall(out["share_vector10"], truth["share"]),
        "recall10_range": _recall(out["range_vector10"], truth["range"]),
        "recall10_or": _recall(out["or_vector10"], truth["or"]),
        "selectivity_range": round(float(masks["range"].mean()), 3),
        "selectivity_or": round(float(masks["or"].mean()), 3),
    }
    row["metadata_over_category"] = round(row["metadata_p50_ms"] / row["category_p50_ms"], 2)
    index.close()
    store.db.close()
    return row


def exact_top_masked(vectors: np.ndarray, queries: np.ndarray, mask: np.ndarray) -> np.ndarray:
    rows = np.flatnonzero(mask)
    sims = queries @ vectors[rows].T
    top = np.argpartition(-sims, 9, axis=1)[:, :10]
    order = np.argsort(-np.take_along_axis(sims, top, 1), 1)
    return rows[np.take_along_axis(top, order, 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--dataset", default="clustered", choices=["clustered", "neardup"])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--eval-dir", default=None)
    parser.add_argument("--cache-dir", default="~/.cache/bunko-bench")
    parser.add_argument("--tmp-dir", default=None)
    args = parser.parse_args()
    print(json.dumps(run(args), indent=2))


if __name__ == "__main__":
    main()
