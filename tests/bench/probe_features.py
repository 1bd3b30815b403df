"""Why a question is kept or refused: each signal of its best hits and what it adds to the score.

    python -m tests.bench.probe_features tests/data/handbook --embedder e5 \\
        "Can I bring my dog to the office?" "What is the parental leave policy?"

Ingests a folder's files into scratch services with the given embedder (the refined
generation's model, `e5`, or the instant one, `use`), then reads each question as the gate
reads it (ranked as search ranks, the question's own scale, the window's text signals, the
row that judges it: services/search/relevance_gate.py) and prints, for its best `--top` hits,
the signals and each one's contribution to the score (weight × signal), the score and the
similarity shown. The cut at the default min_score 0.3 is the score −0.85. `--row` weighs the
same signals with another row (`cosine,coverage,background,product,evidence,reach,
evidence_reach,absent,bias`), on the question's scale, to see what it would do.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from bunko.bootstrap.scratch import scratch_services
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.ports import SearchFilter
from bunko.services.search.calibration import Calibration
from bunko.services.search.fusion import fuse, query_vector_weight, vector_weight_for
from bunko.services.search.relevance_gate import (
    for_question,
    gate_window,
    read_window,
    row_for,
    window_context,
)

NAMES = ("cosine", "coverage", "background", "product", "evidence", "reach", "evidence_reach")


def contributions(row: Calibration, cosine: float, signals) -> dict[str, float]:
    """Each signal's weight × value in `row`'s score (cos' on the row's scale)."""
    c = row.scale.scaled(cosine)
    return {
        "cos'": row.cosine * c,
        "coverage": row.coverage * signals[0],
        "background": row.background * signals[1],
        "product": row.product * c * signals[1],
        "evidence": row.evidence * signals[2],
        "reach": row.reach * signals[3],
        "ev·reach": row.evidence_reach * signals[2] * signals[3],
        "absent": row.absent * signals[4],
        "bias": row.bias,
    }


def probe(folder: Path, embedder: str, questions: list[str], top: int, other: list[float]) -> None:
    ws = DEFAULT_WORKSPACE_ID
    with scratch_services(embedder=embedder) as (services, queue):
        for path in sorted(folder.iterdir()):
            services.ingest.submit_text(ws, path=path.name, content=path.read_text())
        services.pipeline.process(queue.take())
        generation = services.search.generation(ws)
        if services.search.query_scales.applies(generation.embedder):
            services.search.query_scales.measure(generation.embedder)
        base = services.search.calibration_for(
            vector_used=True, method="convex", embedder=generation.embedder
        )
        for question in questions:
            filters = SearchFilter(workspace_id=ws)
            vector = services.search.query_vector(question, generation.embedder)
            keyword, semantic = generation.index.hybrid_search(question, vector, filters, 100)
            weight = generation.index.keyword_weight(question, filters) if keyword else 0.0
            vw = query_vector_weight(
                vector_weight_for(generation.embedder), keyword, semantic, weight, base.scale
            )
            fused = fuse(keyword, semantic, vector_weight=vw, keyword_weight=weight)
            own = services.search.per_query(
                ws, question, generation.embedder, vector, semantic, row_for(question, base)
            )
            read = services.metadata.get_chunks_by_ids(
                ws, [h.chunk_id for h in gate_window(fused, top)]
            )
            documents: dict = {}
            context = window_context(services.metadata, ws, read, documents)
            texts = {c.id: c.content for c in read}
            stored = {c.id: c.sentence_terms for c in read}
            signals, outside = read_window(question, texts, context, own, stored=stored)
            row = for_question(own, question, outside)
            if other:
                names = (*NAMES, "absent", "bias")
                row = replace(row, **dict(zip(names, other, strict=True)))
            doc_of = {c.id: documents.get(c.document_id) for c in read}
            print(question)
            for hit in fused[:top]:
                s = signals.get(hit.chunk_id, outside)
                values = (hit.coverage, s.background, s.evidence, s.reach, s.absent)
                parts = contributions(row, hit.vector_score, values)
                doc = doc_of.get(hit.chunk_id)
                print(
                    f"  {(doc.name if doc else '?')[:20]:20} shown {s.similarity(row, hit):.3f}"
                    f" score {sum(parts.values()):+6.2f} | cos' {row.scale.scaled(hit.vector_score):.2f}"
                    f" cov {values[0]:.2f} bg {values[1]:.2f} ev {values[2]:.2f}"
                    f" reach {values[3]:.2f} absent {values[4]:.2f} | "
                    + " ".join(f"{k} {v:+.2f}" for k, v in parts.items())
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("questions", nargs="+")
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--top", type=int, default=2)
    parser.add_argument("--row", help="weights to read the signals with, as fit_calibration's")
    args = parser.parse_args()
    other = [float(v) for v in args.row.split(",")] if args.row else []
    probe(args.folder, args.embedder, args.questions, args.top, other)


if __name__ == "__main__":
    main()
