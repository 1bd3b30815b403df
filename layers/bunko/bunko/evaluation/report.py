"""The `bunko eval` report: per-method means, the configured default, run facts; as a table."""

from __future__ import annotations

import statistics
from typing import Any

from bunko.evaluation.abstention import format_line as format_abstention
from bunko.evaluation.answers import format_line as format_answers
from bunko.evaluation.libraries import format_line as format_libraries
from bunko.evaluation.metrics import METRIC_NAMES
from bunko.evaluation.reliability import format_lines as format_reliability


def summarise(
    scores: dict[str, dict[str, list[float]]], *, default_name: str, meta: dict[str, Any]
) -> dict:
    """Means (4 decimals) per method and metric, the default method's copy, and `meta`."""
    report: dict = {
        name: {
            metric: round(statistics.fmean(values), 4) if values else 0.0
            for metric, values in m.items()
        }
        for name, m in scores.items()
    }
    report["default"] = dict(report[default_name], method=default_name)
    report["meta"] = meta
    return report


def empty_scores(methods: list[str]) -> dict[str, dict[str, list[float]]]:
    return {m: {metric: [] for metric in METRIC_NAMES} for m in methods}


def format_table(report: dict) -> str:
    meta = report["meta"]
    lines = [
        f"dataset {meta['dataset']}  embedder {meta['embedder']}  "
        f"{meta['documents']} docs / {meta['chunks']} chunks / {meta['queries']} queries",
        f"{'method':<16}{'nDCG@10':>9}{'R@100':>8}{'MRR@10':>8}",
    ]
    for name, m in report.items():
        if name in ("meta", "abstention", "answers", "libraries", "reliability"):
            continue
        label = f"default={m['method']}" if name == "default" else name
        lines.append(f"{label:<16}{m['ndcg@10']:>9.4f}{m['recall@100']:>8.4f}{m['mrr@10']:>8.4f}")
    lines.append(
        f"indexing {meta['index_seconds']} s ({meta['docs_per_second']} docs/s, "
        f"{meta['chunks_per_second']} chunks/s); query p50 {meta['query_p50_ms']} ms, "
        f"p95 {meta['query_p95_ms']} ms"
    )
    if "abstention" in report:
        lines.append(format_abstention(report["abstention"]))
    if report.get("libraries"):
        lines.append(format_libraries(report["libraries"]))
    if "answers" in report:
        lines.append(format_answers(report["answers"]))
    if "reliability" in report:
        lines.extend(format_reliability(report["reliability"]))
    return "\n".join(lines)
