"""Does the shown similarity mean what it says? A reliability table for `bunko eval`.

Every hit search shows for the set's questions (the top ten of each, answerable or not, in
the whole corpus and in the small libraries) goes into one of ten bins by its similarity;
each bin reports its mean similarity beside the share of its hits that are relevant. The
expected calibration error is the hits-weighted mean gap; `unrelated_at_0_9` is the share of
the unrelated hits shown at the default min_score that show 0.9 or more.
"""

from __future__ import annotations

from collections.abc import Sequence

BINS = 10
HIGH = 0.9


def _ece(pairs: Sequence[tuple[float, bool]]) -> float | None:
    if not pairs:
        return None
    sums = [[0, 0.0, 0] for _ in range(BINS)]
    for similarity, relevant in pairs:
        b = sums[min(BINS - 1, int(similarity * BINS))]
        b[0] += 1
        b[1] += similarity
        b[2] += relevant
    gap = sum(abs(s / n - r / n) * n for n, s, r in sums if n)
    return round(gap / len(pairs), 4)


def reliability(pairs: Sequence[tuple[float, bool]], *, min_score: float) -> dict:
    """`pairs`: (similarity, relevant) of every hit shown at min_score 0."""
    bins = []
    for i in range(BINS):
        low, high = i / BINS, (i + 1) / BINS
        inside = [(s, r) for s, r in pairs if min(BINS - 1, int(s * BINS)) == i]
        bins.append(
            {
                "from": low,
                "to": high,
                "hits": len(inside),
                "similarity": round(sum(s for s, _ in inside) / len(inside), 4) if inside else None,
                "relevant": round(sum(r for _, r in inside) / len(inside), 4) if inside else None,
            }
        )
    shown = [(s, r) for s, r in pairs if s >= min_score]
    unrelated = [s for s, r in shown if not r]
    return {
        "hits": len(pairs),
        "bins": bins,
        "ece": _ece(pairs),
        "ece_shown": _ece(shown),
        "min_score": min_score,
        "unrelated_at_0_9": (
            round(sum(s >= HIGH for s in unrelated) / len(unrelated), 4) if unrelated else None
        ),
    }


def format_lines(figures: dict) -> list[str]:
    lines = [
        f"similarity reliability ({figures['hits']} hits): expected calibration error "
        f"{figures['ece']} (shown at {figures['min_score']}+: {figures['ece_shown']}); "
        f"unrelated shown hits at 0.9+: {figures['unrelated_at_0_9']}",
        f"  {'similarity':<12}{'hits':>7}{'mean':>8}{'relevant':>10}",
    ]
    for b in figures["bins"]:
        if b["hits"]:
            lines.append(
                f"  {b['from']:.1f}-{b['to']:.1f}{'':<5}{b['hits']:>7}{b['similarity']:>8.3f}"
                f"{b['relevant']:>10.3f}"
            )
    return lines
