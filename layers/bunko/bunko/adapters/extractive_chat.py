"""ExtractiveChat: the offline default answerer. No model, no network: it quotes the
passages' sentences that share the most terms with the question, each with its citation
number, under a framing sentence in the user's language (ja / en / zh)."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator

from bunko.ports.chat import EXTRACTIVE_MODEL, ChatRequest

NAME = EXTRACTIVE_MODEL
MAX_QUOTES = 3
INTRO = {
    "en": "Here is what the knowledge base says:",
    "ja": "ナレッジベースによると、次のとおりです。",
    "zh": "根据知识库中的资料：",
}
_CJK = "\u3005-\u3007\u3041-\u3096\u30a1-\u30fa\u30fc-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(r"[^\W_]{2,}")
# A sentence ends at . ! ? before whitespace, at 。！？ anywhere, or at a line break.
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
# English words too common to say anything about relevance.
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "is",
        "are",
        "was",
        "were",
        "be",
        "by",
        "with",
        "what",
        "which",
        "who",
        "how",
        "when",
        "why",
        "does",
        "do",
        "did",
        "that",
        "this",
        "it",
        "as",
        "at",
        "from",
        "about",
    ]
)


def terms(text: str) -> set[str]:
    """Lower-cased words of two or more letters, and bigrams of CJK runs."""
    text = unicodedata.normalize("NFKC", text).lower()
    found = {w for w in _WORD.findall(_CJK_RUN.sub(" ", text)) if w not in _STOP}
    for run in _CJK_RUN.findall(text):
        found.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    return found


def sentences(passage: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(passage) if s and s.strip()]


def best_quotes(
    question: str, passages: list[str], limit: int = MAX_QUOTES
) -> list[tuple[int, str]]:
    """(citation number, sentence) of the best sentences, in the order of their sources."""
    wanted = terms(question)
    scored: list[tuple[float, int, int, str]] = []
    for number, passage in enumerate(passages, start=1):
        for position, sentence in enumerate(sentences(passage)):
            shared = len(wanted & terms(sentence))
            if shared:
                # Shared terms, discounted for length so a long sentence does not win by size;
                # earlier sources (better ranked) win ties.
                scored.append((shared / math.log2(len(sentence) + 2), -number, position, sentence))
    if not scored:
        first = next((s for s in sentences(passages[0])), "") if passages else ""
        return [(1, first)] if first else []
    best = sorted(scored, reverse=True)[:limit]
    return [(-n, s) for _, n, _, s in sorted(best, key=lambda b: (-b[1], b[2]))]


class ExtractiveChat:
    name = NAME

    def stream(self, request: ChatRequest) -> Iterator[str]:
        quotes = best_quotes(request.question, list(request.passages))
        budget = max(request.max_tokens, 1) * 4  # about four characters a token
        yield INTRO.get(request.language, INTRO["en"])
        for number, sentence in quotes:
            piece = f"\n- {sentence} [{number}]"
            if len(piece) > budget:
                break
            budget -= len(piece)
            yield piece
