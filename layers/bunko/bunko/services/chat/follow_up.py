"""Whether a question continues the conversation, and so the text searched for it.

Searching every question together with the one before it (what Bunko did) carries an old
topic into a new one: "What is the capital of France?" after a question on a warehouse door
found the door code. A question is searched alone unless it shows that it leans on the one
before it:

- it opens the way a follow-up opens ("and …", "what about …", "それで", "那么");
- it points back (it, they, this, that, those, there; それ, その, そこ, 彼; 它, 这个, 那个)
  and is short (FOLLOW_UP_WORDS words, FOLLOW_UP_CJK_CHARS characters), so "which region
  sold most, and who manages it?" — a whole question of its own — stays alone;
- it names almost nothing (ELLIPSIS_WORDS content word, or ELLIPSIS_CJK_CHARS kana and
  kanji): "and in 2023?", "東京は？". A short Japanese question is often whole
  ("梅雨の期間は？"), so the CJK bound is tight.

A follow-up is searched with the questions it continues (a chain of follow-ups reaches back
to the question that set the topic). The same rule serves every model: a configured LLM
also reads the whole conversation when it answers. Measured on the shared evaluation sets,
where every question stands alone (`tests/bench/bench_follow_up.py`: how often a question
would be taken for a follow-up).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from bunko.domain.keyword_analysis import ENGLISH_STOP_WORDS
from bunko.ports.chat import ChatMessage

FOLLOW_UP_WORDS = 8  # a pointing word counts in a question of at most this many words
ELLIPSIS_WORDS = 1  # content words a question may name and still lean on the last one
ELLIPSIS_CJK_CHARS = 3  # kana and kanji of an elliptic CJK question ("東京は？")
FOLLOW_UP_CJK_CHARS = 15  # a pointing word counts in a CJK question of at most this many
CHAIN = 3  # questions a follow-up is searched with, at most (itself included)
QUERY_CHARS = 2000  # of each earlier question

_OPENERS = re.compile(
    r"^\s*¿?(and|but|so|or|also|then|what about|how about|and what|and how|what else"
    r"|und|aber|was ist mit|y|pero|qué hay de|et|mais"
    r"|それで|それでは|それじゃ|では|じゃあ|じゃ|で、|また|さらに|ほかに|他に|あと|"
    r"那么|那|还有|另外|此外|然后)(\b|(?=[^\x00-\x7f])|$)",
    re.IGNORECASE,
)
_POINTERS_LATIN = frozenset(
    [
        "it",
        "its",
        "they",
        "them",
        "their",
        "theirs",
        "this",
        "that",
        "these",
        "those",
        "there",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "former",
        "latter",
        "same",
    ]
)
# (not the この of どこの, "which")
_POINTERS_CJK = re.compile(
    r"それ|その|そこ|そちら|これら|(?<!ど)この|あの|彼|同じ|它|这个|那个|该|其|他们|她"
)
_LATIN_WORD = re.compile(r"[^\W\d_][\w'-]*|\d[\d.,]*", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_QUESTION_WORDS = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "does",
        "did",
        "do",
        "is",
        "are",
        "was",
    ]
)


def continues(message: str) -> bool:
    """Does the question lean on the one before it (see the module's rules)?"""
    text = unicodedata.normalize("NFKC", message).strip()
    if not text:
        return False
    if _OPENERS.match(text) or elliptic(text):
        return True
    cjk = _CJK.findall(text)
    if _mostly_cjk(text, cjk):
        return len(cjk) <= FOLLOW_UP_CJK_CHARS and bool(_POINTERS_CJK.search(text))
    words = [w.lower() for w in _LATIN_WORD.findall(text)]
    return len(words) <= FOLLOW_UP_WORDS and any(w in _POINTERS_LATIN for w in words)


def elliptic(message: str) -> bool:
    """The question names almost nothing of its own ("and in 2023?", "東京は？")."""
    text = unicodedata.normalize("NFKC", message).strip()
    cjk = _CJK.findall(text)
    if _mostly_cjk(text, cjk):
        return len(cjk) <= ELLIPSIS_CJK_CHARS
    words = [w.lower() for w in _LATIN_WORD.findall(text)]
    content = [
        w
        for w in words
        if w not in ENGLISH_STOP_WORDS and w not in _POINTERS_LATIN and w not in _QUESTION_WORDS
    ]
    return len(content) <= ELLIPSIS_WORDS


def _mostly_cjk(text: str, cjk: list[str]) -> bool:
    return len(cjk) * 2 >= len(re.sub(r"\W", "", text))


def quoted_for(message: str, query: str) -> str:
    """What an extractive answer picks sentences by: the question itself, unless it names
    too little of its own; then the text searched (its conversation's questions too)."""
    return query if elliptic(message) else message


def retrieval_query(message: str, history: Sequence[ChatMessage]) -> str:
    """The text searched for `message`: itself, or with the questions it continues."""
    if not continues(message):
        return message
    chain = [message]
    for earlier in reversed([m.content for m in history if m.role == "user" and m.content.strip()]):
        chain.insert(0, earlier[:QUERY_CHARS])
        if len(chain) >= CHAIN or not continues(earlier):
            break
    return "\n".join(chain)
