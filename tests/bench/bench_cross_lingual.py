"""Cross-lingual kept with the refined (e5) generation serving: xquad-dev's English
paragraphs asked in each language, with e5's per-query normalisation
(services/search/query_scale.py) and without it, in one run.

    .venv/bin/python -m tests.bench.bench_cross_lingual [--queries 200] [--langs en,de,...]

The fast model (USE) ingests the paragraphs and the real Refiner fills the e5 generation,
which then serves (as bench_refine.py). For each language, through the real search service
at the default min_score (as `bunko eval`'s abstention): `kept`, the share of questions whose
gold paragraph is still returned among those found at min_score 0; `kept_all` of every
question. Refused: random strings (what `bunko eval` asks xquad-dev), SciFact's claims and
JSQuAD's questions over this corpus; and the one- and ten-document libraries of
`bunko eval` (evaluation/libraries.py; refined too) asked in `--library-langs` (English and
German by default): kept / refused (other-topic questions). `--show-refused de,hi` also
prints, per query mode, each question of those languages that is found at min_score 0 but
refused at the default: its answering paragraph's shown similarity, vector and keyword scores,
and the English question's.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import random
from collections.abc import Iterator
from pathlib import Path

from bunko.bootstrap.root import Services
from bunko.bootstrap.scratch import scratch_services
from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.evaluation import abstention, libraries
from bunko.evaluation.beir import load_beir
from bunko.services.search import SearchOptions

REPO = Path(__file__).resolve().parents[2]
LANGS = ("en", "de", "es", "tr", "el", "vi", "hi", "ro")
FOREIGN = 200


def _sample(path: Path, n: int) -> list[str]:
    texts = sorted(json.loads(line)["text"] for line in path.open(encoding="utf-8"))
    random.Random(0).shuffle(texts)
    return texts[:n]


def _refused(
    search, workspace_id: str, asked: str, english: str, gold: set[str], path_of, min_score
):
    """The answering hit of `asked` at min_score 0 and the English question's, when `asked`
    is refused at `min_score` (None: kept, or not found at all)."""

    def hits(question: str, cutoff: float) -> list[tuple]:
        options = SearchOptions(limit=libraries.RESULT_LIMIT, min_score=cutoff)
        return [
            (
                path_of[i.document_id],
                round(i.similarity, 3),
                round(i.vector_score, 3),
                round(i.text_score, 3),
            )
            for i in search.search(workspace_id, question, options).items
            if path_of[i.document_id] in gold
        ]

    found = hits(asked, 0.0)
    if not found or hits(asked, min_score):
        return None
    return {"question": asked, "found": found, "english": hits(english, 0.0)}


@contextlib.contextmanager
def served(data, small: list[libraries.Library]) -> Iterator[tuple[Services, dict[str, str]]]:
    """Scratch services whose default workspace holds `data`'s corpus and each of `small`
    its own documents, ingested with USE and refined with e5, which then serves (its
    per-query background measured); and Bunko document id → the set's id."""
    overrides = {"embedder": "use", "refine_embedder": "e5", "refine_quiet_seconds": 0}
    with scratch_services(**overrides) as (services, queue):
        path_of: dict[str, str] = {}
        for doc_id, text in data.corpus.items():
            doc = services.ingest.submit_text(WS, path=f"{doc_id}.txt", content=text or "-")
            path_of[doc.id] = doc_id
        services.pipeline.process(queue.take())
        for library in small:
            for doc_id in library.documents:
                doc = services.ingest.submit_text(
                    library.workspace_id, path=f"{doc_id}.txt", content=data.corpus[doc_id]
                )
                path_of[doc.id] = doc_id
        services.pipeline.process(queue.take())
        refiner = services.refiner
        for workspace in {WS, *(lib.workspace_id for lib in small)}:
            assert refiner.refine(workspace)
        e5 = refiner.generations.refined.embedder
        assert services.search.generation(WS).embedder is e5
        services.search.query_scales.measure(e5)
        yield services, path_of


def run(
    eval_dir: Path,
    langs: list[str],
    n_queries: int | None,
    library_langs: set[str],
    show_refused: set[str] = frozenset(),
) -> dict:
    sets = {lang: load_beir(eval_dir / "xquad-dev" / lang) for lang in langs}
    # the English set: its questions are what the others translate (and --show-refused prints)
    data = sets.get("en") or load_beir(eval_dir / "xquad-dev" / "en")
    unanswerable = {
        "random": abstention.random_queries(),
        "scifact": _sample(eval_dir / "scifact" / "queries.jsonl", FOREIGN),
        "jsquad": _sample(eval_dir / "jsquad-valid" / "queries.jsonl", FOREIGN),
    }
    report: dict = {"documents": len(data.corpus)}
    drawn = {size: libraries.draw_libraries(data, size, n) for size, n in libraries.DRAWS.items()}
    with served(data, [lib for libs in drawn.values() for lib in libs]) as (services, path_of):
        search = services.search
        e5 = services.refiner.generations.refined.embedder
        # Each question is embedded once for both modes.
        e5.embed_query = functools.lru_cache(maxsize=None)(e5.embed_query)
        min_score = services.settings.min_score

        def found(workspace_id: str, question: str) -> list[str]:
            options = SearchOptions(limit=libraries.RESULT_LIMIT, min_score=min_score)
            return [
                path_of[i.document_id] for i in search.search(workspace_id, question, options).items
            ]

        for mode in ("per_query", "fixed"):
            search.query_scales.enabled = mode == "per_query"
            figures: dict = {}
            for lang, beir in sets.items():
                ids = sorted(beir.queries)
                if n_queries:
                    ids = random.Random(0).sample(ids, min(n_queries, len(ids)))
                answerable = {
                    q: (beir.queries[q], {d for d, r in beir.qrels[q].items() if r > 0})
                    for q in ids
                }
                asked = unanswerable if lang == langs[0] else {}
                whole = abstention.evaluate(
                    search, WS, answerable, path_of, asked, min_score=min_score
                )
                small = {}
                for size, libs in drawn.items() if lang in library_langs else ():
                    # the same libraries, their questions asked in this language
                    text_of = {
                        data.queries[q]: beir.queries[q.replace("xq-en-", f"xq-{lang}-")]
                        for q in data.queries
                    }
                    translated = [
                        libraries.Library(
                            lib.workspace_id,
                            lib.documents,
                            tuple((text_of[t], r) for t, r in lib.answerable),
                            tuple(text_of[t] for t in lib.unanswerable),
                        )
                        for lib in libs
                    ]
                    got = libraries.measure(translated, found)
                    small[str(size)] = {"kept": got["kept"], "refused": got["refused"]}
                figures[lang] = {
                    "kept": whole["answerable_kept"],
                    "kept_all": whole["answerable_kept_all"],
                    "libraries": small,
                }
                if asked:
                    figures["refused"] = whole["refused_by_source"]
                print(mode, lang, json.dumps(figures[lang]), flush=True)
                for q in ids if lang in show_refused else ():
                    english = data.queries[q.replace(f"xq-{lang}-", "xq-en-")]
                    why = _refused(
                        search, WS, beir.queries[q], english, answerable[q][1], path_of, min_score
                    )
                    if why:
                        print(mode, lang, "refused", json.dumps(why, ensure_ascii=False))
            report[mode] = figures
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=None)
    parser.add_argument("--langs", default=",".join(LANGS))
    parser.add_argument("--queries", type=int, default=None, help="questions per language")
    parser.add_argument("--library-langs", default="en,de", help="asked in the small libraries")
    parser.add_argument("--show-refused", default="", help="languages whose refused to print")
    args = parser.parse_args()
    eval_dir = args.eval_dir or Path(
        os.environ.get("BUNKO_EVAL_DIR") or REPO.parent / "shared" / "eval"
    )
    library_langs = set(args.library_langs.split(","))
    show = set(filter(None, args.show_refused.split(",")))
    report = run(eval_dir, args.langs.split(","), args.queries, library_langs, show)
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
