"""What keeping answers and grouping the missing list cost on the embedded default
(docs/answers.md).

    .venv/bin/python -m tests.bench.bench_answers [--answers 2000] [--questions 500]

1. Keeping: `--answers` answers like a chat's (a question, a 400-character answer, three
   cited sources with their 600-character passage starts; one in four refused and collected)
   added to a fresh SQLite database through the store; prints p50 and p90 of one add and the
   database's size.
2. Grouping: `--questions` refused questions, ten subjects each asked in five wordings (and
   numbered variants of them), grouped with the default model (USE) as GET /answers/missing
   groups them; prints the time, how many groups, how many mix two subjects, and the
   largest groups' sizes (ten subjects: ten unmixed groups would be exact).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bunko.domain.answers import AnswerRecord

SUBJECTS = ("parking", "the gym", "vacation days", "expense reports", "the VPN", "printers",
            "badges", "lunch", "laptops", "holidays")  # fmt: skip
WORDINGS = ("Where is the policy on {}?", "How do I find out about {}?",
            "Who do I ask about {}?", "What are the rules for {}?",
            "Tell me about {} at the office")  # fmt: skip


def keeping(answers: int, folder: Path) -> dict:
    from bunko.adapters.local.sqlite.answers import SqliteAnswerStore
    from bunko.adapters.local.sqlite.db import SqliteDatabase

    db = SqliteDatabase(folder / "answers.db")
    store = SqliteAnswerStore(db)
    cited = {"fileName": "leave.md", "documentId": "d", "chunkIndex": 1, "page": 2,
             "score": 0.6, "quote": "q" * 80, "content": "c" * 600}  # fmt: skip
    took = []
    for n in range(answers):
        refused = n % 4 == 0
        record = AnswerRecord(library_id="lib", asker="u", question=f"How many days, {n}?",
                              answer="a" * 400, sources=[] if refused else [cited] * 3,
                              refused=refused, collected=refused)  # fmt: skip
        start = time.perf_counter()
        store.add(record)
        took.append(time.perf_counter() - start)
    db.close()
    took.sort()
    return {
        "add p50 ms": round(statistics.median(took) * 1000, 3),
        "add p90 ms": round(took[int(len(took) * 0.9)] * 1000, 3),
        "MB": round((folder / "answers.db").stat().st_size / 1e6, 2),
    }


def grouping(questions: int, folder: Path) -> dict:
    from bunko.services.chat.missing import group_questions
    from tests.e2e.rest_harness import make_services

    services = make_services(folder / "data", embedder="use")
    try:
        embedder = services.search.generation("default").embedder
        embedder.embed_documents(["warm up"])
        asked = [w.format(s) + (f" ({n})" if n else "") for n in range(questions // 50 + 1)
                 for s in SUBJECTS for w in WORDINGS][:questions]  # fmt: skip
        records = [AnswerRecord(library_id="l", asker="u", question=q, answer="", refused=True)
                   for q in asked]  # fmt: skip
        start = time.perf_counter()
        groups = group_questions(records, embedder)
        seconds = time.perf_counter() - start
    finally:
        services.close()
    # a group holding questions of two subjects merged what differs
    mixed = sum(len({next(s for s in SUBJECTS if s in r.question) for r in g}) > 1 for g in groups)
    return {"seconds": round(seconds, 2), "groups": len(groups), "mixed": mixed,
            "largest": [len(g) for g in groups[:12]]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=2000)
    parser.add_argument("--questions", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print("keeping:", keeping(args.answers, Path(folder)))
        print("grouping:", grouping(args.questions, Path(folder)))


if __name__ == "__main__":
    main()
