"""bunko.graphemes: the chunker's boundary answers are exactly those of regex's \\X."""

from __future__ import annotations

import random

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bunko.graphemes import PLAIN, Boundaries

# Characters that every kind of grapheme rule looks at, mixed with plain text.
_ALPHABET = list(
    "ab \r\n\t.文庫あカ、。\u0301\u3099\uff9e\u200d\u200c👍🏽🇯🇵©\ufe0fक्षि\u0600ᄀ가ᅡᆨ"
    "\u0e33\u00ad\u3000—’"
)


def _truth(text: str) -> set[int]:
    return {0} | {m.end() for m in regex.finditer(r"\X", text)}


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_ALPHABET), max_size=80).map("".join), st.randoms())
def test_answers_match_x_in_any_order(text: str, rng: random.Random):
    truth = _truth(text)
    order = list(range(len(text) + 1))
    rng.shuffle(order)
    boundaries = Boundaries(text)
    assert [at in boundaries for at in order] == [at in truth for at in order]


def test_long_clusters_and_long_texts():
    text = ("क्षत्रिय " * 50 + "a" + "\u0301" * 300 + "👨\u200d👩\u200d👧" * 40 + "🇯🇵" * 30) * 3
    truth = _truth(text)
    boundaries = Boundaries(text)
    assert [at for at in range(len(text) + 1) if at in boundaries] == sorted(truth)


def test_no_plain_character_can_join_a_neighbour():
    joiner = regex.compile(
        r"[\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=SpacingMark}\p{GCB=Prepend}\p{GCB=CR}"
        r"\p{GCB=L}\p{GCB=V}\p{GCB=T}\p{GCB=LV}\p{GCB=LVT}\p{GCB=Regional_Indicator}"
        r"\p{InCB=Linker}\p{InCB=Consonant}\p{InCB=Extend}]"
    )
    plain = regex.compile(rf"[{PLAIN}]")
    chars = [chr(c) for c in range(0x10000) if plain.match(chr(c))]
    assert len(chars) > 29_000
    assert [hex(ord(c)) for c in chars if joiner.match(c)] == []
