"""Sentences of running text, for quoting: where one ends, which lines are headings, and
whether a quote is a whole sentence. Pure functions, no I/O.

    >>> split_sentences("Dr. Smith paid $3.5 million, e.g. for the lamp. It works.")
    ['Dr. Smith paid $3.5 million, e.g. for the lamp.', 'It works.']
    >>> split_sentences("灯台は1871年に建てられた。「修復する。」と彼は言った。")
    ['灯台は1871年に建てられた。', '「修復する。」と彼は言った。']

A sentence ends at . ! ? … before white space, unless the word before a full stop is an
abbreviation (Dr., e.g., U.S.), an initial (W.) or the next word starts in lower case; and at
。！？ anywhere, unless a closing bracket or quote follows that the sentence goes on after
(「…。」と言った). A line break always ends one: join the lines a layout broke first
(domain/reflow.py).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "CONTINUING_WORDS",
    "HEADING_MAX_WIDTH",
    "continues",
    "is_heading",
    "is_item",
    "is_whole",
    "sentence_key",
    "split_sentences",
    "width",
]

# A line this wide or narrower (East Asian wide characters count two) without sentence
# punctuation is a heading or a label, not a statement: "Budget and costs", "第1条（目的）".
HEADING_MAX_WIDTH = 60

CLOSERS = "\"'”’)\\]}」』）】》〉〕"
_TERMINAL = ".!?…。！？．"
# Words whose full stop does not end a sentence (compared lower-cased, without the stop),
# and those that end none only before a number ("No. 5", "Jan. 12"; but "said no. Then").
# fmt: off
ABBREVIATIONS = frozenset([
    "mr", "mrs", "ms", "dr", "prof", "st", "mt", "vs", "cf", "al", "approx", "ca", "dept",
    "univ", "inc", "ltd", "corp", "gen", "gov", "sen", "rep", "lt", "col", "capt", "sgt", "rev",
    "hon", "ave", "blvd"
])
BEFORE_NUMBERS = frozenset([
    "no", "nos", "fig", "figs", "vol", "vols", "pp", "p", "ch", "sec", "art", "jan", "feb",
    "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"
])
# English words a sentence or a title does not end on ("A grant of", "the lantern and").
CONTINUING_WORDS = frozenset([
    "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with", "and", "or",
    "but", "nor", "as", "that", "which", "whose", "than", "into", "onto", "upon", "about",
    "via", "per", "its", "their", "our", "your", "his", "her", "my", "is", "are", "was", "were",
    "be", "been", "has", "have", "had", "will", "would", "can", "could", "shall", "should",
    "may", "might", "must"
])
# fmt: on
# Japanese particles a clause goes on after: a longer line ending in one is cut, not a title
# ("この規程は、予算の執行について"; but "はじめに" is a heading).
_PARTICLE_END = re.compile("[はをがにでともへのて]$")
_LATIN_END = re.compile(rf"[.!?…]+[{re.escape(CLOSERS)}]*(?=\s)")
_CJK_END = re.compile(rf"[。！？．]+(?P<close>[{re.escape(CLOSERS)}]*)")
_WORD_BEFORE = re.compile(r"(\S+)$")
_OPENERS = "「『（(【"
_BULLET = re.compile(r"^\s*(?:[-*•・●■◆▪◦–—]\s|\d{1,3}[.)]\s|\(\d{1,3}\)\s|[①-⑳])")
_KEY_VALUE = re.compile(r"^[^:：]{1,30}[:：]\s*\S")
_WHOLE_END = re.compile(rf"[{re.escape(_TERMINAL)}][{re.escape(CLOSERS)}]*$")


def width(text: str) -> int:
    """Display width: East Asian wide and full-width characters count two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped, in order; every line break ends one."""
    out: list[str] = []
    for line in text.split("\n"):
        out.extend(_split_line(line))
    return out


def _cuts(line: str) -> list[int]:
    """Where the sentences of one line end."""
    return sorted(
        {m.end() for m in _LATIN_END.finditer(line) if _ends_latin(line, m)}
        | {m.end() for m in _CJK_END.finditer(line) if _ends_cjk(line, m)}
    )


def _split_line(line: str) -> list[str]:
    pieces, start = [], 0
    for cut in [*_cuts(line), len(line)]:
        piece = line[start:cut].strip()
        if piece:
            pieces.append(piece)
        start = cut
    return pieces


def _ends_latin(line: str, match: re.Match[str]) -> bool:
    rest = line[match.end() :].lstrip()
    if rest and (rest[0].islower() or rest[0] in ",;:"):
        return False  # "e.g. the lamp", "Yahoo! is", "etc., and"
    if match.group().rstrip(CLOSERS) != ".":
        return True
    found = _WORD_BEFORE.search(line[: match.start()])
    word = found.group(1).lstrip(_OPENERS + CLOSERS) if found else ""
    if not word:
        return True
    if len(word) == 1 and word.isalpha():
        return False  # an initial: "W. Haydon Burns"
    if "." in word and all(len(p) <= 2 and p.isalpha() for p in word.split(".") if p):
        return False  # "U.S.", "e.g.", "a.m.", "Ph.D."
    word = word.lower()
    return word not in ABBREVIATIONS and not (word in BEFORE_NUMBERS and rest[:1].isdigit())


def _ends_cjk(line: str, match: re.Match[str]) -> bool:
    if not match.group("close"):
        return True
    rest = line[match.end() :].lstrip()
    # 「行く。」と言った: the sentence goes on after the quote; 「行く。」「待て。」 does not.
    return not rest or rest[0] in _OPENERS or not _is_cjk(rest[0])


def _is_cjk(char: str) -> bool:
    return unicodedata.east_asian_width(char) in "WF"


def is_heading(line: str) -> bool:
    """A title or label standing alone: a Markdown heading, or a short line with no sentence
    punctuation at its end that is not a list item, a table row or a "key: value" pair."""
    line = line.strip()
    if not line:
        return False
    if line.startswith("#"):
        return True
    if len(line) > HEADING_MAX_WIDTH:  # too wide whatever it ends with (each character counts
        return False  # one at least): telling how a long line ends costs its length squared
    if is_whole(line) or is_item(line) or continues(line):
        return False
    return width(line) <= HEADING_MAX_WIDTH


def continues(line: str) -> bool:
    """Does the line stop where a sentence cannot: after a comma, 、, a word such as "of" or
    "the", or (past a few characters) a Japanese particle?"""
    line = line.rstrip()
    if not line:
        return False
    if line[-1] in ",、，;；":
        return True
    if line[-1].isascii() and line[-1].isalpha():
        return line.rsplit(None, 1)[-1].lower() in CONTINUING_WORDS
    return width(line) > 16 and bool(_PARTICLE_END.search(line))


def is_item(line: str) -> bool:
    """A line that is whole without sentence punctuation: a list item, a table row (cells
    apart by tabs or |) or a "key: value" pair."""
    line = line.strip()
    return bool(
        "\t" in line or line.startswith("|") or _BULLET.match(line) or _KEY_VALUE.match(line)
    )


def is_whole(sentence: str) -> bool:
    """Does the quote end where a sentence ends: at . ! ? … 。！？ (closing quotes and
    brackets allowed after), and not at an abbreviation or initial ("Dr.", "e.g.", "W.")?"""
    sentence = sentence.strip()
    if not _WHOLE_END.search(sentence):
        return False
    # the splitter's own rule, asked as if another sentence followed
    return len(sentence) in _cuts(sentence + " X")


def sentence_key(sentence: str) -> str:
    """The sentence compared for duplicates: NFKC, case-folded, white space removed."""
    return "".join(unicodedata.normalize("NFKC", sentence).casefold().split())
