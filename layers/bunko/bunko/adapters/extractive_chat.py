"""ExtractiveChat: the offline default answerer. No generative model, no network: it quotes
the passages' sentences that share the most terms with the question, each with its citation
number, under a framing sentence in the user's language (ja / en / zh). When no sentence
shares a term (a question in another language than the passages, which the relevance gate
keeps on its vectors), it quotes the sentences closest to the question by the embedding model
that ranked them, where it has one."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator

import numpy as np

from bunko.ports import Embedder
from bunko.ports.chat import EXTRACTIVE_MODEL, ChatRequest

NAME = EXTRACTIVE_MODEL
MAX_QUOTES = 3
SEMANTIC_QUOTES = 2
MAX_SENTENCES = 64  # embedded for a semantic choice: the first ones of the best sources
INTRO = {
    "en": "Here is what the knowledge base says:",
    "ja": "ナレッジベースによると、次のとおりです。",
    "zh": "根据知识库中的资料：",
}
_CJK = "\u3005-\u3007\u3041-\u3096\u30a1-\u30fa\u30fc-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(r"[^\W_]{2,}")
_HIRAGANA = re.compile("[\u3041-\u309f]")
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


def closest_quotes(
    embedder: Embedder, question: str, passages: list[str], limit: int = SEMANTIC_QUOTES
) -> list[tuple[int, str]]:
    """(citation number, sentence) of the sentences nearest the question by `embedder`."""
    found = [
        (n, p, s)
        for n, passage in enumerate(passages, 1)
        for p, s in enumerate(sentences(passage))
        if not _heading(s)
    ][:MAX_SENTENCES]
    if not found:
        return []
    vectors = np.asarray(embedder.embed_documents([s for _, _, s in found]), dtype=np.float32)
    query = np.asarray(embedder.embed_query(question), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1) * max(float(np.linalg.norm(query)), 1e-12)
    cosines = vectors @ query / np.maximum(norms, 1e-12)
    best = sorted(np.argsort(-cosines)[:limit].tolist())
    return [(found[i][0], found[i][2]) for i in best]


def _heading(sentence: str) -> bool:
    """A short line with no closing punctuation: a title, not a statement to quote."""
    return len(sentence) < 60 and not sentence.rstrip().endswith((".", "!", "?", "。", "！", "？"))


def _mostly_absent(wanted: set[str], passages: list[str]) -> bool:
    """At most half of the question's content terms occur anywhere in the passages
    (Japanese bigrams with hiragana are particles and endings: not counted)."""
    content = {t for t in wanted if not _HIRAGANA.search(t)}
    held = set().union(*(terms(p) for p in passages)) if passages else set()
    return bool(content) and len(content & held) * 2 <= len(content)


def best_quotes(
    question: str, passages: list[str], limit: int = MAX_QUOTES, embedder: Embedder | None = None
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
    if embedder is not None and _mostly_absent(wanted, passages):
        # the question is in another language than the passages (a name or two in common)
        return closest_quotes(embedder, question, passages)
    if not scored:
        first = next((s for s in sentences(passages[0])), "") if passages else ""
        return [(1, first)] if first else []
    best = sorted(scored, reverse=True)[:limit]
    return [(-n, s) for _, n, _, s in sorted(best, key=lambda b: (-b[1], b[2]))]


class ExtractiveChat:
    name = NAME

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder = embedder  # the model that ranked the passages, for other languages

    def stream(self, request: ChatRequest) -> Iterator[str]:
        quotes = best_quotes(request.question, list(request.passages), embedder=self.embedder)
        budget = max(request.max_tokens, 1) * 4  # about four characters a token
        yield INTRO.get(request.language, INTRO["en"])
        for number, sentence in quotes:
            piece = f"\n- {sentence} [{number}]"
            if len(piece) > budget:
                break
            budget -= len(piece)
            yield piece
