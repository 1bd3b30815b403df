"""Small libraries in `bunko eval`: what a person meets with their first file, or ten.

The whole-corpus figures hide how the gate behaves on a library of one to ten documents,
where every question word is rare and a single passage is all there is. Here seeded draws of
`size` documents, each from a different topic, become libraries of their own (one workspace
each, through the real ingest pipeline and search service), and two shares are measured at
the default `min_score`:

- `kept`: of the questions about a document in the library, the share whose document is
  returned (the question in the set's own language: `xquad-dev/de` asks in German about
  English paragraphs, so its libraries measure the cross-lingual case too);
- `refused`: of questions about topics the library does not hold, the share that return
  nothing at all.

A topic is a document's title where titles are shared by several documents (a Wikipedia
article's paragraphs in XQuAD and JSQuAD), else the document itself (SciFact's abstracts),
so a question about another paragraph of the same article never counts as unanswerable.
"""

from __future__ import annotations

import random
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bunko.evaluation.beir import BeirSet

# Draws per library size: enough questions for a share to about ±0.03, in well under a minute.
DRAWS = {1: 40, 10: 8}
QUESTIONS_PER_LIBRARY = {1: 8, 10: 40}
RESULT_LIMIT = 10
_NAMESPACE = uuid.UUID("6f1b8f5e-3c1a-4c55-9d0e-6b2f1f0e8a11")


@dataclass(frozen=True)
class Library:
    workspace_id: str
    documents: tuple[str, ...]
    answerable: tuple[tuple[str, frozenset[str]], ...]  # (question, relevant doc ids)
    unanswerable: tuple[str, ...]  # questions about topics the library does not hold


def topics(data: BeirSet) -> dict[str, str]:
    """Document id → its topic: a title shared by several documents, else the id."""
    shared = {t for t, n in Counter(data.titles.values()).items() if n > 1}
    return {d: data.titles[d] if data.titles.get(d) in shared else d for d in data.corpus}


def draw_libraries(data: BeirSet, size: int, draws: int, *, seed: int = 0) -> list[Library]:
    """`draws` seeded libraries of `size` documents from different topics, each document one
    that has questions, with up to QUESTIONS_PER_LIBRARY[size] questions of each kind."""
    topic_of = topics(data)
    asked: dict[str, list[str]] = {}
    for qid in sorted(data.queries):
        for doc, grade in data.qrels[qid].items():
            if grade > 0 and doc in data.corpus:
                asked.setdefault(doc, []).append(qid)
    candidates = sorted(asked)
    by_topic: dict[str, list[str]] = {}
    for doc in candidates:
        by_topic.setdefault(topic_of[doc], []).append(doc)
    if len(by_topic) <= size:
        return []  # no question can be about a topic the library lacks
    cap = QUESTIONS_PER_LIBRARY.get(size, 40)
    rng = random.Random(f"{seed}:{size}")
    libraries = []
    for _ in range(draws):
        chosen_topics = rng.sample(sorted(by_topic), size)
        documents = tuple(rng.choice(by_topic[t]) for t in chosen_topics)
        held = set(chosen_topics)
        answerable = [
            (data.queries[q], frozenset(d for d, g in data.qrels[q].items() if g > 0))
            for doc in documents
            for q in asked[doc]
        ]
        others = [
            q
            for q in sorted(data.queries)
            if not {topic_of.get(d, d) for d, g in data.qrels[q].items() if g > 0} & held
        ]
        libraries.append(
            Library(
                # named by its documents: two sets' libraries never share a workspace
                workspace_id=str(uuid.uuid5(_NAMESPACE, "\n".join(documents))),
                documents=documents,
                answerable=tuple(rng.sample(answerable, min(cap, len(answerable)))),
                unanswerable=tuple(
                    data.queries[q] for q in rng.sample(others, min(cap, len(others)))
                ),
            )
        )
    return libraries


def measure(
    libraries: Sequence[Library],
    search: Callable[[str, str], list[str]],
) -> dict:
    """`search(workspace_id, question)` returns the ids of the documents found at the default
    min_score (the set's ids). Shares over every question of every library."""
    kept = asked = refused = other = 0
    for library in libraries:
        for question, relevant in library.answerable:
            asked += 1
            kept += bool(relevant & set(search(library.workspace_id, question)))
        for question in library.unanswerable:
            other += 1
            refused += not search(library.workspace_id, question)
    return {
        "libraries": len(libraries),
        "kept": round(kept / asked, 4) if asked else None,
        "refused": round(refused / other, 4) if other else None,
        "answerable_questions": asked,
        "unanswerable_questions": other,
    }


def format_line(figures: dict[str, dict]) -> str:
    parts = [
        f"{size}-document libraries ({f['libraries']}): kept {f['kept']} of "
        f"{f['answerable_questions']}, other topics refused {f['refused']} of "
        f"{f['unanswerable_questions']}"
        for size, f in figures.items()
    ]
    return "small libraries: " + "; ".join(parts)
