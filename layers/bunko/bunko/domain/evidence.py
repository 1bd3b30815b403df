"""Which sentence of a source an answer rests on, and where it sits in the source's text.

A source is a whole chunk; a citation should point at the sentence that says it. The
answer's own lines that cite a source ("… $480,000. [2]") name what it took from it: the
source's sentence that shares the most terms with them is the evidence (the question's
terms break ties and stand in when no line cites it). The offline answerer quotes sentences
whole, so its evidence is the very sentence; a model's paraphrase shares most of its words.

Sentences are found in the text as stored, where a PDF's line breaks and hyphenated word
breaks may still sit (domain/reflow joins them when quoting): `locate` matches ignoring
white space and hyphens, and answers offsets into the stored text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bunko.domain.answer_terms import terms
from bunko.domain.quotes import quotable

__all__ = ["Evidence", "cited_lines", "evidence", "evidences", "locate"]

# What `locate` skips on both sides: white space, and the hyphen a line break split a word at.
_SKIPPED = re.compile(r"[\s\-\u00ad]")
QUESTION_WEIGHT = 0.25  # the question's terms count this much beside the citing lines'


@dataclass(frozen=True)
class Evidence:
    text: str  # the sentence, as quoted (line breaks joined)
    start: int  # its offsets into the source's text as stored (Python characters)
    end: int


def locate(sentence: str, text: str) -> tuple[int, int] | None:
    """(start, end) of `sentence` in `text`, ignoring white space and hyphens; None if absent."""
    kept = [i for i, char in enumerate(text) if not _SKIPPED.match(char)]
    squeezed = "".join(text[i] for i in kept)
    wanted = _SKIPPED.sub("", sentence)
    if not wanted:
        return None
    at = squeezed.find(wanted)
    if at < 0:
        return None
    return kept[at], kept[at + len(wanted) - 1] + 1


def cited_lines(answer: str, number: int) -> str:
    """The sentences of `answer` that cite source `number` (as [n], or within [n, m])."""
    mark = re.compile(rf"\[(?:\d+\s*,\s*)*{number}(?:\s*,\s*\d+)*\]")
    # A sentence ends at its punctuation or citation, unless a citation follows ("… 1871. [2]")
    pieces = re.split(r"\n|(?<=[.!?。！？\]])\s+(?!\[)", answer)
    return "\n".join(p for p in pieces if mark.search(p))


def evidences(text: str, answer: str, number: int, question: str) -> list[Evidence]:
    """The sentences of `text` that the answer's lines citing source `number` rest on, one
    a line, in the answer's order (its first is what the answer quotes first), each once;
    the question's best sentence when no line cites it."""
    cited = cited_lines(answer, number)
    found: list[Evidence] = []
    for line in cited.split("\n"):
        best = evidence(text, line, question)
        if best is not None and all(best.start != e.start for e in found):
            found.append(best)
    if not found and (best := evidence(text, cited, question)) is not None:
        found.append(best)  # no line alone says enough: all of them (or the question)
    return found


def evidence(text: str, cited: str, question: str) -> Evidence | None:
    """The sentence of `text` that `cited` (the answer's lines citing it) and the question
    point at; None when it shares no term with either."""
    from_answer, from_question = terms(cited), terms(question)
    best, best_score = None, 0.0
    for quote in quotable([text]):
        held = terms(quote.text)
        # Ties go to the whole sentence, then to the earlier one.
        score = len(held & from_answer) + QUESTION_WEIGHT * len(held & from_question)
        score += 0.01 * quote.whole
        if score > best_score and (span := locate(quote.sources[0], text)) is not None:
            if len(quote.parts) > 1 and (tail := locate(quote.sources[-1], text)) is not None:
                span = (span[0], tail[1])
            best, best_score = Evidence(quote.text, *span), score
    return best if best is not None and best_score >= 0.5 else None
