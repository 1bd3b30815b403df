"""How often a question that stands alone would be taken for a follow-up (and searched with
the question before it): every question of a BEIR set stands alone, so each one taken for a
follow-up is a mistake. Prints one line per set, and a sample of the mistakes.

    python -m tests.bench.bench_follow_up ../shared/eval/jsquad-valid ../shared/eval/xquad-dev/en …
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bunko.services.chat.follow_up import continues


def main(folders: list[str]) -> None:
    for folder in folders:
        lines = (Path(folder) / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        questions = [json.loads(line)["text"] for line in lines if line.strip()]
        taken = [q for q in questions if continues(q)]
        print(
            f"{folder}: {len(taken)}/{len(questions)} = {len(taken) / len(questions):.3f} taken for follow-ups"
        )
        for question in taken[:8]:
            print(f"    {question}")


if __name__ == "__main__":
    main(sys.argv[1:])
