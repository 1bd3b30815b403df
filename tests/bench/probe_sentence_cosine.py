"""The best sentence's USE cosine beside the evidence, on the same-topic probe: does a question's
vector close to one sentence (not to the passage's topic) tell answerable from unanswerable?

    python -m tests.bench.probe_sentence_cosine ../shared/eval/xquad-dev/en

The libraries and the measure are tests/bench/probe_evidence.py's (every article's same-topic
library; the share of unanswerable questions refused while 0.95 of the answerable are kept).
A passage's score is evidence − b·absent + g·s, s the best cosine between the question's USE
vector and its sentences' (each sentence embedded alone), less the library's mean of that
best cosine over its passages (so the topic's own closeness cancels). An answerable question
is scored by its gold passage, an unanswerable one by its best passage; b and g are searched
on the libraries whose id's CRC-32 is even and the cut applied to the odd ones (fit_calibration's
split), whose kept and refused are printed beside the whole set's best. `--soft-low L` reads
the evidence with soft term matching instead (tests/bench/probe_soft_terms.py, USE per term,
low L, alpha 1): both readings together.
"""

from __future__ import annotations

import argparse
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bunko.adapters.local.use_embedder import UniversalSentenceEncoderEmbedder
from bunko.evaluation import libraries, load_beir
from bunko.evaluation.answers import load_answers
from bunko.services.search.background_terms import in_its_language
from bunko.services.search.evidence import _SENTENCE_END, evidence
from tests.bench.probe_soft_terms import Space, soft_evidence

# Per library: per answerable question (evidence, absent, s) of its gold passage; per
# unanswerable question [passages, 3] of every passage.
Library = tuple[list[np.ndarray], list[np.ndarray], bool]


def sentences(text: str) -> list[str]:
    out = [p for line in text.splitlines() for p in _SENTENCE_END.split(line) if p.strip()]
    return out or [text]


@dataclass
class Window:
    """One library's passages, their sentences' vectors (`owner`: each one's passage)."""

    docs: list[str]
    texts: dict[str, str]
    context: dict[str, str]
    vectors: np.ndarray
    owner: np.ndarray
    spent: float = 0.0
    asked: int = 0
    soft: tuple[Space, float] | None = None  # soft term matching: the space and its `low`
    words: bool = False  # ... over words' vectors (probe_soft_terms --words)

    def rows(self, model: UniversalSentenceEncoderEmbedder, question: str) -> np.ndarray:
        """[passages, 3]: each passage's evidence, absent and best sentence cosine (less the
        library's mean)."""
        start = time.perf_counter()
        q = np.asarray(model.embed_query(question), dtype=np.float32)
        self.spent += time.perf_counter() - start
        self.asked += 1
        best = np.full(len(self.docs), -1.0)
        np.maximum.at(best, self.owner, self.vectors @ q)
        best -= best.mean()
        terms = in_its_language(question)
        if self.soft is not None:  # probe_soft_terms' reading, at one (low, alpha)
            space, low = self.soft
            asked = question if self.words else None
            found = soft_evidence(terms, self.texts, self.context, space, [(low, 1.0)], asked)
            read = found[0]
        else:
            read = {
                c: (e.evidence, e.absent)
                for c, e in evidence(terms, self.texts, self.context).items()
            }
        return np.array(
            [(*read[d], best[i]) if d in read else (0, 0, best[i]) for i, d in enumerate(self.docs)]
        )


def read(
    directory: Path, count: int, soft: float | None, *, words: bool = False
) -> tuple[list[Library], float]:
    data = load_beir(directory)
    model = UniversalSentenceEncoderEmbedder()
    space = Space(lambda words: np.asarray(model.embed_documents(list(words)), np.float32))
    out: list[Library] = []
    spent, asked = 0.0, 0
    for lib in libraries.draw_same_topic(data, load_answers(directory), libraries=count):
        docs = list(lib.documents)
        texts = {d: data.corpus[d] for d in docs}
        context = {d: f"{d}\n{data.titles.get(d, '')}" for d in docs}
        parts = [sentences(texts[d]) for d in docs]
        flat = [s for p in parts for s in p]
        vectors = np.asarray(model.embed_documents(flat), dtype=np.float32)
        owner = np.repeat(np.arange(len(docs)), [len(p) for p in parts])

        window = Window(
            docs,
            texts,
            context,
            vectors,
            owner,
            soft=None if soft is None else (space, soft),
            words=words,
        )
        kept = []
        for question, relevant in lib.answerable:
            r = window.rows(model, question)
            gold = [i for i, d in enumerate(docs) if d in relevant]
            if gold:
                kept.append(r[max(gold, key=lambda i: r[i, 0])])
        refused = [window.rows(model, q) for q in lib.unanswerable]
        spent += window.spent
        asked += window.asked
        out.append((kept, refused, zlib.crc32(lib.workspace_id.encode()) % 2 == 1))
    return out, spent / max(asked, 1)


def scores(libs: list[Library], b: float, g: float) -> tuple[np.ndarray, np.ndarray]:
    w = np.array([1.0, -b, g])
    kept = np.array([k @ w for lib in libs for k in lib[0]])
    asked = np.array([(r @ w).max() for lib in libs for r in lib[1]])
    return kept, asked


def search(libs: list[Library], keep: float) -> tuple[float, float, float, float]:
    """(refused, b, g, cut) at `keep` kept, the best over the grid."""
    best = (0.0, 0.0, 0.0, 0.0)
    for b in np.arange(0.0, 3.01, 0.25):
        for g in np.arange(0.0, 8.01, 0.5):
            kept, asked = scores(libs, float(b), float(g))
            cut = float(np.quantile(kept, 1.0 - keep))
            best = max(best, (float(np.mean(asked < cut)), float(b), float(g), cut))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--libraries", type=int, default=64)
    parser.add_argument("--keep", type=float, default=0.95)
    parser.add_argument(
        "--soft-low", type=float, help="read evidence with soft term matching (USE per term)"
    )
    parser.add_argument("--words", action="store_true", help="... over words (probe_soft_terms)")
    args = parser.parse_args()
    libs, seconds = read(args.directory, args.libraries, args.soft_low, words=args.words)
    refused, b, g, _ = search(libs, args.keep)
    today = search_b(libs, args.keep)
    print(f"whole set: refused {refused:.3f} at {args.keep:.2f} kept (b {b:g}, g {g:g})")
    print(f"evidence only: refused {today[0]:.3f} (b {today[1]:g})")
    fit = [lib for lib in libs if not lib[2]]
    out = [lib for lib in libs if lib[2]]
    _, b, g, cut = search(fit, args.keep)
    kept, asked = scores(out, b, g)
    _, b0, _, cut0 = search_b(fit, args.keep)
    kept0, asked0 = scores(out, b0, 0.0)
    print(
        f"held out ({len(out)} libraries; b {b:g}, g {g:g} chosen on {len(fit)}): kept "
        f"{np.mean(kept >= cut):.3f}, refused {np.mean(asked < cut):.3f}; evidence only "
        f"(b {b0:g}): kept {np.mean(kept0 >= cut0):.3f}, refused {np.mean(asked0 < cut0):.3f}"
    )
    print(f"question embedding: {1000 * seconds:.1f} ms per question (USE, mean)")


def search_b(libs: list[Library], keep: float) -> tuple[float, float, float, float]:
    """search's best with g 0: today's evidence."""
    best = (0.0, 0.0, 0.0, 0.0)
    for b in np.arange(0.0, 3.01, 0.25):
        kept, asked = scores(libs, float(b), 0.0)
        cut = float(np.quantile(kept, 1.0 - keep))
        best = max(best, (float(np.mean(asked < cut)), float(b), 0.0, cut))
    return best


if __name__ == "__main__":
    main()
