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
"""

from __future__ import annotations

import argparse
import pickle
from pathlib import Path

import numpy as np

from bunko.bootstrap.scratch import scratch_services
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.evaluation import libraries, load_beir
from bunko.ports import SearchFilter
from bunko.services.search.calibration import CALIBRATIONS, CLAIM_ROWS
from bunko.services.search.fusion import fuse, query_vector_weight, vector_weight_for
from bunko.services.search.relevance_gate import (
    TextSignals,
    gate_window,
    window_context,
    window_signals,
)
from tests.bench.fit_calibration import FEATURES, LOGIT, TOP, _bulk

ROWS = {"use": "use-multilingual-v3", "e5": "multilingual-e5-small"}
REFUSE = 0.95
SIGNALS = ("cosine", "coverage", "background", "evidence")


def collect(directory: Path, embedder: str, draws: list[int]) -> dict[int, dict[str, list]]:
    """Draw → group ("lib1-answerable", "lib1-other", ...) → per claim, its top hits as
    rows (the FEATURES, without the product columns' inputs repeated) and relevance."""
    data = load_beir(directory)
    out: dict[int, dict[str, list]] = {}
    with scratch_services(embedder=embedder) as (services, queue):
        generation = services.search.generation(DEFAULT_WORKSPACE_ID)
        if services.search.query_scales.applies(generation.embedder):
            services.search.query_scales.measure(generation.embedder)
        scale = services.search.calibration_for(
            vector_used=True, method="convex", embedder=generation.embedder
        ).scale

        def hits(workspace_id: str, query: str, relevant, id_of) -> np.ndarray:
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
            rows = []
            read_ids = {c.id for c in read}  # past the first TOP, the window's hits may pass
            for h in (h for i, h in enumerate(fused) if i < TOP or h.chunk_id in read_ids):
                s = signals.get(h.chunk_id, TextSignals(0.0))
                c = own.scale.scaled(h.vector_score)
                features = [c, h.coverage, s.background, c * s.background, s.evidence]
                features += [s.reach, s.evidence * s.reach, s.absent]
                rows.append([*features, float(id_of.get(h.document_id) in relevant)])
            return np.array(rows).reshape(-1, len(FEATURES) + 1)

        for draw in draws:
            groups: dict[str, list] = {}
            for size, count in libraries.DRAWS.items():
                for lib in libraries.draw_libraries(data, size, count, seed=draw):
                    docs = {d: data.corpus[d] for d in lib.documents}
                    id_of = _bulk(services, queue, lib.workspace_id, docs)
                    for q, rel in lib.answerable:
                        found = hits(lib.workspace_id, q, rel, id_of)
                        if found[:, -1].any():  # else retrieval missed it: no row keeps it
                            groups.setdefault(f"lib{size}-answerable", []).append(found)
                    for q in lib.unanswerable:
                        found = hits(lib.workspace_id, q, set(), id_of)
                        groups.setdefault(f"lib{size}-other", []).append(found)
            out[draw] = groups
            print(f"draw {draw}: " + ", ".join(f"{g} {len(v)}" for g, v in groups.items()))
    return out


def _padded(claims: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The claims' hits as one array (claims, most hits, columns) and which rows are hits."""
    most = max((len(h) for h in claims), default=1)
    x = np.zeros((len(claims), most, len(FEATURES) + 1))
    valid = np.zeros((len(claims), most), bool)
    for i, h in enumerate(claims):
        x[i, : len(h)], valid[i, : len(h)] = h, True
    return x, valid


_PADDED: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def best_scores(groups: dict[str, list], score) -> dict[str, np.ndarray]:
    """Per group, each claim's deciding score: its best relevant hit's (answerable) or its
    best hit's (other). `score` maps hits (..., columns) to their scores (...)."""
    out = {}
    for group, claims in groups.items():
        key = id(claims)
        if key not in _PADDED:  # padded once: the refit scores the same claims many times
            _PADDED[key] = _padded(claims)
        x, valid = _PADDED[key]
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


def refit(train: list[dict[str, list]], start: np.ndarray, steps: int, seed: int) -> np.ndarray:
    """fit_calibration's local search: the most claims kept (mean of the two sizes) with no
    other-topic refusal below the starting row's, on the training draws."""
    rng = np.random.default_rng(seed)
    pooled: dict[str, list] = {}
    for groups in train:
        for g, v in groups.items():
            pooled.setdefault(g, []).extend(v)

    def value(w: np.ndarray) -> float:
        s = shares(pooled, lambda h: h[..., :-1] @ w[:-1] + w[-1])
        short = sum(max(0.0, floor[g] - s[g]) for g in s if not g.endswith("answerable"))
        return (s["lib1-answerable"] + s["lib10-answerable"]) / 2 - 5 * short

    floor = shares(pooled, lambda h: h[..., :-1] @ start[:-1] + start[-1])
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
        for g, claims in groups.items():
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--embedder", default="use", choices=sorted(ROWS))
    parser.add_argument("--draws", default="0,1,2", help="the first is held out")
    parser.add_argument("--steps", type=int, default=2500)
    parser.add_argument("--seed", type=int, default=2, help="of the refit's random steps")
    parser.add_argument("--records", type=Path, help="save the candidates here (pickle)")
    parser.add_argument("--load", type=Path, help="reuse saved candidates instead")
    args = parser.parse_args()
    draws = [int(d) for d in args.draws.split(",")]
    if args.load:
        per = pickle.loads(args.load.read_bytes())
    else:
        per = collect(args.directory, args.embedder, draws)
    if args.records:
        args.records.write_bytes(pickle.dumps(per))
    held, train = per[draws[0]], [per[d] for d in draws[1:]]
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
        w = refit(train, start, args.steps, args.seed)
        print(f"  trees on every signal: {_line(trees(train, held))}")
        print(f"a row refitted on draws {args.draws.split(',', 1)[1]}: {np.round(w, 2).tolist()}")
        print(
            f"  held out, at the default cut: {_line(shares(held, lambda h: h[..., :-1] @ w[:-1] + w[-1]))}"
        )


if __name__ == "__main__":
    main()
