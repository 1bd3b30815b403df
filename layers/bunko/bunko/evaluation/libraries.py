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

Those other-topic questions are the easy kind: a team's library is about one domain, and the
questions it cannot answer are on that same domain. `draw_same_topic` measures those (sets with
gold answers): each library holds half of one article's paragraphs, and is asked the questions
of the other half whose gold answers occur nowhere in the library's text (`refused`) beside
the questions of its own half (`kept`).
"""

from __future__ import annotations

import random
import unicodedata
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bunko.evaluation.beir import BeirSet

# Draws per library size: enough questions for a share to about ±0.03, in well under a minute.
DRAWS = {1: 40, 10: 8}
QUESTIONS_PER_LIBRARY = {1: 8, 10: 40}
RESULT_LIMIT = 10
SAME_TOPIC = "same-topic"  # the report's key for same-topic libraries, beside "1" and "10"
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


# Same-topic libraries: articles drawn, and questions asked of each kind per library.
SAME_TOPIC_LIBRARIES = 16
SAME_TOPIC_QUESTIONS = 16


def draw_same_topic(
    data: BeirSet,
    gold: Mapping[str, Sequence[str]],
    *,
    libraries: int = SAME_TOPIC_LIBRARIES,
    cap: int = SAME_TOPIC_QUESTIONS,
    seed: int = 0,
) -> list[Library]:
    """Libraries of half of one article's paragraphs (seeded halves of up to `libraries`
    articles with at least two questioned paragraphs), asked the questions of their own half
    (answerable) and those of the other half whose gold answers the library's text does not
    hold anywhere (unanswerable on the library's own topic)."""
    topic_of = topics(data)
    asked: dict[str, list[str]] = {}
    for qid in sorted(data.queries):
        for doc, grade in data.qrels[qid].items():
            if grade > 0 and doc in data.corpus:
                asked.setdefault(doc, []).append(qid)
    by_topic: dict[str, list[str]] = {}
    for doc in sorted(asked):
        by_topic.setdefault(topic_of[doc], []).append(doc)
    articles = sorted(t for t, docs in by_topic.items() if len(docs) >= 2 and t not in asked)
    rng = random.Random(f"{seed}:same-topic")
    drawn = []
    for topic in rng.sample(articles, min(libraries, len(articles))):
        docs = by_topic[topic][:]
        rng.shuffle(docs)
        held, rest = sorted(docs[: len(docs) // 2]), docs[len(docs) // 2 :]
        text = _normalised(" ".join(data.corpus[d] for d in held))
        answerable = [
            (data.queries[q], frozenset(d for d, g in data.qrels[q].items() if g > 0))
            for doc in held
            for q in asked[doc]
        ]
        absent = [
            data.queries[q]
            for doc in rest
            for q in asked[doc]
            if gold.get(q) and not any(_normalised(a) in text for a in gold[q] if a.strip())
        ]
        drawn.append(
            Library(
                workspace_id=str(uuid.uuid5(_NAMESPACE, "same-topic\n" + "\n".join(held))),
                documents=tuple(held),
                answerable=tuple(rng.sample(answerable, min(cap, len(answerable)))),
                unanswerable=tuple(rng.sample(absent, min(cap, len(absent)))),
            )
        )
    return drawn


def _normalised(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


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
        f"{_label(size)} ({f['libraries']}): kept {f['kept']} of "
        f"{f['answerable_questions']}, {_refused(size)} refused {f['refused']} of "
        f"{f['unanswerable_questions']}"
        for size, f in figures.items()
    ]
    return "small libraries: " + "; ".join(parts)


def _label(size: str) -> str:
    return "same-topic libraries" if size == SAME_TOPIC else f"{size}-document libraries"


def _refused(size: str) -> str:
    return "unanswered on their topic" if size == SAME_TOPIC else "other topics"
