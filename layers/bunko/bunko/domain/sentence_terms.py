"""A chunk's sentences as the relevance gate's evidence reads them, in the form stored with it.

The evidence (services/search/evidence.py) reads each candidate chunk as its heading terms,
the terms of each other sentence and the languages it is written in. Reading that from the
text costs about a millisecond a chunk (telling its languages most of it), which the first
question over chunks not read before paid for each of its ~40 candidates. So the ingest
pipeline reads it once, when it indexes the chunk, and the metadata store keeps it beside the
chunk's text (`Chunk.sentence_terms`): a question reads it with the chunk it already reads.

The stored form names what it was read from and how: the reading's version (the code and the
language tables that made it) and a CRC-32 of the text. A chunk whose text was changed
without it, or one stored by a version that read differently, does not decode (None): the
gate then reads the text itself, as it always did. So a stored reading is never stale, at
worst absent, and a library indexed before it keeps working.

Layout: a header line `<version> <text crc> <languages, comma-separated>`, the heading terms
on the next line, then one line per sentence; terms are separated by single spaces (an
index term never holds white space: domain/keyword_analysis.py).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass


@dataclass(frozen=True)
class SentenceTerms:
    headings: frozenset[str]  # the terms of its heading lines: held by every sentence
    sentences: tuple[frozenset[str], ...]  # the terms of each other sentence, in order
    languages: tuple[str, ...]  # the languages it is written in


def text_mark(text: str) -> str:
    """What a stored reading names of the text it was read from."""
    return f"{zlib.crc32(text.encode('utf-8')):08x}"


def encode_sentence_terms(read: SentenceTerms, text: str, *, version: str) -> str:
    """The stored form of `read`, the reading of `text` by the reader of `version` (a token
    without white space)."""
    lines = [
        f"{version} {text_mark(text)} {','.join(read.languages)}",
        " ".join(sorted(read.headings)),
        *(" ".join(sorted(s)) for s in read.sentences),
    ]
    return "\n".join(lines)


def decode_sentence_terms(stored: str | None, text: str, *, version: str) -> SentenceTerms | None:
    """The reading stored for `text` by the reader of `version`; None when there is none, or
    it was read by another version or from another text."""
    if not stored:
        return None
    header, _, body = stored.partition("\n")
    parts = header.split(" ")
    if len(parts) != 3 or parts[0] != version or parts[1] != text_mark(text):
        return None
    headings, _, rest = body.partition("\n")
    sentences = tuple(frozenset(line.split(" ")) for line in rest.split("\n")) if rest else ()
    return SentenceTerms(
        headings=frozenset(headings.split(" ")) if headings else frozenset(),
        sentences=sentences,
        languages=tuple(parts[2].split(",")) if parts[2] else (),
    )
