"""Fit a model's calibration row (bunko/services/search/calibration.py) on BEIR sets: one command.

    python -m tests.bench.fit_calibration --embedder use ../shared/eval/scifact \\
        ../shared/eval/jsquad-valid ../shared/eval/xquad-dev/en ../shared/eval/xquad-dev/de

For each set it ingests, through the real pipeline, the whole corpus (or `--max-docs` of it:
every judged document of `--max-queries` sampled questions, then others) and the seeded
libraries of one and ten documents `bunko eval` measures (evaluation/libraries.py), and
records every question's top ten candidates, ranked as search ranks them (the adaptive
weight): raw cosine, engine coverage, background coverage, evidence and reach
(services/search/evidence.py, over the gate's window) and whether it is relevant.
Unanswerable questions: the other sets' over another corpus, random strings, other-topic
questions in the small libraries and, where the set has gold answers, same-topic questions
(libraries of half an article, asked the other half's questions).

Then, from a starting row (`--start`: the packaged row of `--row`), a seeded local search
looks for the score (a·cos' + b·coverage + e·background + c·cos'·background + f·evidence +
g·reach + h·evidence·reach + d, cos' on the model's measured scale) that refuses the most
same-topic questions (the worst of the sets in the questions' own language) while every other
group holds its floor (`_required`: answerable kept ≥ 0.95 in small libraries, other-topic and
unrelated refused ≥ 0.95; cross-lingual sets no lower than the row before evidence). Last, the
curve: the share of hits relevant at each score (isotonic), pinned at the default min_score,
with its reliability table and expected calibration error. `--records F` saves (and `--load F`
reuses) the candidates; with `--texts` each question's window is saved too (its text and
context), so tests/bench/resignal_records.py can read another evidence reading over them
without embedding again.
"""

from __future__ import annotations

import argparse
import json
import random
import zlib
from pathlib import Path

import numpy as np

from bunko.bootstrap.scratch import scratch_services
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.evaluation import libraries, load_beir
from bunko.evaluation.abstention import foreign_queries, random_queries
from bunko.evaluation.answers import load_answers
from bunko.ports import SearchFilter
from bunko.services.search.evidence import is_claim
from bunko.services.search.fusion import fuse, query_vector_weight, vector_weight_for
from bunko.services.search.model_scale import measure_scale
from bunko.services.search.relevance_gate import (
    TextSignals,
    gate_window,
    window_context,
    window_signals,
)

TOP = 10
THRESHOLD = 0.3  # the default min_score the row is chosen for
KEEP_LARGE = 0.97
MUST_KEEP = ("scifact", "jsquad-valid")  # the large sets whose kept share must not regress
LOGIT = float(np.log(THRESHOLD / (1 - THRESHOLD)))


def _bulk(services, queue, workspace_id: str, docs: dict[str, str]) -> dict[str, str]:
    path_of = {}
    for doc_id, text in docs.items():
        doc = services.ingest.submit_text(workspace_id, path=f"{doc_id}.txt", content=text or "-")
        path_of[doc.id] = doc_id
    jobs = queue.take()
    for i in range(0, len(jobs), 256):
        services.pipeline.process(jobs[i : i + 256])
    return path_of


def collect(
    directory: Path,
    embedder: str,
    max_docs: int | None,
    max_queries: int,
    *,
    same_topic: int = libraries.SAME_TOPIC_LIBRARIES,
    same_topic_only: bool = False,
    keep_texts: bool = False,
) -> dict:
    data = load_beir(directory)
    records: list[dict] = []
    window_texts: dict[str, list[str]] = {}  # --texts: chunk id -> [text, its context]
    with scratch_services(embedder=embedder) as (services, queue):
        generation = services.search.generation(DEFAULT_WORKSPACE_ID)
        if services.search.query_scales.applies(generation.embedder):
            services.search.query_scales.measure(generation.embedder)  # before the first question
        ranking_scale = services.search.calibration_for(
            vector_used=True, method="convex", embedder=generation.embedder
        ).scale

        def record(workspace_id, group, query, relevant, id_of, library=""):
            filters = SearchFilter(workspace_id=workspace_id)
            vector = services.search.query_vector(query, generation.embedder)
            keyword, semantic = generation.index.hybrid_search(query, vector, filters, 100)
            weight = generation.index.keyword_weight(query, filters) if keyword else 0.0
            vw = query_vector_weight(  # ranked as search ranks: the weight follows the query
                vector_weight_for(generation.embedder), keyword, semantic, weight, ranking_scale
            )
            fused = fuse(keyword, semantic, vector_weight=vw, keyword_weight=weight)
            # the query's own scale where the model is read per query (query_scale.py)
            base = services.search.calibration_for(
                vector_used=bool(semantic), method="convex", embedder=generation.embedder
            )
            own = base
            if vector is not None and semantic:
                own = services.search.per_query(
                    workspace_id, query, generation.embedder, vector, semantic, base
                )
            window = gate_window(fused, TOP)  # read as the gate reads it
            ids = [h.chunk_id for h in window]
            read = services.metadata.get_chunks_by_ids(workspace_id, ids)
            context = window_context(services.metadata, workspace_id, read, {})
            signals = window_signals(query, {c.id: c.content for c in read}, context)
            none = TextSignals(0.0)
            rows = [
                [
                    round(h.vector_score, 5),
                    round(h.coverage, 5),
                    round(signals.get(h.chunk_id, none).background, 5),
                    round(signals.get(h.chunk_id, none).evidence, 5),
                    round(signals.get(h.chunk_id, none).reach, 5),
                    round(signals.get(h.chunk_id, none).pair, 5),
                    round(signals.get(h.chunk_id, none).absent, 5),
                    int(id_of.get(h.document_id) in relevant),
                ]
                for h in fused[:TOP]
            ]
            record_ = {"group": group, "hits": rows}
            if library:  # a same-topic library's: --hold-out splits by it
                record_["library"] = library
            if is_claim(query):  # judged by the claim row (calibration.CLAIM_ROWS), not this one
                record_["claim"] = True
            if own.scale != base.scale:
                record_["scale"] = [own.scale.unrelated, own.scale.related]
            if keep_texts:  # what the gate read, so another evidence reading can be recorded
                record_["query"] = query
                record_["window"] = [c.id for c in read]
                record_["top"] = [h.chunk_id for h in fused[:TOP]]
                for c in read:
                    window_texts.setdefault(c.id, [c.content, context.get(c.id, "")])
            records.append(record_)

        by_title = len(set(libraries.topics(data).values())) <= len(data.corpus) / 2
        for size, draws in {} if same_topic_only else libraries.DRAWS.items():
            for lib in libraries.draw_libraries(data, size, draws):
                docs = {d: data.corpus[d] for d in lib.documents}
                id_of = _bulk(services, queue, lib.workspace_id, docs)
                for q, rel in lib.answerable:
                    record(lib.workspace_id, f"lib{size}-answerable", q, rel, id_of)
                other = f"lib{size}-other" + ("" if by_title else "-per-document")
                for q in lib.unanswerable:
                    record(lib.workspace_id, other, q, set(), id_of)
        gold = load_answers(directory)
        drawn = libraries.draw_same_topic(data, gold, libraries=same_topic) if gold else []
        for lib in drawn:
            id_of = _bulk(
                services, queue, lib.workspace_id, {d: data.corpus[d] for d in lib.documents}
            )
            for q, rel in lib.answerable:
                group = "same-topic-answerable"
                record(lib.workspace_id, group, q, rel, id_of, lib.workspace_id)
            for q in lib.unanswerable:
                group = "same-topic-unanswered"
                record(lib.workspace_id, group, q, set(), id_of, lib.workspace_id)
        questions = sorted(data.queries)
        random.Random(0).shuffle(questions)
        questions = [] if same_topic_only else questions[:max_queries]
        corpus = data.corpus
        if max_docs and max_docs < len(corpus):
            keep = {d for q in questions for d in data.qrels[q] if d in corpus}
            rest = sorted(set(corpus) - keep)
            random.Random(0).shuffle(rest)
            keep |= set(rest[: max(0, max_docs - len(keep))])
            corpus = {d: corpus[d] for d in sorted(keep)}
        if same_topic_only:
            corpus = {}
        path_of = _bulk(services, queue, DEFAULT_WORKSPACE_ID, corpus)
        for q in questions:
            relevant = {d for d, g in data.qrels[q].items() if g > 0}
            record(DEFAULT_WORKSPACE_ID, "answerable", data.queries[q], relevant, path_of)
        foreign = {} if same_topic_only else foreign_queries(directory, count=max_queries)
        for source, texts in foreign.items():
            for q in texts:
                record(DEFAULT_WORKSPACE_ID, f"foreign:{source}", q, set(), path_of)
        for q in [] if same_topic_only else random_queries():
            record(DEFAULT_WORKSPACE_ID, "random", q, set(), path_of)
        scale = measure_scale(generation.embedder) if generation.embedder else None
    meta = {"dataset": directory.name, "embedder": embedder, "documents": len(corpus)}
    if scale is not None:
        meta["scale"] = [scale.unrelated, scale.related]
    out = {"meta": meta, "records": records}
    if keep_texts:
        out["texts"] = window_texts
    return out


def _answerable(group: str) -> bool:
    return group == "answerable" or group.endswith("-answerable")


CROSS_LINGUAL = ("de", "es")  # xquad-dev's question languages other than the corpus's
# Cross-lingual questions kept (USE): the row before evidence kept 0.65 / 0.60 / 0.58; since
# reach is 0 for a question in another language than the candidates, a row keeps more, and
# must keep this much.
CROSS_FLOOR = {"answerable": 0.70, "lib1-answerable": 0.70, "lib10-answerable": 0.67}


# SciFact's claims spread their words over their abstracts' sentences; with
# --scifact-floors a row must keep about what the row before evidence kept of them.
SCIFACT_FLOOR = {"answerable": 0.93, "lib1-answerable": 0.88, "lib10-answerable": 0.93}
FLOORS: dict[str, dict[str, float]] = {"scifact": {}}
# With --hold-start, the cross-lingual sets' answerable groups must keep what the starting
# row keeps of them, less this: evidence must not cost a model that reads another language.
HOLD_MARGIN = 0.02


def _required(group: str, dataset: str = "") -> float:
    """The floor a group must hold: kept (answerable) or refused."""
    name = dataset.split(":")[-1]
    if group == "same-topic-unanswered" or group.startswith(HELD):
        return 0.0  # what the search maximises; with --hold-out, what it never sees
    if group in FLOORS.get(name, {}):
        return FLOORS[name][group]
    if name in CROSS_LINGUAL:
        return CROSS_FLOOR.get(group, 0.0 if _answerable(group) else 0.95)
    if group == "answerable":
        return 0.90  # a whole corpus: its questions' other paragraphs are judged irrelevant
    if group.endswith("-per-document"):
        return 0.90 if group.startswith("lib1-") else 0.0  # SciFact: one field's abstracts
    return 0.95


FEATURES = (
    "cosine",
    "coverage",
    "background",
    "product",
    "evidence",
    "reach",
    "evidence_reach",
    "absent",
)


def _absent(hit: list[float], dataset: str, group: str) -> float:
    """What no candidate holds of a same-language question: recorded since (column 6), or
    for older records read from the set (reach is 0 across languages, absent too)."""
    if len(hit) > 7:
        return hit[6]
    across = dataset in CROSS_LINGUAL or group.startswith("foreign")
    return 0.0 if across else 1.0 - hit[4]


# With --hold-out, the same-topic libraries (recorded with their id) whose id's CRC-32 is odd
# are this group's, kept out of the search and reported beside the fitted ones; same-topic
# records without an id (an older draw, maybe the same articles) are left out.
HELD = "held-"


def _split(record: dict, hold_out: bool) -> str | None:
    """The record's group, with --hold-out: HELD for a held-out library, None to leave out."""
    group = record["group"]
    if not hold_out or not group.startswith("same-topic"):
        return group
    if "library" not in record:
        return None
    return HELD + group if zlib.crc32(record["library"].encode()) % 2 else group


class Candidates:
    """Every (set, group)'s questions as arrays: features (n, TOP, FEATURES) and masks."""

    def __init__(self, loaded: list[dict], *, pair: bool = False, hold_out: bool = False) -> None:
        self.groups: dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for d in loaded:
            lo, hi = d["meta"].get("scale", [0.0, 1.0])
            by_group: dict[str, list] = {}
            for r in d["records"]:
                if r.get("claim"):
                    continue  # tests/bench/probe_claims.py fits the claim row
                group = _split(r, hold_out)
                if group is None:
                    continue
                # evidence: one sentence (column 3) or, recorded since, two adjacent (5)
                dataset = d["meta"]["dataset"]
                hits = np.array(
                    [
                        [
                            *h[:3],
                            h[5] if pair and len(h) > 6 else h[3],
                            h[4],
                            _absent(h, dataset, r["group"]),
                            h[-1],
                        ]
                        for h in r["hits"]
                    ],
                    float,
                ).reshape(-1, 7)
                if _answerable(group) and not hits[:, 6].any():
                    continue  # retrieval missed it: no row can keep it
                scale = r.get("scale", (lo, hi))  # the query's own, where it has one
                by_group.setdefault(group.split(":")[0], []).append((hits, scale))
            for group, rows in by_group.items():
                x = np.zeros((len(rows), TOP, len(FEATURES)))
                valid = np.zeros((len(rows), TOP), bool)
                relevant = np.zeros((len(rows), TOP), bool)
                for i, (h, (q_lo, q_hi)) in enumerate(rows):
                    h = h[:TOP]
                    n = len(h)
                    c = (h[:, 0] - q_lo) / (q_hi - q_lo)
                    ev, reach, absent = h[:, 3], h[:, 4], h[:, 5]
                    x[i, :n] = np.stack(
                        [c, h[:, 1], h[:, 2], c * h[:, 2], ev, reach, ev * reach, absent], 1
                    )
                    valid[i, :n], relevant[i, :n] = True, h[:, 6] > 0
                self.groups[(d["meta"]["dataset"], group)] = (x, valid, relevant)

    def shares(self, weights: np.ndarray, biases: np.ndarray) -> dict:
        """Per group, the share kept (answerable) or refused (unanswerable) at each bias: an
        answerable question is kept by its best relevant hit, refused when every hit is below."""
        out = {}
        for key, (x, valid, relevant) in self.groups.items():
            s = x @ weights
            mask = valid & relevant if _answerable(key[1]) else valid
            best = np.sort(np.where(mask, s, -np.inf).max(axis=1))
            below = np.searchsorted(best, LOGIT - biases) / len(best)
            out[key] = 1.0 - below if _answerable(key[1]) else below
        return out

    def scores(self, weights: np.ndarray, bias: float) -> tuple[np.ndarray, np.ndarray]:
        """Every hit's score and whether it is relevant."""
        s = [(x @ weights + bias)[v] for x, v, _ in self.groups.values()]
        r = [rel[v] for _, v, rel in self.groups.values()]
        return np.concatenate(s), np.concatenate(r)


# The same-topic refusal maximised: the worst set's, or with --mean-objective their mean.
# With --translation, a row whose cosine at the "same passage, another language" anchor
# alone (no word in common) does not reach the cut by TRANSLATION_MARGIN is not taken: a
# shared row judges questions in another language than the files, whose evidence is nil.
OBJECTIVE = {"mean": False, "translation": False}
TRANSLATION_MARGIN = 0.25
BIASES = np.arange(-16, 0.01, 0.25)


def _value(candidates: Candidates, weights: np.ndarray) -> tuple[float, float, dict]:
    """The worst same-topic refusal in the questions' own language, less five times the
    shortfall below every floor, at the best bias; that bias; the shares there."""
    s = candidates.shares(weights, BIASES)
    short = sum(np.maximum(0.0, _required(g, d) - v) for (d, g), v in s.items())
    same = [v for (d, g), v in s.items() if g == "same-topic-unanswered" and d not in CROSS_LINGUAL]
    pooled = np.mean if OBJECTIVE["mean"] else np.min
    value = (pooled(same, axis=0) if same else np.zeros(len(BIASES))) - 5 * short
    if OBJECTIVE["translation"]:
        value = np.where(weights[0] + BIASES > LOGIT + TRANSLATION_MARGIN, value, -np.inf)
    i = int(np.argmax(value))
    return float(value[i]), float(BIASES[i]), {k: float(v[i]) for k, v in s.items()}


def _rises(weights: np.ndarray) -> bool:
    """Similarity must rise with cosine, coverage, background and evidence (cos' reaches ~1.5
    on USE's copies, ~2 on e5's narrower scale; reach and absent are context, not signals of
    relevance)."""
    a, b, e, c, f, _, h, _ = weights
    return a + c >= 0 and b >= 0 and e + 2.05 * c >= 0 and f + min(0.0, h) >= 0


FIXED: dict[int, float] = {}  # --fixed: features the search does not move


def search_row(candidates: Candidates, start: np.ndarray, steps: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    best = (*_value(candidates, start), start)
    for _ in range(steps):
        w = best[3].copy()
        pick = rng.choice(len(w), rng.integers(1, len(w) + 1), replace=False)
        w[pick] += rng.normal(0.0, 1.0, len(pick))
        for i, value in FIXED.items():
            w[i] = value
        if not _rises(w):
            continue
        found = _value(candidates, w)
        if found[0] > best[0]:
            best = (*found, w)
    return best


def curve(
    scores: np.ndarray,
    relevant: np.ndarray,
    knots: int = 12,
    weights: np.ndarray | None = None,
) -> list[tuple[float, float]]:
    """The share of hits relevant at each score (isotonic), pinned at THRESHOLD on LOGIT;
    `weights`: each hit's (so records of different sizes can count alike)."""
    order = np.argsort(scores)
    z, y = scores[order], relevant[order].astype(float)
    ws = np.ones(len(z)) if weights is None else np.asarray(weights, float)[order]
    blocks: list[list[float]] = []  # pool adjacent violators: [weighted sum, weight, hits]
    for v, wv in zip(y, ws, strict=True):
        blocks.append([v * wv, wv, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            last = blocks.pop()
            blocks[-1][0] += last[0]
            blocks[-1][1] += last[1]
            blocks[-1][2] += last[2]
    iso = np.concatenate([np.full(int(n), t / w) for t, w, n in blocks])
    above = z[z > LOGIT]  # knots: every unit below the cut, and where the kept hits lie
    spread = np.quantile(above, np.linspace(0.0, 1.0, knots)) if len(above) else []
    at = np.round(np.r_[np.arange(-8.0, LOGIT, 1.0), spread], 2)
    at = np.unique(np.r_[at[np.abs(at - LOGIT) > 0.02], round(LOGIT, 4)])
    out: list[tuple[float, float]] = []
    for k in at:
        p = float(np.interp(k, z, iso))
        p = (
            THRESHOLD
            if k == round(LOGIT, 4)
            else min(p, THRESHOLD - 0.01)
            if k < LOGIT
            else max(p, THRESHOLD)
        )
        p = min(0.99, max(p, out[-1][1] + 0.001 if out else 0.001))  # rising, below 1
        out.append((round(float(k), 4), round(p, 3)))
        if out[-1][1] >= 0.99:  # flat from here: on_curve rises on past the last knot instead
            break
    return out


def reliability_table(scores: np.ndarray, relevant: np.ndarray, knots) -> None:
    from bunko.evaluation.reliability import format_lines, reliability
    from bunko.services.search.calibration import on_curve

    shown = [(on_curve(knots, float(z)), bool(r)) for z, r in zip(scores, relevant, strict=True)]
    for line in format_lines(reliability(shown, min_score=THRESHOLD)):
        print(line)


def report(shares: dict) -> None:
    for dataset in sorted({k[0] for k in shares}):
        print(f"  {dataset}: " + ", ".join(
            f"{g} {v:.3f}" for (d, g), v in sorted(shares.items()) if d == dataset
        ))  # fmt: skip


def main() -> None:
    from bunko.services.search.calibration import CALIBRATIONS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directories", type=Path, nargs="*")
    parser.add_argument("--embedder", default="use")
    parser.add_argument(
        "--row", default="use-multilingual-v3", help="the packaged row to start from"
    )
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0, help="of the search's random steps")
    parser.add_argument(
        "--weights", help="a row to measure instead of searching: " + ",".join(FEATURES) + ",bias"
    )
    parser.add_argument("--start", help="the row to search from: " + ",".join(FEATURES))
    parser.add_argument("--max-docs", type=int)
    parser.add_argument("--max-queries", type=int, default=400)
    parser.add_argument(
        "--same-topic-libraries",
        type=int,
        default=None,
        help="articles drawn for same-topic libraries (bunko eval draws 16; more: less chance)",
    )
    parser.add_argument(
        "--same-topic-only", action="store_true", help="record the same-topic libraries only"
    )
    parser.add_argument("--records", type=Path, help="save the candidates here")
    parser.add_argument(
        "--texts",
        action="store_true",
        help="save each window's texts too (tests/bench/resignal_records.py)",
    )
    parser.add_argument("--pair", action="store_true", help="evidence of two adjacent sentences")
    parser.add_argument(
        "--scifact-floors", action="store_true", help="SciFact kept ≥ 0.93 / 0.88 / 0.93"
    )
    parser.add_argument(
        "--hold-start", action="store_true", help="cross-lingual kept ≥ the starting row's"
    )
    parser.add_argument(
        "--mean-objective", action="store_true", help="maximise the sets' mean refusal"
    )
    parser.add_argument(
        "--hold-out", action="store_true", help="fit on half the same-topic libraries"
    )
    parser.add_argument(
        "--translation", action="store_true", help="a translation alone (cos' 1) must pass"
    )
    parser.add_argument(
        "--fixed", nargs="*", default=[], help="FEATURE=VALUE the search keeps, e.g. absent=0"
    )
    parser.add_argument("--load", type=Path, nargs="*", default=[], help="reuse saved ones")
    args = parser.parse_args()
    OBJECTIVE["mean"] = args.mean_objective
    OBJECTIVE["translation"] = args.translation
    for item in args.fixed:
        name, value = item.split("=")
        FIXED[FEATURES.index(name)] = float(value)
    if args.scifact_floors:
        FLOORS["scifact"] = SCIFACT_FLOOR
    loaded = [json.loads(p.read_text(encoding="utf-8")) for p in args.load]
    for directory in args.directories:
        drawn = args.same_topic_libraries or libraries.SAME_TOPIC_LIBRARIES
        loaded.append(
            collect(
                directory,
                args.embedder,
                args.max_docs,
                args.max_queries,
                same_topic=drawn,
                same_topic_only=args.same_topic_only,
                keep_texts=args.texts,
            )
        )
        print(f"collected {directory}", flush=True)
    if args.records:
        args.records.write_text(json.dumps(loaded), encoding="utf-8")
    candidates = Candidates(
        [d for item in loaded for d in (item if isinstance(item, list) else [item])],
        pair=args.pair,
        hold_out=args.hold_out,
    )
    if args.hold_start:
        row = CALIBRATIONS[args.row]
        start = np.array([getattr(row, f) for f in FEATURES], float)
        held = candidates.shares(start, np.array([row.bias]))
        for (dataset, group), share in held.items():
            if dataset in CROSS_LINGUAL and _answerable(group):
                FLOORS.setdefault(dataset, {})[group] = float(share[0]) - HOLD_MARGIN
        print("floors held from the starting row:", FLOORS)
    if args.weights:  # a row given: its shares and curve, no search
        *given, bias = (float(v) for v in args.weights.split(","))
        weights = np.array(given)
        shares = {k: float(v[0]) for k, v in candidates.shares(weights, np.array([bias])).items()}
        value = min((v for (d, g), v in shares.items() if g == "same-topic-unanswered"), default=0)
    else:
        row = CALIBRATIONS[args.row]
        start = np.array([getattr(row, f) for f in FEATURES], float)
        if args.start:  # a row found before, to search on from
            start = np.array([float(v) for v in args.start.split(",")])
        value, bias, shares, weights = search_row(candidates, start, args.steps, args.seed)
    print(
        f"value {value:.3f}: "
        + ", ".join(f"{f} {w:.2f}" for f, w in zip(FEATURES, weights, strict=True))
        + f", bias {bias:g}"
    )
    report(shares)
    scores, relevant = candidates.scores(weights, bias)
    knots = curve(scores, relevant)
    print("curve", knots)
    reliability_table(scores, relevant, knots)


if __name__ == "__main__":
    main()
