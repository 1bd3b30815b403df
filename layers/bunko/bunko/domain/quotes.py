"""What an extractive answer may quote from numbered passages: whole sentences, each once,
with the heading they sit under. Pure functions, no I/O.

- Lines a page layout broke are joined first (domain/reflow: text stored from older PDF
  uploads still has the breaks), then split into sentences (domain/sentences).
- A quote reads in plain words (domain/readable): no Markdown syntax, no boilerplate line,
  flattened JSON and table rows as sentences, no header row; a short list item is one
  quote. `Quote.sources` keeps each part as written, for finding it in the passage.
- A heading (a short line without sentence punctuation, standing alone) is never a quote:
  it labels the first quote under it instead, so the quote can say where it comes from.
- A sentence that opens by pointing back at the one before it ("This is called …",
  "これをテンポという。", "He is also …") is quoted together with that one: alone, it says
  too little. One that points back with a pronoun only is marked (`pronoun_tail`): the
  answerer drops it when it says nothing about the question ("It has a museum now.").
- A piece that is not a whole sentence — a chunk cut mid-sentence at either end — is marked
  so; a sentence already seen (chunks overlap) or held whole by a longer quote is dropped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bunko.domain.readable import is_boilerplate, is_list_item, plain_markdown, structured_lines
from bunko.domain.reflow import reflow
from bunko.domain.sentences import (
    is_heading,
    is_item,
    is_whole,
    sentence_key,
    split_sentences,
)

__all__ = ["Quote", "labelled", "quotable"]

# A sentence that opens by pointing back at the one before it: with a demonstrative ("This is
# called …", "これを…という") it completes that one; with a pronoun ("It has …", "He is …")
# it may be a fact of its own.
DEMONSTRATIVE = re.compile(
    r"^(?:(?:this|that|these|those|such|thus|hence|therefore|the latter|the former)\b|"
    # an example, a consequence or a manner of what the sentence before says ("For instance
    # P ⊆ NP …" after "… are suspected to be unequal."; "As such, it made …")
    r"(?:as such|for (?:example|instance)|in (?:this|that|the same) (?:way|case|manner|sense)|"
    r"because of (?:this|that))\b|as a result,|"
    r"これ|それ|あれ|この|その|あの|こう|そう|同(?=[\u4e00-\u9fff])|後者|前者|"
    r"したがって|従って|つまり|すなわち|例えば|たとえば|这|那|其|因此|所以|例如)",
    re.IGNORECASE,
)
PRONOUN = re.compile(r"^(?:(?:it|its|they|their|them|he|his|she|her)\b|彼|它|他|她)", re.I)
# What a passage's first piece starts with when the chunk began inside a sentence.
_CONTINUING = ".,;:)]}）」』、。，"
MAX_ITEM_CHARS = 400  # a list item up to this long is one quote


@dataclass(frozen=True)
class Quote:
    number: int  # the passage's citation number, from 1
    position: int  # the sentence's place in its passage
    parts: tuple[str, ...]  # a sentence, and the next one when that one points back to it
    whole: bool  # whole sentences (or a list item, a table row): not a piece of one
    heading: str = ""  # the heading it sits under in its passage
    pronoun_tail: bool = False  # the second part points back with a pronoun only
    written: tuple[str, ...] = ()  # each part as the passage writes it (Markdown, JSON)

    def head(self) -> Quote:
        """The quote without its second part."""
        return Quote(
            self.number,
            self.position,
            self.parts[:1],
            self.whole,
            self.heading,
            written=self.sources[:1],
        )

    @property
    def sources(self) -> tuple[str, ...]:
        """Each part as written in the passage: what `evidence.locate` finds there."""
        return self.written or self.parts

    @property
    def text(self) -> str:
        out = self.parts[0]
        for part in self.parts[1:]:
            out += part if _wide(out[-1]) else " " + part
        return out


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in "WF"


def _pieces(passage: str) -> Iterator[tuple[str, str, bool, bool]]:
    """(text as quoted, text as written, is a heading, is whole) of each sentence of a
    passage, in order: Markdown's syntax gone, structured rows in words, boilerplate out
    (domain/readable)."""
    lines = passage.split("\n")
    rows = structured_lines(lines)
    first = True
    block: list[str] = []
    for i, line in enumerate([*lines, ""]):
        if i < len(lines) and i not in rows:
            block.append(line)
            continue
        for text, raw, title, whole in _prose("\n".join(block)):
            if first and not title and (raw[0].islower() or raw[0] in _CONTINUING):
                whole = False
            first = False
            yield text, raw, title, whole
        block = []
        if i < len(lines):
            first = False
            if (shown := rows[i]) is not None:
                yield shown, line.strip(), False, True


def _prose(text: str) -> Iterator[tuple[str, str, bool, bool]]:
    """The sentences of running text (headings, list items) as `_pieces` gives them."""
    for line in reflow(text).split("\n"):
        # a list item is quoted whole: its sentences need its label ("SEV1: …")
        short_item = is_list_item(line) and len(line) <= MAX_ITEM_CHARS
        found = [line.strip()] if short_item and line.strip() else split_sentences(line)
        if len(found) == 1 and is_heading(found[0]):
            if shown := plain_markdown(found[0].lstrip("#").strip()):
                yield shown, found[0], True, False
            continue
        for piece in found:
            shown = plain_markdown(piece)
            if not any(c.isalnum() for c in shown) or is_boilerplate(shown):
                continue
            whole = (
                is_whole(piece)
                or (shown != piece and is_whole(shown))
                or (len(found) == 1 and is_item(piece))
            )
            yield shown, piece, False, whole


def quotable(passages: Sequence[str]) -> list[Quote]:
    """Every sentence of the passages once (see the module's rules), in passage order."""
    found: dict[str, Quote] = {}
    for number, passage in enumerate(passages, start=1):
        heading, run = "", []
        for position, (text, raw, title, whole) in enumerate(_pieces(passage)):
            if title:
                heading = text
            else:
                run.append(Quote(number, position, (text,), whole, heading, written=(raw,)))
        for i, quote in enumerate(run):
            after = run[i + 1] if i + 1 < len(run) else None
            if after is not None and after.whole and after.position == quote.position + 1:
                tail = after.parts[0]
                if DEMONSTRATIVE.match(tail) or PRONOUN.match(tail):
                    parts = (*quote.parts, tail)
                    pronoun = not DEMONSTRATIVE.match(tail)
                    written = (*quote.sources, *after.sources)
                    quote = Quote(
                        number,
                        quote.position,
                        parts,
                        quote.whole,
                        quote.heading,
                        pronoun,
                        written,
                    )
            found.setdefault(sentence_key(quote.text), quote)
    keys = list(found)
    return [q for k, q in found.items() if not any(k != o and k in o for o in keys)]


def labelled(quotes: Sequence[Quote]) -> list[tuple[int, str, str]]:
    """(citation number, text, label) of each quote: the label of the first quote under a
    heading is that heading (say, "Budget and costs"), unless the quote names it; else ""."""
    shown: set[str] = set()
    out: list[tuple[int, str, str]] = []
    for quote in quotes:
        label = quote.heading
        if label in shown or sentence_key(label) in sentence_key(quote.text):
            label = ""
        shown.add(label)
        out.append((quote.number, quote.text, label))
    return out
