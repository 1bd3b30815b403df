"""What a search hit's passage shows as matched: the words keyword search matched it by,
whole, as written. Pure functions, no I/O.

The passage and the query are analysed as the keyword index analyses them
(domain/keyword_analysis): a stem marks every word it came from ("onboard" marks
"Onboarding" and "onboarded", never the "i" inside it), CJK bigrams mark the characters
they were cut from, overlapping ones joined into one mark (検索 and 索エ over 検索エンジン
mark 検索エ), and the particles a Japanese run begins or ends with are left unmarked.

Words that match nearly every passage say nothing about why this one was found: English
stop words and question words ("to", "what", "can"), single letters ("I") and bigrams of
hiragana alone (です, とは) are not marked, unless the query has nothing else.
"""

from __future__ import annotations

import re

from bunko.domain.keyword_analysis import ENGLISH_STOP_WORDS, is_cjk_term, term_spans

__all__ = ["matched_spans"]

# What a question or a sentence is made of besides what it is about: never marked.
# fmt: off
UNMARKED_WORDS = ENGLISH_STOP_WORDS | frozenset([
    "i", "me", "my", "we", "our", "us", "you", "your", "he", "him", "his", "she", "her", "its",
    "them", "what", "which", "who", "whom", "whose", "how", "when", "where", "why", "do",
    "does", "did", "can", "could", "should", "would", "may", "might", "must", "shall", "has",
    "have", "had", "were", "been", "being", "am", "so", "than", "too", "very", "about",
    "from", "any", "all", "some", "here", "there", "get", "got", "please", "tell",
])
# fmt: on
_HIRAGANA_ONLY = re.compile("^[\u3041-\u309f]+$")
# Particles a marked Japanese run does not begin or end with: 休暇とは marks 休暇.
_PARTICLES = frozenset("はがをにでとのへもやかね")


def _wanted(query: str) -> set[str]:
    """The query's terms worth marking (all of them when none is)."""
    every: set[str] = set()
    kept: set[str] = set()
    for term, start, end in term_spans(query):
        every.add(term)
        word = query[start:end]
        if is_cjk_term(term):
            if not _HIRAGANA_ONLY.match(term):
                kept.add(term)
        elif len(term) > 1 and word.lower() not in UNMARKED_WORDS:
            kept.add(term)
    return kept or every


def matched_spans(text: str, query: str) -> list[tuple[int, int]]:
    """(start, end) of each run of `text` to mark for `query`, in order, not overlapping;
    offsets in Python characters (code points) of `text` as stored."""
    wanted = _wanted(query)
    if not wanted:
        return []
    hiragana_only = all(_HIRAGANA_ONLY.match(t) for t in wanted)
    singles = {t for t in wanted if len(t) == 1 and is_cjk_term(t)}  # 猫 matches 黒猫
    spans: list[tuple[int, int, bool]] = []  # (start, end, says what the run is about)
    for term, start, end in term_spans(text):
        if term in wanted:
            spans.append((start, end, hiragana_only or not _HIRAGANA_ONLY.match(term)))
        elif singles and is_cjk_term(term):
            # a bigram holding a wanted single character marks that character
            for offset, char in enumerate(term):
                if char in singles and (at := _char_at(text, start, end, offset)):
                    spans.append((*at, True))
    return [_trimmed(text, s, e) for s, e in _joined(spans)]


def _char_at(text: str, start: int, end: int, offset: int) -> tuple[int, int] | None:
    """The `offset`-th character of text[start:end] when the span is that many characters
    (a bigram NFKC left as written), else None."""
    if end - start != 2:
        return None
    return start + offset, start + offset + 1


def _joined(spans: list[tuple[int, int, bool]]) -> list[tuple[int, int]]:
    """Overlapping or touching spans as one; a run of hiragana bigrams alone is dropped."""
    out: list[tuple[int, int]] = []
    run: list[int] | None = None  # [start, end, says something]
    for start, end, content in sorted(spans):
        if run is not None and start <= run[1]:
            run[1] = max(run[1], end)
            run[2] = run[2] or content
            continue
        if run is not None and run[2]:
            out.append((run[0], run[1]))
        run = [start, end, content]
    if run is not None and run[2]:
        out.append((run[0], run[1]))
    return out


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """Without the particles a Japanese run begins or ends with (it keeps one character)."""
    while end - start > 1 and text[end - 1] in _PARTICLES:
        end -= 1
    while end - start > 1 and text[start] in _PARTICLES:
        start += 1
    return start, end
