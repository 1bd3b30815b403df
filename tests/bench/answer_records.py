"""Each question's offline answer, one JSON record a line, to compare two versions of Bunko
question by question (`bunko eval --json` gives only the shares).

    .venv/bin/python -m tests.bench.answer_records ../shared/eval/xquad-dev/en out.jsonl [--max N]
        [--embedder e5]
    .venv/bin/python -m tests.bench.answer_records --compare before.jsonl after.jsonl

Ingests the set's corpus as `bunko eval` does (the default model and settings) and asks each
question with gold answers through the chat service (the offline extractive answerer). A
record holds the question, the answer's text, its sources' paragraph ids and similarities,
the gold answers and whether the answer holds one (`contains`, as evaluation/answers.py
counts it), and the passages the answerer quoted from (to replay the answerer alone).
`--embedder` ingests with that model (`bunko eval --embedder`). `--compare` counts the questions by (held a gold answer before, after, answered
before, answered after): what was lost to an abstention apart from what the answer text lost.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from bunko.bootstrap.scratch import scratch_services
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.evaluation import answers
from bunko.evaluation.beir import load_beir


def records(directory: Path, limit: int | None, embedder: str | None = None) -> list[dict]:
    data, gold = load_beir(directory), answers.load_answers(directory) or {}
    asked = [q for q in sorted(data.queries) if q in gold][:limit]
    overrides = {"embedder": embedder} if embedder else {}
    with scratch_services(**overrides) as (services, queue):
        paragraph = {}
        for doc_id, text in data.corpus.items():
            doc = services.ingest.submit_text(
                DEFAULT_WORKSPACE_ID, path=f"{doc_id}.txt", content=text or "(empty)"
            )
            paragraph[doc.id] = doc_id
        jobs = queue.take()
        for i in range(0, len(jobs), 256):
            services.pipeline.process(jobs[i : i + 256])
        out = []
        for q in asked:
            text, sources = answers.ask(services.chat, DEFAULT_WORKSPACE_ID, data.queries[q])
            out.append(
                {
                    "id": q,
                    "question": data.queries[q],
                    "answer": text,
                    "sources": [paragraph.get(s.document_id) for s in sources],
                    "scores": [round(s.score, 3) for s in sources],
                    "passages": [s.content for s in sources],
                    "gold": gold[q],
                    "contains": any(
                        answers.normalise(g) in answers.normalise(text) for g in gold[q]
                    ),
                }
            )
    return out


def compare(before: Path, after: Path) -> None:
    def load(path: Path) -> dict[str, dict]:
        with path.open(encoding="utf-8") as f:
            return {r["id"]: r for r in map(json.loads, f)}

    old, new = load(before), load(after)
    kinds = Counter(
        (old[q]["contains"], new[q]["contains"], bool(old[q]["sources"]), bool(new[q]["sources"]))
        for q in old.keys() & new.keys()
    )
    print("gold before, gold after, answered before, answered after: questions")
    for kind, n in sorted(kinds.items()):
        print(f"  {kind}: {n}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs=2, type=Path)
    parser.add_argument("--max", type=int, default=None, help="the first N questions only")
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--embedder", default=None, help="use | e5 (default: the settings')")
    args = parser.parse_args()
    if args.compare:
        compare(*args.paths)
        return
    directory, out = args.paths
    found = records(directory, args.max, args.embedder)
    with out.open("w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in found)
    shares = {k: sum(bool(r[k]) for r in found) / len(found) for k in ("contains", "sources")}
    answered = [r for r in found if r["sources"]]
    print(
        f"{len(found)} questions: contains a gold answer {shares['contains']:.4f}, "
        f"answered {shares['sources']:.4f}, of the answered "
        f"{sum(r['contains'] for r in answered) / max(len(answered), 1):.4f}"
    )


if __name__ == "__main__":
    main()
