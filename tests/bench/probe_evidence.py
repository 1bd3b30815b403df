"""How well the text's evidence alone tells same-topic questions apart, without embedding.

    python -m tests.bench.probe_evidence ../shared/eval/jsquad-valid --libraries 64

The same-topic libraries `bunko eval` draws (evaluation/libraries.draw_same_topic: half of one
article's paragraphs, asked its own questions and the other half's whose gold answers it does
not hold) are small, so the gate's window is the whole library: each question's evidence,
reach and absent (services/search/evidence.py) are read here over every paragraph, with no
engine and no vectors (seconds, not the minutes a recorded fit takes). An answerable question
is scored by its gold paragraph, an unanswerable one by its best paragraph; the score is
evidence − b·absent. The threshold keeps `--keep` of the answerable ones (b the best of
0..3): the share of unanswerable questions below it is what the evidence can refuse at that
cost. With more libraries than `bunko eval` draws (16), it also prints the spread of that
share over draws of 16 of them: how much of a set's figure is the draw.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bunko.evaluation import libraries, load_beir
from bunko.evaluation.answers import load_answers
from bunko.services.search.background_terms import in_its_language
from bunko.services.search.evidence import evidence

DRAWN = libraries.SAME_TOPIC_LIBRARIES


def read(directory: Path, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per library: (evidence, absent) of its answerable and of its unanswerable questions."""
    data = load_beir(directory)
    out = []
    for lib in libraries.draw_same_topic(data, load_answers(directory), libraries=count):
        texts = {d: data.corpus[d] for d in lib.documents}
        context = {d: f"{d}\n{data.titles.get(d, '')}" for d in lib.documents}
        kept, refused = [], []
        for question, relevant in lib.answerable:
            found = evidence(in_its_language(question), texts, context)
            gold = [found[d] for d in relevant if d in found]
            if gold:
                best = max(gold, key=lambda e: e.evidence)
                kept.append((best.evidence, best.absent))
        for question in lib.unanswerable:
            found = evidence(in_its_language(question), texts, context)
            if found:
                best = max(found.values(), key=lambda e: e.evidence)
                refused.append((best.evidence, best.absent))
        out.append((np.array(kept).reshape(-1, 2), np.array(refused).reshape(-1, 2)))
    return out


def refused_at(per: list[tuple[np.ndarray, np.ndarray]], keep: float) -> tuple[float, float]:
    """The share of unanswerable questions refused while `keep` of the answerable are kept,
    at the best b; that b."""
    kept = np.concatenate([k for k, _ in per])
    asked = np.concatenate([u for _, u in per])
    best = (0.0, 0.0)
    for b in np.arange(0.0, 3.01, 0.25):
        cut = np.quantile(kept[:, 0] - b * kept[:, 1], 1.0 - keep)
        share = float(np.mean(asked[:, 0] - b * asked[:, 1] < cut))
        best = max(best, (share, float(b)))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--libraries", type=int, default=DRAWN)
    parser.add_argument("--keep", type=float, default=0.95)
    args = parser.parse_args()
    per = read(args.directory, args.libraries)
    share, b = refused_at(per, args.keep)
    questions = sum(len(u) for _, u in per)
    print(
        f"{len(per)} libraries, {questions} unanswerable: refused {share:.3f} "
        f"at {args.keep:.2f} kept (b {b:g})"
    )
    if len(per) > DRAWN:
        rng = np.random.default_rng(0)
        draws = [
            refused_at([per[i] for i in rng.choice(len(per), DRAWN, replace=False)], args.keep)[0]
            for _ in range(200)
        ]
        low, mid, high = np.quantile(draws, [0.05, 0.5, 0.95])
        print(f"draws of {DRAWN} libraries: p5 {low:.3f}, median {mid:.3f}, p95 {high:.3f}")


if __name__ == "__main__":
    main()
