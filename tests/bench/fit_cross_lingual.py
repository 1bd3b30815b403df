"""Record, on a fitting split, what the gate reads of questions asked in another language
than the files (e5 serving, as bench_cross_lingual.py), and replay the gate on the records
with the per-language offsets of services/search/query_scale.py (docs/relevance.md,
"Questions in another language").

    .venv/bin/python -m tests.bench.fit_cross_lingual --record records.json [--per-lang 150]
    .venv/bin/python -m tests.bench.fit_cross_lingual --load records.json

The split is every xquad-dev question bench_cross_lingual.py does not ask (its
`random.Random(0).sample` of 60 per language is the hold-out), up to `--per-lang` per
language, and JSQuAD questions its 200 are not (Japanese questions the English paragraphs
do not answer). For each question, every fused candidate's signals (cosine, coverage,
background, evidence, reach, absent) and the question's language gap are recorded at
min_score 0; the replay re-scores them with each language's offset and reports kept /
refused at the default min_score, and the offset each language's English-parallel
questions measure (the mean of the English question's cosine with the answering paragraph
less this question's, less its gap; query_scale.LANGUAGE_OFFSETS holds them).
"""

from __future__ import annotations

import argparse
import json
import os
import random
from dataclasses import replace
from pathlib import Path

from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.evaluation.beir import load_beir
from bunko.services.search import SearchOptions, query_scale, relevance_gate
from bunko.services.search.calibration import CALIBRATIONS, VECTOR_ONLY
from tests.bench.bench_cross_lingual import FOREIGN, LANGS, REPO, served

HOLD_OUT = 60  # bench_cross_lingual.py --queries 60


def _split(ids: list[str], per_lang: int) -> list[str]:
    held = set(random.Random(0).sample(ids, min(HOLD_OUT, len(ids))))
    rest = [q for q in ids if q not in held]
    random.Random(1).shuffle(rest)
    return sorted(rest[:per_lang])


def record(eval_dir: Path, per_lang: int) -> dict:
    sets = {lang: load_beir(eval_dir / "xquad-dev" / lang) for lang in LANGS}
    data = sets["en"]
    texts = sorted(
        json.loads(line)["text"]
        for line in (eval_dir / "jsquad-valid" / "queries.jsonl").open(encoding="utf-8")
    )
    random.Random(0).shuffle(texts)
    jsquad = texts[FOREIGN : FOREIGN + per_lang]  # past the bench's 200
    out: dict = {"questions": []}
    current: dict = {}
    signals_similarity = relevance_gate.TextSignals.similarity
    scale_for = query_scale.QueryScales.scale_for

    def seen(self, calibration, hit):  # every candidate the gate scores
        current["hits"].append(
            [
                hit.document_id,
                hit.vector_score,
                hit.coverage,
                self.background,
                self.evidence,
                self.reach,
                self.absent,
            ]
        )
        return signals_similarity(self, calibration, hit)

    def scaled(self, embedder, vector, language, base, *, question=""):
        got = scale_for(self, embedder, vector, language, base, question=question)
        current["library"] = language
        current["gap"] = 0.0 if got is None else base.unrelated - got.unrelated
        return got

    relevance_gate.TextSignals.similarity = seen
    query_scale.QueryScales.scale_for = scaled
    with served(data, []) as (services, path_of):
        search = services.search
        for lang, beir in sets.items():
            for q in _split(sorted(beir.queries), per_lang):
                gold = [d for d, r in beir.qrels[q].items() if r > 0]
                current.clear()
                current["hits"] = []
                search.search(WS, beir.queries[q], SearchOptions(limit=10, min_score=0.0))
                out["questions"].append(_row((lang, q, beir.queries[q], gold), current, path_of))
        for i, text in enumerate(jsquad):
            current.clear()
            current["hits"] = []
            search.search(WS, text, SearchOptions(limit=10, min_score=0.0))
            out["questions"].append(_row(("ja", f"jsquad-{i}", text, []), current, path_of))
        out["min_score"] = services.settings.min_score
    return out


def _row(item: tuple, current: dict, path_of: dict[str, str]) -> dict:
    lang, qid, text, gold = item
    hits = [[path_of[h[0]], *h[1:]] for h in current["hits"]]
    return {
        "lang": lang,
        "id": qid,
        "text": text,
        "gold": gold,
        "asked": query_scale.question_language(text),
        "library": current.get("library"),
        "gap": current.get("gap", 0.0),
        "hits": hits,
    }


def replay(
    records: dict, offsets: dict[tuple[str, str], float], *, vector_leg: bool = False
) -> dict[str, dict[str, float]]:
    """Per language at the default min_score: `kept`, the answerable questions' answering
    paragraph kept (of those found at min_score 0; JSQuAD: the share refused), and
    `withheld_refused`, the share refused were the answering paragraph not in the library
    (no other candidate shown): how many unrelated passages the language's scale lets
    through. Each question's cosines are read `offsets[(its language, the library's)]`
    higher on top of its gap; `vector_leg`: a question in another language than the library
    also judged by the cosine-only row (the higher of the two)."""
    row = CALIBRATIONS["multilingual-e5-small"]
    vector_only = VECTOR_ONLY["multilingual-e5-small"]
    min_score = records["min_score"]
    counts: dict[str, list[int]] = {}
    for question in records["questions"]:
        base, lift = row.scale, question["gap"]
        crossed = bool(question["library"]) and question["asked"] != question["library"]
        if crossed:
            lift += offsets.get((question["asked"], question["library"]), 0.0)
        scale = replace(base, unrelated=base.unrelated - lift, related=base.related - lift)
        rows = (row, vector_only) if crossed and vector_leg else (row,)
        scored = sorted(
            (
                (max(r.on_scale(scale).similarity(*h[1:]) for r in rows), h[0])
                for h in question["hits"]
            ),
            reverse=True,
        )
        top, gold = scored[:10], set(question["gold"])
        c = counts.setdefault(question["lang"], [0, 0, 0, 0])
        if not gold:  # unanswerable: refused is what counts
            c[0] += 1
            c[1] += not any(s >= min_score for s, _ in top)
            continue
        if any(d in gold for _, d in top):
            c[0] += 1
            c[1] += any(s >= min_score and d in gold for s, d in top)
        c[2] += 1
        c[3] += not any(s >= min_score for s, d in scored if d not in gold)
    return {
        lang: {"kept": round(c[1] / c[0], 3), "withheld_refused": round(c[3] / c[2], 3)}
        if c[2]
        else {"refused": round(c[1] / c[0], 3)}
        for lang, c in counts.items()
    }


def matched_offsets(records: dict, library: str = "en") -> dict[tuple[str, str], float]:
    """Per language asked over a `library`-language library: the least offset (≥ 0) that
    lets as many unrelated passages through as the library's own language does (its
    `withheld_refused` no higher than the library language's questions'), by bisection.
    A language already at or below it gets none: the scale is not moved down."""
    target = replay(records, {})[library]["withheld_refused"]
    langs = sorted({q["lang"] for q in records["questions"] if q["gold"]} - {library})
    out = {}
    for lang in langs:
        pair, low, high = (lang, library), 0.0, 0.1
        if replay(records, {pair: 0.0})[lang]["withheld_refused"] <= target:
            out[pair] = 0.0
            continue
        for _ in range(14):
            mid = (low + high) / 2
            if replay(records, {pair: mid})[lang]["withheld_refused"] >= target:
                low = mid
            else:
                high = mid
        out[pair] = round(low, 4)
    return out


def language_loss(records: dict) -> dict[str, float]:
    """Per language: the mean, over its questions whose English version's answering paragraph
    is among the candidates, of the English cosine less (this cosine + its gap): what the
    gap leaves unread of the cosine the language loses."""
    english = {q["id"].replace("xq-en-", ""): q for q in records["questions"] if q["lang"] == "en"}
    losses: dict[str, list[float]] = {}
    for q in records["questions"]:
        en = english.get(q["id"].replace(f"xq-{q['lang']}-", ""))
        if q["lang"] in ("en", "ja") or en is None:
            continue
        cos = {h[0]: h[1] for h in q["hits"] if h[0] in q["gold"] and h[1]}
        cos_en = {h[0]: h[1] for h in en["hits"] if h[0] in q["gold"] and h[1]}
        if both := sorted(set(cos) & set(cos_en)):
            losses.setdefault(q["lang"], []).append(cos_en[both[0]] - cos[both[0]] - q["gap"])
    return {lang: round(sum(v) / len(v), 4) for lang, v in sorted(losses.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=None)
    parser.add_argument("--record", type=Path, default=None)
    parser.add_argument("--load", type=Path, default=None)
    parser.add_argument("--per-lang", type=int, default=150)
    args = parser.parse_args()
    eval_dir = args.eval_dir or Path(
        os.environ.get("BUNKO_EVAL_DIR") or REPO.parent / "shared" / "eval"
    )
    if args.load:
        records = json.loads(args.load.read_text())
    else:
        records = record(eval_dir, args.per_lang)
        if args.record:
            args.record.write_text(json.dumps(records))
    print("loss the gap leaves", json.dumps(language_loss(records)))
    fitted = matched_offsets(records)
    print("matched offsets", {f"{a}>{b}": v for (a, b), v in fitted.items() if v})
    for name, offsets, leg in (
        ("gap alone", {}, False),
        ("packaged offsets", query_scale.LANGUAGE_OFFSETS, False),
        ("matched offsets", fitted, False),
        ("gap, cosine-only row beside", {}, True),
    ):
        print(name, json.dumps(replay(records, offsets, vector_leg=leg)))


if __name__ == "__main__":
    main()
