"""The missing list: what a library could not answer. The questions it refused and the
answers people marked down, grouped by similar question (greedy: each question joins the
first group whose first question's embedding, by the library's own embedder, is at least
SAME_QUESTION cosine away, else starts one), counted per ISO week, each group with the
passages Bunko had nearest to it: the documents to write next. Owners only."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from bunko.domain.answers import MAX_COLLECTED, SAME_QUESTION, AnswerRecord, MissingGroup, iso_week
from bunko.domain.auth import Principal
from bunko.errors import ValidationError
from bunko.ports import Embedder
from bunko.ports.answers import AnswerStore
from bunko.services.chat.answers import SOURCE_CHARS, require_owner
from bunko.services.search import SearchOptions, SearchService

NEAREST = 3  # passages shown with each group
MAX_GROUPS = 100


def _key(question: str) -> str:
    return " ".join(question.casefold().split())


def group_questions(
    records: Sequence[AnswerRecord],
    embedder: Embedder | None,
    *,
    threshold: float = SAME_QUESTION,
) -> list[list[AnswerRecord]]:
    """`records` (newest first) in groups of similar questions, the largest group first (then
    the most recent). Without an embedder (keyword-only search), only the same words
    (case and spacing aside) are one question."""
    distinct = list(dict.fromkeys(_key(r.question) for r in records))
    if embedder is not None and distinct:
        vectors = np.asarray(embedder.embed_documents(distinct), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.where(norms == 0, 1, norms)
    else:
        vectors = np.eye(len(distinct), dtype=np.float32)
    heads: list[int] = []  # each group's first question's row
    group_of: dict[str, int] = {}
    for row, key in enumerate(distinct):
        if heads:
            similar = vectors[heads] @ vectors[row]
            best = int(np.argmax(similar))
            if similar[best] >= threshold:
                group_of[key] = best
                continue
        group_of[key] = len(heads)
        heads.append(row)
    groups: list[list[AnswerRecord]] = [[] for _ in heads]
    for record in records:
        groups[group_of[_key(record.question)]].append(record)
    return sorted(groups, key=lambda g: (-len(g), -g[0].at.timestamp()))


class MissingList:
    def __init__(self, store: AnswerStore, search: SearchService) -> None:
        self.store = store
        self.search = search

    def groups(self, principal: Principal, *, limit: int = 20) -> list[MissingGroup]:
        """The library's missing list, the most asked first (owners only)."""
        require_owner(principal)
        if not 1 <= limit <= MAX_GROUPS:
            raise ValidationError(f"limit: 1 to {MAX_GROUPS}")
        library = principal.workspace_id
        records = self.store.collected(library, limit=MAX_COLLECTED)
        embedder = self.search.generation(library).embedder
        grouped = group_questions(records, embedder)[:limit]
        return [self._group(library, g) for g in grouped]

    def _group(self, library: str, records: list[AnswerRecord]) -> MissingGroup:
        weeks = Counter(iso_week(r.at) for r in records)
        return MissingGroup(
            question=records[0].question,
            questions=list(dict.fromkeys(r.question for r in records)),
            count=len(records),
            refused=sum(r.refused for r in records),
            marked_down=sum(r.mark == "down" for r in records),
            weeks=dict(sorted(weeks.items())),
            last_at=records[0].at,
            answer_ids=[r.id for r in records],
            nearest=self._nearest(library, records[0].question),
        )

    def _nearest(self, library: str, question: str) -> list[dict]:
        """The passages nearest the question, whatever their score: what Bunko had."""
        options = SearchOptions(limit=NEAREST, min_score=0.0, group_by_document=False)
        found = self.search.search(library, question, options).items
        return [
            {
                "fileName": item.name or item.path,
                "documentId": item.document_id,
                "chunkIndex": item.chunk_index,
                "score": round(float(item.similarity), 4),
                "content": item.content[:SOURCE_CHARS],
            }
            for item in found
        ]
