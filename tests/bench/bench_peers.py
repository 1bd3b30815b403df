"""The local engine beside the libraries a user would pick instead, on the same data and the
same vectors, in one process, the queries taking turns.

    .venv/bin/python -m tests.bench.bench_peers --size 100000 --dataset neardup
    .venv/bin/python -m tests.bench.bench_peers --size 1000000 --dataset clustered --queries 200

Engines (a peer is skipped when its library is not installed; `pip install -e ".[bench]"`):
- Bunko: `LocalSearchIndex`, written one document (10-50 chunks) per call as files arrive;
  hybrid = both legs at once (`hybrid_search`), fused as the peers' are.
- numpy + bm25s: exact float32 cosine over every row, bm25s's eager sparse BM25 (Lucene's
  formula, k1 1.2, b 0.75) over the same terms as Bunko's (its analyser's output), one bulk
  build; hybrid = both legs' top 100 fused by a convex sum of min-max scores.
- faiss HNSW (32 links, scalar-quantised int8 rows, efSearch 256): the graph library Bunko
  does not use; one bulk build.
- LanceDB: IVF_HNSW_SQ (cosine) and its native full-text index over the same terms, with
  its default search settings; one bulk write, then both indexes built.

Printed: p50 per leg (keyword, vector, hybrid) and recall@10 of the vector leg against the
exact top 10; build time (Bunko's is per document, the peers' one bulk call); the bytes
each engine keeps on disk. Latencies are wall time, one thread issuing queries.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from tests.bench.bench_index import WS, entries, eval_dir, load_data, pct

K = 10
LIMIT = 100
LEGS = ("keyword", "vector", "hybrid")


def directory_mib(path: Path) -> float:
    """Bytes on disk (allocated blocks: a sparse file's unwritten tail is not counted)."""
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file()) / 2**20


def recall(found: list[list[int]], truth: np.ndarray) -> float:
    hits = [len(set(f[:K]) & set(t.tolist())) / K for f, t in zip(found, truth, strict=True)]
    return float(np.mean(hits))


def convex(keyword: list[tuple[int, float]], vector: list[tuple[int, float]]) -> list[int]:
    """The two legs' hits fused by 0.5 × min-max normalised scores (as the engine does)."""
    fused: dict[int, float] = {}
    for hits in (keyword, vector):
        if not hits:
            continue
        scores = np.asarray([s for _, s in hits])
        low, span = scores.min(), max(float(np.ptp(scores)), 1e-9)
        for (slot, _), s in zip(hits, scores, strict=True):
            fused[slot] = fused.get(slot, 0.0) + 0.5 * (s - low) / span
    return sorted(fused, key=fused.get, reverse=True)[:LIMIT]


class Bunko:
    name = "Bunko"
    legs = LEGS

    def __init__(self, data: dict, root: Path) -> None:
        from bunko.adapters.local.engine import LocalSearchIndex
        from bunko.ports import SearchFilter

        self.directory = root / "bunko"
        start = time.perf_counter()
        self.index = LocalSearchIndex(self.directory, dimension=data["vectors"].shape[1])
        for doc in range(len(data["bounds"])):
            self.index.index(entries(data, doc))
        self.index.flush()
        self.build_s = time.perf_counter() - start
        self.every = SearchFilter(workspace_id=WS)

    def keyword(self, text: str, vector: np.ndarray) -> list[int]:
        return [int(h.chunk_id[1:]) for h in self.index.keyword_search(text, self.every, LIMIT)]

    def vector(self, text: str, vector: np.ndarray) -> list[int]:
        return [int(h.chunk_id[1:]) for h in self.index.vector_search(vector, self.every, K)]

    def hybrid(self, text: str, vector: np.ndarray) -> list[int]:
        legs = self.index.hybrid_search(text, vector, self.every, LIMIT)
        keyword, vector_hits = ([(int(h.chunk_id[1:]), h.score) for h in leg] for leg in legs)
        return convex(keyword, vector_hits)

    def disk_mib(self) -> float:
        return directory_mib(self.directory)


class FusedPeer:
    """A peer with both legs: `_keyword` and `_vector` give (slot, score) pairs, best first;
    its hybrid is their convex fusion, as for every engine."""

    legs = LEGS
    directory: Path

    def _keyword(self, text: str) -> list[tuple[int, float]]:
        raise NotImplementedError

    def _vector(self, vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
        raise NotImplementedError

    def keyword(self, text: str, vector: np.ndarray) -> list[int]:
        return [slot for slot, _ in self._keyword(text)]

    def vector(self, text: str, vector: np.ndarray) -> list[int]:
        return [slot for slot, _ in self._vector(vector, K)]

    def hybrid(self, text: str, vector: np.ndarray) -> list[int]:
        return convex(self._keyword(text), self._vector(vector, LIMIT))

    def disk_mib(self) -> float:
        return directory_mib(self.directory)


class NumpyBm25s(FusedPeer):
    name = "numpy + bm25s"

    def __init__(self, data: dict, root: Path) -> None:
        import bm25s

        from bunko.domain.keyword_analysis import index_terms

        self.directory = root / "numpy-bm25s"
        self.directory.mkdir()
        start = time.perf_counter()
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in index_terms(x)] for x in data["texts"]]
        self.bm25 = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        self.bm25.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
        # float32: numpy has no fast float16 product (it was 200 ms a query at 100k)
        self.vectors = np.ascontiguousarray(data["vectors"], dtype=np.float32)
        self.build_s = time.perf_counter() - start
        self.bm25.save(str(self.directory / "bm25s"))
        np.save(self.directory / "vectors.npy", self.vectors)

    def _keyword(self, text: str) -> list[tuple[int, float]]:
        from bunko.domain.keyword_analysis import query_terms

        ids = self.bm25.get_tokens_ids([t.text for t in query_terms(text)])
        if not ids:
            return []
        scores = self.bm25.get_scores(ids)
        top = np.argpartition(-scores, LIMIT)[:LIMIT]
        top = top[np.argsort(-scores[top])]
        return [(int(s), float(scores[s])) for s in top if scores[s] > 0]

    def _vector(self, vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
        sims = self.vectors @ vector.astype(np.float32)
        top = np.argpartition(-sims, limit)[:limit]
        top = top[np.argsort(-sims[top])]
        return [(int(s), float(sims[s])) for s in top]


class FaissHnsw:
    name = "faiss HNSW-SQ8"
    legs = ("vector",)  # a graph library: no keyword leg, so no hybrid

    def __init__(self, data: dict, root: Path) -> None:
        import faiss

        self.faiss = faiss
        faiss.omp_set_num_threads(2)
        vectors = np.asarray(data["vectors"], dtype=np.float32)
        start = time.perf_counter()
        self.graph = faiss.IndexHNSWSQ(
            vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, 32, faiss.METRIC_INNER_PRODUCT
        )
        self.graph.train(vectors)
        self.graph.add(vectors)
        self.graph.hnsw.efSearch = 256
        self.build_s = time.perf_counter() - start
        self.path = root / "faiss.index"
        faiss.write_index(self.graph, str(self.path))
        faiss.omp_set_num_threads(1)

    def vector(self, text: str, vector: np.ndarray) -> list[int]:
        _, found = self.graph.search(vector.reshape(1, -1).astype(np.float32), K)
        return found[0].tolist()

    def disk_mib(self) -> float:
        return self.path.stat().st_blocks * 512 / 2**20


class LanceIvfHnsw(FusedPeer):
    """LanceDB: an IVF index of HNSW graphs over int8 rows (IVF_HNSW_SQ, cosine) and its
    native full-text index over Bunko's analysed terms (split on spaces, nothing else done
    to them); one bulk write and two index builds."""

    name = "LanceDB IVF-HNSW-SQ"

    def __init__(self, data: dict, root: Path) -> None:
        import lancedb
        import pyarrow as pa
        from lancedb.index import FTS, IvfHnswSq

        from bunko.domain.keyword_analysis import index_terms

        self.directory = root / "lancedb"
        start = time.perf_counter()
        vectors = np.asarray(data["vectors"], dtype=np.float32)
        table = pa.table(
            {
                "id": pa.array(np.arange(len(vectors), dtype=np.int64)),
                "terms": pa.array([" ".join(index_terms(x)) for x in data["texts"]]),
                "vector": pa.FixedSizeListArray.from_arrays(
                    pa.array(vectors.reshape(-1)), vectors.shape[1]
                ),
            }
        )
        self.table = lancedb.connect(str(self.directory)).create_table("chunks", data=table)
        self.table.create_index("vector", config=IvfHnswSq(distance_type="cosine"))
        self.table.create_index(
            "terms",
            config=FTS(
                base_tokenizer="whitespace",
                lower_case=False,
                stem=False,
                remove_stop_words=False,
                ascii_folding=False,
                with_position=False,
            ),
        )
        self.build_s = time.perf_counter() - start

    def _keyword(self, text: str) -> list[tuple[int, float]]:
        from bunko.domain.keyword_analysis import query_terms

        words = " ".join(t.text for t in query_terms(text))
        if not words:
            return []
        found = self.table.search(words, query_type="fts").select(["id", "_score"]).limit(LIMIT)
        rows = found.to_arrow()
        return list(zip(rows["id"].to_pylist(), rows["_score"].to_pylist(), strict=True))

    def _vector(self, vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
        query = self.table.search(vector.astype(np.float32), query_type="vector")
        rows = query.distance_type("cosine").select(["id", "_distance"]).limit(limit).to_arrow()
        similarity = [1.0 - d for d in rows["_distance"].to_pylist()]
        return list(zip(rows["id"].to_pylist(), similarity, strict=True))


PEERS = {"bunko": Bunko, "numpy-bm25s": NumpyBm25s, "faiss": FaissHnsw, "lancedb": LanceIvfHnsw}


def run(args: argparse.Namespace) -> list[dict]:
    args.dataset = args.dataset or "neardup"
    data = load_data(args.size, args)
    root = Path(tempfile.mkdtemp(prefix="bench-peers-", dir=args.tmp_dir))
    engines = []
    try:
        for key in args.engines.split(","):
            try:
                engines.append(PEERS[key](data, root))
            except ImportError as missing:
                print(f"skipped {key}: {missing}")
            print(f"built {key}", flush=True)
        pairs = list(zip(data["query_texts"], data["query_vectors"], strict=True))
        times = {(e.name, leg): [] for e in engines for leg in e.legs}
        found: dict[str, list] = {e.name: [] for e in engines}
        # Each engine answers every query in turn (its three legs, as a search request
        # makes them), then the next engine: numpy's full scans would otherwise evict the
        # caches of whichever engine follows. Rounds alternate the order, against drift.
        for round_ in range(args.rounds):
            for engine in engines if round_ % 2 == 0 else engines[::-1]:
                for text, vector in pairs[:20]:  # warm-up: pages and caches
                    for leg in engine.legs:
                        getattr(engine, leg)(text, vector)
                for text, vector in pairs:
                    for leg in engine.legs:
                        start = time.perf_counter()
                        out = getattr(engine, leg)(text, vector)
                        times[engine.name, leg].append((time.perf_counter() - start) * 1000)
                        if leg == "vector" and round_ == 0:
                            found[engine.name].append(out)
        return [
            {
                "engine": e.name,
                "chunks": args.size,
                "dataset": args.dataset,
                "build_s": round(e.build_s, 1),
                **{f"{leg}_p50": p50(times.get((e.name, leg))) for leg in LEGS},
                "recall10": round(recall(found[e.name], data["truth10"]), 3),
                "disk_mib": round(e.disk_mib(), 1),
            }
            for e in engines
        ]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def p50(values: list[float] | None) -> float | str:
    """The median in ms, or "—" for a leg the engine does not have."""
    return "—" if values is None else round(pct(values, 50), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--dataset", default="neardup", choices=["neardup", "clustered"])
    parser.add_argument("--engines", default="bunko,numpy-bm25s,faiss,lancedb")
    parser.add_argument("--eval-dir")
    parser.add_argument("--cache-dir", default="~/.cache/bunko-bench", help="USE vectors")
    parser.add_argument("--tmp-dir")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    args.eval_dir = str(eval_dir(args.eval_dir))
    rows = run(args)
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
