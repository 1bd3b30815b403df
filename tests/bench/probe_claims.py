"""How far a claim can be kept in a small library while other claims are refused (SciFact).

    python -m tests.bench.probe_claims ../shared/eval/scifact --embedder use --draws 0,1,2

A SciFact query is a claim ("Vitamin D deficiency is unrelated to birth weight."), read by the
gate over the whole passage (services/search/evidence.is_claim). For each seeded draw of the
one- and ten-document libraries `bunko eval` builds (evaluation/libraries.draw_libraries; the
eval's own draw is 0), every claim's candidates are recorded as search ranks them, with the
signals the gate reads (the cosine on the query's scale, the engine coverage, background
coverage, evidence, reach, absent; tests/bench/fit_calibration.py's columns). Then, on the
held-out draw (the first of `--draws`):

- the question row (calibration.CALIBRATIONS) with its bias moved: the kept / refused
  trade-off it can reach; the claim row (calibration.CLAIM_ROWS) at the default cut;
- each signal alone: the share of claims kept when the threshold refuses 0.95 of the other
  claims (a claim is kept by its best relevant hit, refused when every hit is below);
- a row refitted on the other draws (fit_calibration's search: the most claims kept, no
  other-topic refusal below the question row's; how CLAIM_ROWS was fitted), and
  gradient-boosted trees on the same signals (the most these signals can tell apart, not a
  row the gate could ship).

`--curve` prints only the claim row's curve (fit_calibration.curve over every claim's top ten
hits on the training draws alone: the curve tried before --pooled) and the held-out draw's
reliability table on the packaged curve and on the refitted one. `--records F` saves the
candidates (pickle), `--load F` reuses them (no ingest; several files are merged).

`--corpus` also records every claim over the whole corpus, as `bunko eval` asks them, and the
eval's other hits there (`--neighbours K`: only the judged abstracts and each claim's K nearest
by TF-IDF, for a model too slow to embed them all); `--pooled` then fits the claim row's curve
on the training draws and the corpus's even claims (`--corpus-weight` of the fit) and measures
each curve on the held-out draw, the corpus's odd claims, every claim, and the eval's mix
(how USE_CLAIM_CURVE and E5_CLAIM_CURVE were fitted; docs/relevance.md).
"""

from __future__ import annotations

import argparse
import pickle
import zlib
from pathlib import Path

import numpy as np

from bunko.bootstrap.scratch import scratch_services
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.evaluation import abstention, libraries, load_beir
from bunko.ports import SearchFilter
from bunko.services.search import SearchOptions
from bunko.services.search.calibration import CALIBRATIONS, CLAIM_ROWS, on_curve
from bunko.services.search.fusion import fuse, query_vector_weight, vector_weight_for
from bunko.services.search.relevance_gate import (
    TextSignals,
    gate_window,
    window_context,
    window_signals,
)
from tests.bench.fit_calibration import (
    FEATURES,
    LOGIT,
    THRESHOLD,
    TOP,
    _bulk,
    curve,
    reliability_table,
)

ROWS = {"use": "use-multilingual-v3", "e5": "multilingual-e5-small"}
REFUSE = 0.95
CORPUS, CORPUS_IDS, QUESTIONS = "corpus", "corpus-ids", "questions"  # --corpus's records
# draw or CORPUS → group → per claim, its hits' document ids (search shows a document once)
DOCUMENTS = "documents"
SIGNALS = ("cosine", "coverage", "background", "evidence")


def collect(
    directory: Path,
    embedder: str,
    draws: list[int],
    *,
    corpus: bool = False,
    neighbours: int = 0,
    save: Path | None = None,
) -> dict:
    """Draw → group ("lib1-answerable", "lib1-other", ...) → per claim, its top hits as
    rows (the FEATURES, without the product columns' inputs repeated) and relevance. With
    `corpus`, also CORPUS → the same for every claim over the whole corpus, as `bunko eval`
    asks them (CORPUS_IDS: their query ids, per group), and QUESTIONS → the (similarity,
    relevant) of the eval's other hits over it (other sets' questions, random strings),
    which no claim row judges; `neighbours`: only the corpus's abstracts judged for a claim
    or among its `neighbours` nearest (neighbourhood). `save`: written after each stage."""
    data = load_beir(directory)
    out: dict = {}
    with scratch_services(embedder=embedder) as (services, queue):
        generation = services.search.generation(DEFAULT_WORKSPACE_ID)
        if services.search.query_scales.applies(generation.embedder):
            services.search.query_scales.measure(generation.embedder)
        scale = services.search.calibration_for(
            vector_used=True, method="convex", embedder=generation.embedder
        ).scale

        def hits(workspace_id: str, query: str, relevant, id_of) -> tuple[np.ndarray, list]:
            filters = SearchFilter(workspace_id=workspace_id)
            vector = services.search.query_vector(query, generation.embedder)
            keyword, semantic = generation.index.hybrid_search(query, vector, filters, 100)
            weight = generation.index.keyword_weight(query, filters) if keyword else 0.0
            vw = query_vector_weight(
                vector_weight_for(generation.embedder), keyword, semantic, weight, scale
            )
            fused = fuse(keyword, semantic, vector_weight=vw, keyword_weight=weight)
            base = services.search.calibration_for(
                vector_used=bool(semantic), method="convex", embedder=generation.embedder
            )
            own = base
            if vector is not None and semantic:
                own = services.search.per_query(
                    workspace_id, query, generation.embedder, vector, semantic, base
                )
            window = gate_window(fused, TOP)
            read = services.metadata.get_chunks_by_ids(workspace_id, [h.chunk_id for h in window])
            context = window_context(services.metadata, workspace_id, read, {})
            signals = window_signals(query, {c.id: c.content for c in read}, context)
            rows, documents = [], []
            read_ids = {c.id for c in read}  # past the first TOP, the window's hits may pass
            for h in (h for i, h in enumerate(fused) if i < TOP or h.chunk_id in read_ids):
                s = signals.get(h.chunk_id, TextSignals(0.0))
                c = own.scale.scaled(h.vector_score)
                features = [c, h.coverage, s.background, c * s.background, s.evidence]
                features += [s.reach, s.evidence * s.reach, s.absent]
                rows.append([*features, float(id_of.get(h.document_id) in relevant)])
                documents.append(h.document_id)
            return np.array(rows).reshape(-1, len(FEATURES) + 1), documents

        out[DOCUMENTS] = {}

        for draw in draws:
            groups: dict[str, list] = {}
            docs_of: dict[str, list] = {}
            for size, count in libraries.DRAWS.items():
                for lib in libraries.draw_libraries(data, size, count, seed=draw):
                    docs = {d: data.corpus[d] for d in lib.documents}
                    id_of = _bulk(services, queue, lib.workspace_id, docs)
                    for q, rel in lib.answerable:
                        found, documents = hits(lib.workspace_id, q, rel, id_of)
                        # a claim whose relevant abstract retrieval missed: no row keeps it, so
                        # it is left out of kept/refused but its hits count for the curve
                        missed = "answerable" if found[:, -1].any() else "missed"
                        groups.setdefault(f"lib{size}-{missed}", []).append(found)
                        docs_of.setdefault(f"lib{size}-{missed}", []).append(documents)
                    for q in lib.unanswerable:
                        found, documents = hits(lib.workspace_id, q, set(), id_of)
                        groups.setdefault(f"lib{size}-other", []).append(found)
                        docs_of.setdefault(f"lib{size}-other", []).append(documents)
            out[draw], out[DOCUMENTS][draw] = groups, docs_of
            print(f"draw {draw}: " + ", ".join(f"{g} {len(v)}" for g, v in groups.items()))
            if save:
                save.write_bytes(pickle.dumps(out))
        if corpus:
            docs = data.corpus
            if neighbours:
                docs = {d: docs[d] for d in neighbourhood(data, neighbours)}
            id_of = _bulk(services, queue, DEFAULT_WORKSPACE_ID, docs)
            groups, ids, docs_of = {}, {}, {}
            for qid in sorted(data.queries):  # as bunko eval asks them
                rel = {d for d, g in data.qrels[qid].items() if g > 0}
                found, documents = hits(DEFAULT_WORKSPACE_ID, data.queries[qid], rel, id_of)
                group = "corpus-answerable" if found[:, -1].any() else "corpus-missed"
                groups.setdefault(group, []).append(found)
                ids.setdefault(group, []).append(qid)
                docs_of.setdefault(group, []).append(documents)
            out[CORPUS], out[CORPUS_IDS], out[DOCUMENTS][CORPUS] = groups, ids, docs_of
            options = SearchOptions(limit=libraries.RESULT_LIMIT, min_score=0.0)
            pairs = []
            for questions in abstention.unanswerable_queries(directory).values():
                for question in questions:
                    items = services.search.search(DEFAULT_WORKSPACE_ID, question, options)
                    pairs.extend((i.similarity, False) for i in items.items[:TOP])
            out[QUESTIONS] = pairs
            print("corpus: " + ", ".join(f"{g} {len(v)}" for g, v in groups.items()))
            print(f"other questions' hits over the corpus: {len(pairs)}")
            if save:
                save.write_bytes(pickle.dumps(out))
    return out


def neighbourhood(data, k: int) -> set[str]:
    """The abstracts a claim's search meets among the whole corpus, where a model too slow
    to embed all of it (e5 on a loaded machine) can be measured: every judged abstract and
    each claim's `k` nearest by TF-IDF (the other abstracts of its field)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    ids = sorted(data.corpus)
    tfidf = TfidfVectorizer(sublinear_tf=True, stop_words="english")
    docs = tfidf.fit_transform(data.corpus[i] for i in ids)
    claims = sorted(data.queries)
    near = (tfidf.transform(data.queries[q] for q in claims) @ docs.T).toarray()
    out = {d for q in claims for d, g in data.qrels[q].items() if g > 0 and d in data.corpus}
    return out | {ids[j] for row in near for j in np.argsort(-row)[:k]}


def _padded(claims: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The claims' hits as one array (claims, most hits, columns) and which rows are hits."""
    most = max((len(h) for h in claims), default=1)
    x = np.zeros((len(claims), most, len(FEATURES) + 1))
    valid = np.zeros((len(claims), most), bool)
    for i, h in enumerate(claims):
        x[i, : len(h)], valid[i, : len(h)] = h, True
    return x, valid


# id of a group's list → (the list, its padded arrays): the list is kept so that its id is
# not reused by another group's (a second refit in one process read the first one's claims).
_PADDED: dict[int, tuple[list, tuple[np.ndarray, np.ndarray]]] = {}


def _judged(groups: dict[str, list]) -> dict[str, list]:
    """The groups a claim is kept or refused in (not the claims retrieval missed)."""
    return {g: v for g, v in groups.items() if not g.endswith("-missed")}


def best_scores(groups: dict[str, list], score) -> dict[str, np.ndarray]:
    """Per group, each claim's deciding score: its best relevant hit's (answerable) or its
    best hit's (other). `score` maps hits (..., columns) to their scores (...)."""
    out = {}
    for group, claims in _judged(groups).items():
        key = id(claims)
        if key not in _PADDED:  # padded once: the refit scores the same claims many times
            _PADDED[key] = (claims, _padded(claims))
        x, valid = _PADDED[key][1]
        mask = valid & (x[:, :, -1] > 0) if group.endswith("answerable") else valid
        out[group] = np.where(mask, score(x), -np.inf).max(axis=1)
    return out


def shares(groups: dict[str, list], score, cut: float = LOGIT) -> dict[str, float]:
    best = best_scores(groups, score)
    return {
        g: float(np.mean(b >= cut) if g.endswith("answerable") else np.mean(b < cut))
        for g, b in best.items()
    }


def kept_at_refused(groups: dict[str, list], score) -> dict[str, float]:
    """Per library size, the share kept at the cut that refuses REFUSE of the other claims."""
    best = best_scores(groups, score)
    out = {}
    for size in libraries.DRAWS:
        cut = np.quantile(best[f"lib{size}-other"], REFUSE)
        out[f"lib{size}"] = float(np.mean(best[f"lib{size}-answerable"] > cut))
    return out


def _line(figures: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.3f}" for k, v in figures.items())


def refit(
    train: list[dict[str, list]],
    start: np.ndarray,
    steps: int,
    seed: int,
    floors: dict[str, float] | None = None,
) -> np.ndarray:
    """fit_calibration's local search: the most claims kept (mean of the two sizes) with no
    other-topic refusal below the starting row's (or `floors`, by group), on the training
    draws."""
    rng = np.random.default_rng(seed)
    pooled: dict[str, list] = {}
    for groups in train:
        for g, v in groups.items():
            pooled.setdefault(g, []).extend(v)

    def value(w: np.ndarray) -> float:
        s = shares(pooled, lambda h: h[..., :-1] @ w[:-1] + w[-1])
        short = sum(max(0.0, floor[g] - s[g]) for g in s if not g.endswith("answerable"))
        return (s["lib1-answerable"] + s["lib10-answerable"]) / 2 - 5 * short

    floor = shares(pooled, lambda h: h[..., :-1] @ start[:-1] + start[-1]) | (floors or {})
    best, w_best = value(start), start
    for _ in range(steps):
        w = w_best.copy()
        pick = rng.choice(len(w), rng.integers(1, len(w) + 1), replace=False)
        w[pick] += rng.normal(0.0, 0.7, len(pick))
        a, b, _, c, f, _, h, _, _ = w
        if a + c < 0 or b < 0 or f + min(0.0, h) < 0:  # rises with its signals
            continue
        v = value(w)
        if v > best:
            best, w_best = v, w
    return w_best


def trees(train: list[dict[str, list]], held: dict[str, list]) -> dict[str, float]:
    from sklearn.ensemble import HistGradientBoostingClassifier

    x, y = [], []
    for groups in train:
        for g, claims in _judged(groups).items():
            for h in claims:
                rows = h[h[:, -1] > 0] if g.endswith("answerable") else h
                x.append(rows[:, :-1])
                y.append(np.full(len(rows), g.endswith("answerable")))
    model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, random_state=0)
    model.fit(np.concatenate(x), np.concatenate(y))

    def prob(h: np.ndarray) -> np.ndarray:
        flat = h.reshape(-1, h.shape[-1])[:, :-1]
        return model.predict_proba(flat)[:, 1].reshape(h.shape[:-1])

    return kept_at_refused(held, prob)


def hit_scores(groups: dict[str, list], w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every claim's top TOP hits (the hits `bunko eval`'s reliability table counts): the
    row's score (before its curve) and whether the hit is relevant."""
    hits = np.concatenate([h[:TOP] for claims in groups.values() for h in claims])
    return hits[:, :-1] @ w[:-1] + w[-1], hits[:, -1] > 0


def calibrate(train: list[dict[str, list]], held: dict[str, list], row) -> None:
    """The claim row's curve fitted on the training draws' hits (fit_calibration.curve), and
    the held-out draw's reliability on the packaged curve and on the refitted one."""
    w = np.array([getattr(row, f) for f in FEATURES] + [row.bias])
    pooled = {f"{i}-{g}": v for i, groups in enumerate(train) for g, v in groups.items()}
    scores, relevant = hit_scores(pooled, w)
    knots = curve(scores, relevant)
    print(f"the claim row's curve, fitted on {len(scores)} hits of the training draws:")
    print(f"  {knots}")
    scores, relevant = hit_scores(held, w)
    print(f"held-out draw, {len(scores)} hits, the packaged curve:")
    reliability_table(scores, relevant, row.curve)
    print("held-out draw, the refitted curve:")
    reliability_table(scores, relevant, tuple(knots))


def _held(qid: str) -> bool:
    """A claim of the corpus held out of the pooled curve's fit (its id's CRC-32 is odd)."""
    return zlib.crc32(qid.encode()) % 2 == 1


def _shown(
    claims: list[np.ndarray], w: np.ndarray, documents: list | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each claim's TOP hits as search shows them (sorted by the row's score, as by the
    similarity: the curve rises; with `documents`, the claims' hits' document ids, each
    document once, by its best chunk, as search groups them): their scores and whether each
    is relevant."""
    scores, relevant = [], []
    for i, h in enumerate(claims):
        s = h[:, :-1] @ w[:-1] + w[-1]
        order = np.argsort(-s, kind="stable")
        if documents is not None:
            first = {}
            for j in order:
                first.setdefault(documents[i][j], j)
            order = np.array(list(first.values()), int)
        top = order[:TOP]
        scores.append(s[top])
        relevant.append(h[top, -1] > 0)
    if not scores:
        return np.zeros(0), np.zeros(0, bool)
    return np.concatenate(scores), np.concatenate(relevant)


def _claims(per: dict, key) -> list[tuple[str | None, np.ndarray, list | None]]:
    """A draw's (or CORPUS's) claims: (query id or None, hits, their document ids or None
    for records made before they were kept)."""
    docs = per.get(DOCUMENTS, {}).get(key)
    out = []
    for g, claims in per[key].items():
        ids = per[CORPUS_IDS][g] if key == CORPUS else [None] * len(claims)
        of = docs[g] if docs is not None else [None] * len(claims)
        out.extend(zip(ids, claims, of, strict=True))
    return out


def _shown_of(claims: list[tuple], w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """_shown over _claims' claims, grouped by document where every claim kept its ids."""
    hits = [h for _, h, _ in claims]
    documents = [d for _, _, d in claims]
    return _shown(hits, w, None if any(d is None for d in documents) else documents)


def _figures(pairs: list[tuple[float, bool]]) -> str:
    from bunko.evaluation.reliability import reliability

    r = reliability(pairs, min_score=THRESHOLD)
    return (
        f"{r['hits']} hits, ECE {r['ece']} (shown: {r['ece_shown']}), "
        f"unrelated at 0.9+ {r['unrelated_at_0_9']}"
    )


HIGH, UNRELATED_HIGH = 0.9, 0.10  # issue 45: at most 10% of unrelated hits shown at 0.9+


def capped(knots: list, scores: np.ndarray, relevant: np.ndarray, weights: np.ndarray) -> list:
    """`knots` held below HIGH up to the score above which only UNRELATED_HIGH of the fit's
    unrelated shown hits (weighted) lie: where a few unrelated hits score as high as the
    relevant ones, a share relevant of 0.92 would show most of them at 0.9+."""
    unrelated = (scores >= LOGIT) & ~relevant
    if not unrelated.any():
        return knots
    z, w = scores[unrelated], weights[unrelated]
    order = np.argsort(-z)
    above = np.cumsum(w[order]) / w.sum()  # the share at or above each, from the top
    fits = above <= UNRELATED_HIGH
    cap = float(z[order][fits][-1]) if fits.any() else float(z.max()) + 1e-3
    high = [i for i, (k, p) in enumerate(knots) if k < cap and p >= HIGH]
    if not high:
        return knots
    out = [
        (k, round(HIGH - 0.001 * (len(high) - high.index(i)), 3) if i in high else p)
        for i, (k, p) in enumerate(knots)
    ]
    at = round(cap, 2)
    out = [kp for kp in out if kp[0] < at] + [(at, round(max(HIGH, on_curve(knots, at)), 3))]
    return out + [kp for kp in knots if kp[0] > at]


def pooled(
    per: dict, draws: list[int], row, curves: dict[str, tuple], corpus_weight: float = 0.5
) -> tuple:
    """The claim row's curve fitted on the training draws' library hits and the corpus's
    even claims (by CRC-32 of the id), the corpus weighing `corpus_weight` of the fit; then each of
    `curves` and the pooled one measured on the held-out draw's libraries, the corpus's odd
    claims, the whole corpus, and `bunko eval`'s mix (every claim over the corpus, the held-out
    draw's libraries, the other sets' questions and random strings over the corpus)."""
    w = np.array([getattr(row, f) for f in FEATURES] + [row.bias])
    train_libs = [c for d in draws[1:] for c in _claims(per, d)]
    corpus = _claims(per, CORPUS)
    lib_s, lib_r = _shown_of(train_libs, w)
    cor_s, cor_r = _shown_of([c for c in corpus if not _held(c[0])], w)
    weights = np.r_[
        np.full(len(lib_s), (1 - corpus_weight) / len(lib_s)),
        np.full(len(cor_s), corpus_weight / len(cor_s)),
    ]
    scores, relevant = np.r_[lib_s, cor_s], np.r_[lib_r, cor_r]
    fitted = curve(scores, relevant, weights=weights * len(weights))
    fitted = capped(fitted, scores, relevant, weights)
    print(f"the pooled curve ({len(lib_s)} library hits, {len(cor_s)} corpus hits):")
    print(f"  {fitted}")
    parts = {
        f"held-out draw {draws[0]}": _claims(per, draws[0]),
        "corpus, held-out claims": [c for c in corpus if _held(c[0])],
        "corpus, every claim": corpus,
    }
    for name, knots in {**curves, "pooled": tuple(fitted)}.items():
        print(f"{name}:")
        shown = {}
        for part, claims in parts.items():
            scores, relevant = _shown_of(claims, w)
            shown[part] = [
                (on_curve(knots, float(z)), bool(r)) for z, r in zip(scores, relevant, strict=True)
            ]
            print(f"  {part}: {_figures(shown[part])}")
        mix = shown[f"held-out draw {draws[0]}"] + shown["corpus, every claim"]
        print(f"  bunko eval's mix: {_figures(mix + per.get(QUESTIONS, []))}")
    return tuple(fitted)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--embedder", default="use", choices=sorted(ROWS))
    parser.add_argument("--draws", default="0,1,2", help="the first is held out")
    parser.add_argument("--steps", type=int, default=2500)
    parser.add_argument("--seed", type=int, default=2, help="of the refit's random steps")
    parser.add_argument("--records", type=Path, help="save the candidates here (pickle)")
    parser.add_argument("--load", type=Path, nargs="*", help="reuse saved candidates instead")
    parser.add_argument("--curve", action="store_true", help="only the claim row's curve")
    parser.add_argument(
        "--corpus", action="store_true", help="also record every claim over the whole corpus"
    )
    parser.add_argument(
        "--neighbours",
        type=int,
        default=0,
        help="--corpus with only the judged abstracts and each claim's K nearest",
    )
    parser.add_argument(
        "--floor", nargs="*", default=[], help="GROUP=SHARE refused the refit must hold"
    )
    parser.add_argument(
        "--from-claim-row",
        action="store_true",
        help="refit from the claim row, not the question row's",
    )
    parser.add_argument(
        "--corpus-weight", type=float, default=0.5, help="the corpus's share of --pooled's fit"
    )
    parser.add_argument(
        "--pooled", action="store_true", help="the claim curve fitted on libraries and corpus"
    )
    args = parser.parse_args()
    draws = [int(d) for d in args.draws.split(",") if d]
    if args.load:  # several: merged (the draws of one, the corpus of another)
        per, documents = {}, {}
        for path in args.load:
            records = pickle.loads(path.read_bytes())
            documents.update(records.pop(DOCUMENTS, {}))
            per.update(records)
        per[DOCUMENTS] = documents
    else:
        per = collect(
            args.directory,
            args.embedder,
            draws,
            corpus=args.corpus or bool(args.neighbours),
            neighbours=args.neighbours,
            save=args.records,
        )
    if not draws:  # the corpus recorded alone (--draws "" --corpus): analysed with --load
        return
    held, train = per[draws[0]], [per[d] for d in draws[1:]]
    if args.curve:
        calibrate(train, held, CLAIM_ROWS[ROWS[args.embedder]])
        return
    if args.pooled:
        claims = CLAIM_ROWS[ROWS[args.embedder]]
        question = CALIBRATIONS[ROWS[args.embedder]].curve
        curves = {"the packaged claim curve": claims.curve, "the question row's curve": question}
        pooled(per, draws, claims, curves, args.corpus_weight)
        return
    row = CALIBRATIONS[ROWS[args.embedder]]
    start = np.array([getattr(row, f) for f in FEATURES] + [row.bias])
    print(f"held-out draw {draws[0]}, the question row with its bias moved:")
    for shift in np.arange(-1.0, 2.01, 0.5):
        w = start.copy()
        w[-1] += shift
        print(
            f"  bias {shift:+.1f}: {_line(shares(held, lambda h, w=w: h[..., :-1] @ w[:-1] + w[-1]))}"
        )
    print(f"kept at {REFUSE} of the other claims refused (held-out draw):")
    for name in SIGNALS:
        i = FEATURES.index(name)
        print(f"  {name} alone: {_line(kept_at_refused(held, lambda h, i=i: h[..., i]))}")
    print(f"  the question row: {_line(kept_at_refused(held, lambda h: h[..., :-1] @ start[:-1]))}")
    if ROWS[args.embedder] in CLAIM_ROWS:
        claims = CLAIM_ROWS[ROWS[args.embedder]]
        c = np.array([getattr(claims, f) for f in FEATURES] + [claims.bias])
        held_out = _line(shares(held, lambda h: h[..., :-1] @ c[:-1] + c[-1]))
        print(f"the packaged claim row, held out, at the default cut: {held_out}")
    if train:
        floors = dict((g, float(v)) for g, v in (f.split("=") for f in args.floor))
        if args.from_claim_row:
            claims = CLAIM_ROWS[ROWS[args.embedder]]
            start = np.array([getattr(claims, f) for f in FEATURES] + [claims.bias])
        w = refit(train, start, args.steps, args.seed, floors)
        print(f"  trees on every signal: {_line(trees(train, held))}")
        print(f"a row refitted on draws {args.draws.split(',', 1)[1]}: {np.round(w, 2).tolist()}")
        print(
            f"  held out, at the default cut: {_line(shares(held, lambda h: h[..., :-1] @ w[:-1] + w[-1]))}"
        )


if __name__ == "__main__":
    main()
