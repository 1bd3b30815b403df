"""What a question's language costs e5, against what the per-query scale makes up for it
(services/search/query_scale.py), with the real model and no search service:

    .venv/bin/python -m tests.bench.bench_language_gap [--queries 60]

xquad-dev's questions (the same seeded sample as bench_cross_lingual.py) in each language,
over their English paragraphs: `gold` is the mean cosine with the answering paragraph, `loss`
what it loses to the English question's, `gap` the mean lift the per-query scale reads from
the packaged background (the question's own language less English; never below 0), and
`best` how often each background language scores highest for the question. `background`:
the packaged passages in each language embedded as questions, their mean gap to the English
passages (each passage's own translation left out): what the background itself says the
language costs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from collections import Counter
from pathlib import Path

import numpy as np

from bunko.adapters.local.e5_embedder import E5Embedder
from bunko.evaluation.beir import load_beir
from bunko.services.search.model_scale import parallel_passages
from bunko.services.search.query_scale import QueryScales

REPO = Path(__file__).resolve().parents[2]
LANGS = ("en", "de", "es", "tr", "el", "vi", "hi", "ro")


def _unit(rows) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float64)
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


def run(eval_dir: Path, n_queries: int) -> dict:
    sets = {lang: load_beir(eval_dir / "xquad-dev" / lang) for lang in LANGS}
    english = sets["en"]
    ids = sorted(english.queries)
    ids = random.Random(0).sample(ids, min(n_queries, len(ids)))
    gold = {q: next(d for d, r in english.qrels[q].items() if r > 0) for q in ids}
    e5 = E5Embedder(threads=2)
    docs = sorted(set(gold.values()))
    vectors = _unit(e5.embed_documents([english.corpus[d] for d in docs]))
    paragraph = dict(zip(docs, vectors, strict=True))
    background = QueryScales().measure(e5)
    assert background is not None
    report: dict = {"questions": {}}
    cosine: dict[str, np.ndarray] = {}
    for lang in LANGS:
        rows, gaps, best = [], [], Counter()
        for q in ids:
            vector = _unit(e5.embed_query(sets[lang].queries[q.replace("xq-en-", f"xq-{lang}-")]))
            means = {k: float((v @ vector).mean()) for k, v in background.vectors.items()}
            rows.append(float(vector @ paragraph[gold[q]]))
            gaps.append(max(means[lang] - means["en"], 0.0))
            best[max(means, key=lambda k: means[k])] += 1
        cosine[lang] = np.array(rows)
        report["questions"][lang] = {
            "gold": round(float(cosine[lang].mean()), 3),
            "loss": round(float((cosine["en"] - cosine[lang]).mean()), 3),
            "gap": round(float(np.mean(gaps)), 3),
            "best": dict(best.most_common(3)),
        }
        print(lang, json.dumps(report["questions"][lang]), flush=True)
    rows = parallel_passages()
    others = ~np.eye(len(rows), dtype=bool)
    report["background"] = {}
    for lang in background.vectors:
        asked = _unit(np.stack([e5.embed_query(row[lang]) for row in rows]))
        own = (asked @ background.vectors[lang].T)[others].reshape(len(rows), -1).mean(axis=1)
        english_ = (asked @ background.vectors["en"].T)[others].reshape(len(rows), -1).mean(axis=1)
        report["background"][lang] = round(float((own - english_).mean()), 3)
    print("background", json.dumps(report["background"]), flush=True)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=None)
    parser.add_argument("--queries", type=int, default=60, help="questions per language")
    args = parser.parse_args()
    eval_dir = args.eval_dir or Path(
        os.environ.get("BUNKO_EVAL_DIR") or REPO.parent / "shared" / "eval"
    )
    print(json.dumps(run(eval_dir, args.queries), indent=2))


if __name__ == "__main__":
    main()
