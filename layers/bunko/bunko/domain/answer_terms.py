"""The terms an answer is matched by: words (stemmed as keyword search stems them) and CJK
bigrams, without the words every English sentence has. Shared by the offline answerer (which
sentences to quote) and the evidence finder (which sentence of a source an answer quotes)."""

from __future__ import annotations

import re
import unicodedata

from bunko.domain.keyword_analysis import index_terms

__all__ = ["asked_line", "terms"]

_CJK = "\u3005-\u3007\u3041-\u3096\u30a1-\u30fa\u30fc-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(r"[^\W_]{2,}")
# English words too common to say anything about relevance.
# fmt: off
_STOP = frozenset([
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "is", "are", "was", "were",
    "be", "by", "with", "what", "which", "who", "whom", "how", "when", "where", "why", "does",
    "do", "did", "that", "this", "it", "its", "as", "at", "from", "about"
])
# fmt: on


def terms(text: str) -> set[str]:
    """Words of two or more letters (Porter-stemmed, as keyword search has them) and the
    bigrams of CJK runs."""
    text = unicodedata.normalize("NFKC", text).lower()
    words = [w for w in _WORD.findall(_CJK_RUN.sub(" ", text)) if w not in _STOP]
    found = set(index_terms(" ".join(words)))
    for run in _CJK_RUN.findall(text):
        found.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    return found


def asked_line(question: str) -> str:
    """The question's own line: a follow-up is searched with the questions it continues
    above it, one a line (services/chat/follow_up.retrieval_query)."""
    lines = [line for line in question.split("\n") if line.strip()]
    return lines[-1] if lines else question
