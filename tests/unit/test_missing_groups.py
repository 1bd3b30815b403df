"""The missing list's grouping (services/chat/missing.py): questions whose embeddings are at
least SAME_QUESTION apart join the first such group; without an embedder only the same words
(case and spacing aside) are one question; the largest group comes first."""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from bunko.domain import utcnow
from bunko.domain.answers import AnswerRecord
from bunko.services.chat.missing import group_questions

NOW = utcnow()


class TopicEmbedder:
    """A stand-in embedder: a question's vector is its topic's axis (the word it contains)."""

    name, dimension = "topics", 3
    topics = ("park", "gym", "leave")

    def embed_documents(self, texts):
        return np.asarray(
            [[float(topic in t) for topic in self.topics] for t in texts], dtype=np.float32
        )

    def embed_query(self, text):
        return self.embed_documents([text])[0]


def _asked(question: str, minutes_ago: int) -> AnswerRecord:
    return AnswerRecord(library_id="lib", asker="u", question=question, answer="",
                        refused=True, at=NOW - timedelta(minutes=minutes_ago))  # fmt: skip


def test_alike_questions_group_and_the_largest_group_is_first():
    records = [_asked("Where do I park?", 1), _asked("Is there a gym?", 2),
               _asked("Can staff park here?", 3), _asked("where do i  PARK?", 4)]  # fmt: skip
    groups = group_questions(records, TopicEmbedder())
    assert [[r.question for r in g] for g in groups] == [
        ["Where do I park?", "Can staff park here?", "where do i  PARK?"], ["Is there a gym?"]]  # fmt: skip


def test_without_an_embedder_only_the_same_words_are_one_question():
    records = [_asked("Where do I park?", 1), _asked("Can staff park here?", 2),
               _asked("where do i  PARK?", 3)]  # fmt: skip
    groups = group_questions(records, None)
    assert [len(g) for g in groups] == [2, 1]
    assert groups[0][1].question == "where do i  PARK?"
    assert group_questions([], None) == []
