"""Join the lines a page layout broke back into the sentences they were: PDF text when it is
extracted, and passages stored from older uploads when they are quoted. Pure functions.

    >>> reflow("The grant was\\nworth $120,000 for an exam-\\nple.\\n\\nBudget")
    'The grant was worth $120,000 for an example.\\n\\nBudget'

Blank lines (paragraph breaks) stay. Within a paragraph a line runs on into the next when

- the next line starts in lower case, or this one ends with a comma, an open bracket, 、, a
  word a sentence cannot end on ("of", "the", "and") or a Japanese particle (は, を, に…):
  it is the middle of a sentence;
- or this line is *full*: at least FULL_SHARE of the paragraph's widest line, in a paragraph
  whose widest line is at least MIN_WRAP_WIDTH wide (body text, not a title block).

Never across a heading (a short line that is not full: "Budget and costs"), never into a
list item, table row, "key: value" line or Markdown heading, never after a colon, and not
inside a Markdown code fence. Lines join with a space, or with nothing between
CJK characters (Japanese breaks lines inside words).

A hyphen at a line's end between two letters is a word broken in two ("exam-\\nple" →
"example", "follow-\\ning" → "following"), unless the document writes the word with a hyphen
elsewhere, or the halves look like a compound: "well-\\nknown", "follow-\\nup", "X-\\nray",
"long-\\nterm", "Anglo-\\nSaxon" keep their hyphen. A soft hyphen (U+00AD) always goes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from bunko.domain.sentences import HEADING_MAX_WIDTH, continues, is_heading, is_whole, width

__all__ = ["FULL_SHARE", "MIN_WRAP_WIDTH", "Vocabulary", "reflow"]

FULL_SHARE = 0.7
MIN_WRAP_WIDTH = 40
_HYPHENS = "-\u2010\u00ad"  # hyphen-minus, hyphen, soft hyphen
# What starts a line of its own: a list item, table row, quote, Markdown heading, article
# (第3条), or a "key: value" pair.
_OWN_LINE = re.compile(
    r"^(?:[-*+>]\s|[•・●■◆▪◦#|]|\d{1,3}[.)]\s|\(\d{1,3}\)|[①-⑳]|第\S{1,4}条|[^\s:：]{1,30}[:：]\s)"
)
_LETTERS_END = re.compile(r"([^\W\d_]+)[" + _HYPHENS + r"]$")
_LETTERS_START = re.compile(r"^[^\W\d_]+")
_WORDS = re.compile(r"[^\W\d_]+")
_COMPOUNDS = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)+")
_RUN_ON_MARKS = ",(（、，[「『"
# Endings a hyphenation program breaks before ("follow-ing", "state-ment"): never a compound.
# fmt: off
_SUFFIXES = frozenset([
    "ing", "ings", "ly", "ment", "ments", "ness", "ity", "ities", "ic", "ics", "ical", "er",
    "ers", "est", "age", "ed", "tion", "tions", "sion", "sions", "ation", "ations", "able",
    "ible", "ance", "ence", "ful", "less", "ous", "ive", "ize", "ise", "ized", "ised", "izing",
    "ism", "ist", "ists", "al", "ally", "ure", "ures", "ture", "tures", "ter", "ters", "ty",
    "ple", "ples", "ble", "bles", "dle", "tle", "cal", "ern"
])
# fmt: on
# Halves of hyphenated compounds: a line break after "well-" or before "-based" keeps the
# hyphen. (Not syllables that start many words: "pro", "co", "ex".)
# fmt: off
_COMPOUND_FIRST = frozenset([
    "well", "ill", "self", "non", "semi", "multi", "anti", "post", "vice", "quasi", "all",
    "half", "full", "cross", "far", "near", "long", "short", "high", "low", "open", "real",
    "state", "cost", "follow", "one", "two", "three", "four", "five", "six", "seven", "eight",
    "nine", "ten", "first", "second", "third", "world", "user", "end", "large", "small",
    "middle"
])
_COMPOUND_LAST = frozenset([
    "based", "free", "related", "specific", "level", "scale", "driven", "oriented", "friendly",
    "aware", "made", "born", "sized", "quality"
])
# fmt: on


class Vocabulary:
    """The words a document writes whole, and the ones it writes with a hyphen: what decides
    whether a hyphen at a line's end belongs to the word."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.words: set[str] = set()
        self.compounds: set[str] = set()
        for text in texts:
            # words split at a line break are not evidence: only those within a line count
            for line in text.split("\n"):
                line = line.rstrip(_HYPHENS + " ")
                self.words.update(w.lower() for w in _WORDS.findall(line))
                self.compounds.update(c.lower() for c in _COMPOUNDS.findall(line))

    def keeps_hyphen(self, left: str, right: str, hyphen: str) -> bool:
        """Is "left-" + line break + "right" a hyphenated word (else a word broken in two)?"""
        if hyphen == "\u00ad":
            return False  # a soft hyphen only ever marks a break
        joined, compound = (left + right).lower(), f"{left}-{right}".lower()
        if compound in self.compounds and joined not in self.words:
            return True
        if joined in self.words:
            return False
        if right[0].isupper() and not right.isupper():
            return True  # a name starts after it: "Anglo-Saxon", "X-Ray"
        if right.lower() in _SUFFIXES:
            return False
        # Hyphenation leaves at least two letters before the break and three after (TeX's
        # defaults): "e-mail", "follow-up", "X-ray" are words.
        if len(left) < 2 or len(right) < 3:
            return True
        return left.lower() in _COMPOUND_FIRST or right.lower() in _COMPOUND_LAST


def reflow(text: str, vocabulary: Vocabulary | None = None) -> str:
    """`text` with the lines a layout broke joined (see the module's rules); `vocabulary`
    (the whole document's) decides hyphens, else `text` itself does."""
    vocabulary = vocabulary or Vocabulary([text])
    blocks = re.split(r"\n[^\S\n]*\n", text)
    return "\n\n".join(_reflow_block(block, vocabulary) for block in blocks)


def _reflow_block(block: str, vocabulary: Vocabulary) -> str:
    lines = [line.rstrip() for line in block.split("\n") if line.strip()]
    if len(lines) < 2 or any(line.lstrip().startswith("```") for line in lines):
        return "\n".join(lines)  # one line, or code: as it is
    widest = max(width(line.strip()) for line in lines)
    out = [lines[0]]
    for line in lines[1:]:
        previous, line = out[-1], line.strip()
        if _runs_on(previous.strip(), line, widest):
            out[-1] = _join(previous, line, vocabulary)
        else:
            out.append(line)
    return "\n".join(out)


def _runs_on(line: str, following: str, widest: int) -> bool:
    if _OWN_LINE.match(following) or line.startswith("#") or "\t" in line + following:
        return False
    if line[-1] in ":：":
        return False  # what follows a colon is a list, a table or code
    if following[0].islower() or line[-1] in _RUN_ON_MARKS or line[-1] in _HYPHENS:
        return True
    if continues(line):
        return True  # "A grant of", "…について"
    ends = is_whole(line)
    if ends and is_heading(following):
        return False  # "... in 1950." then "Budget and costs"
    if not ends and width(line) > HEADING_MAX_WIDTH:
        return True  # too long for a title, and the sentence has not ended
    return widest >= MIN_WRAP_WIDTH and width(line) >= FULL_SHARE * widest


def _join(line: str, following: str, vocabulary: Vocabulary) -> str:
    left, right = _LETTERS_END.search(line), _LETTERS_START.match(following)
    if left and right:  # a hyphen between letters
        if vocabulary.keeps_hyphen(left.group(1), right.group(), line[-1]):
            return line[:-1] + "-" + following
        return line[:-1] + following
    if line[-1] in _HYPHENS and not line[-2:-1].isspace():
        return line + following  # "2024-" + "2025"
    if _wide(line[-1]) or _wide(following[0]):
        return line + following
    return f"{line} {following}"


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in "WF"
