"""bunko.chunking: sentence-aware chunks for English and Japanese, with exact offsets."""

from __future__ import annotations

import unicodedata
from itertools import pairwise

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bunko.chunking import TextChunk, chunk_text
from bunko.domain.ingest_options import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE
from bunko.errors import ValidationError
from bunko.parsing import parse
from tests.fixtures_files import make_pdf

EN_SENTENCES = [f"Sentence number {i} talks about the library and its shelves." for i in range(40)]
JA_SENTENCES = [f"これは{i}番目の文で、図書館の本棚について説明します。" for i in range(40)]


def boundaries(text: str) -> set[int]:
    """Grapheme cluster boundaries (UAX #29, via the regex module's \\X)."""
    return {0} | {m.end() for m in regex.finditer(r"\X", text)}


def check_invariants(text: str, chunks: list[TextChunk], size: int, overlap: int) -> None:
    cuts = boundaries(text)
    longest_cluster = max((len(m.group()) for m in regex.finditer(r"\X", text)), default=0)
    covered = [False] * len(text)
    for chunk in chunks:
        assert chunk.content == text[chunk.start : chunk.end]
        assert 0 < len(chunk.content) <= size
        assert not chunk.content[-1].isspace()
        assert not regex.match(r"\X", chunk.content).group().isspace()
        if longest_cluster <= size:
            assert chunk.start in cuts and chunk.end in cuts, chunk
        for i in range(chunk.start, chunk.end):
            covered[i] = True
    assert all(covered[i] or ch.isspace() for i, ch in enumerate(text))
    for before, after in pairwise(chunks):
        assert after.start > before.start and after.end > before.end
        assert before.end - after.start <= overlap


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (-5, 0), (100, -1), (100, 100), (100, 150)])
def test_invalid_sizes_are_validation_errors(size, overlap):
    with pytest.raises(ValidationError):
        chunk_text("text", chunk_size=size, chunk_overlap=overlap)


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t\u3000\n"])
def test_empty_or_blank_text_gives_no_chunks(text):
    assert chunk_text(text, chunk_size=100, chunk_overlap=10) == []


def test_short_text_is_one_trimmed_chunk():
    text = "\n  Hello world.  \n"
    assert chunk_text(text, chunk_size=100, chunk_overlap=10) == [TextChunk("Hello world.", 3, 15)]


def test_defaults_from_config_work():
    text = " ".join(EN_SENTENCES * 5)
    chunks = chunk_text(text, chunk_size=DEFAULT_CHUNK_SIZE, chunk_overlap=DEFAULT_CHUNK_OVERLAP)
    check_invariants(text, chunks, DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP)
    assert len(chunks) > 5


@pytest.mark.parametrize("sentences", [EN_SENTENCES, JA_SENTENCES])
def test_chunks_end_at_sentence_ends_and_overlap_by_whole_sentences(sentences):
    sep = " " if sentences is EN_SENTENCES else ""
    text = sep.join(sentences)
    chunks = chunk_text(text, chunk_size=300, chunk_overlap=120)
    check_invariants(text, chunks, 300, 120)
    for chunk in chunks:
        assert chunk.content.endswith((".", "。"))
        assert any(chunk.content.startswith(s) for s in sentences)
    for before, after in pairwise(chunks):
        shared = text[after.start : before.end]
        assert shared, "sentences shorter than the overlap are carried over"
        assert shared.endswith((".", "。")) and any(shared.startswith(s) for s in sentences)


def test_paragraph_break_is_a_boundary_without_punctuation():
    text = "first paragraph without a stop\n\nsecond paragraph without one"
    chunks = chunk_text(text, chunk_size=35, chunk_overlap=0)
    assert [c.content for c in chunks] == [
        "first paragraph without a stop",
        "second paragraph without one",
    ]


def test_japanese_closing_brackets_stay_with_their_sentence():
    text = "彼は「本当ですか？」と聞いた。私は『はい。』と答えた。" * 6
    chunks = chunk_text(text, chunk_size=40, chunk_overlap=0)
    check_invariants(text, chunks, 40, 0)
    for chunk in chunks:
        assert chunk.content[0] not in "」』）"
        assert chunk.content[-1] in "。」』"


def test_decimal_points_and_domains_are_not_sentence_ends():
    text = "Pi is 3.14159 and the site is example.com today. Next one."
    chunks = chunk_text(text, chunk_size=48, chunk_overlap=0)
    assert chunks[0].content == "Pi is 3.14159 and the site is example.com today."


def test_japanese_without_whitespace_or_punctuation():
    text = "あいうえおかきくけこさしすせそ" * 200
    chunks = chunk_text(text, chunk_size=500, chunk_overlap=100)
    check_invariants(text, chunks, 500, 100)
    assert all(len(c.content) >= 400 for c in chunks[:-1]), "chunks are packed nearly full"
    for before, after in pairwise(chunks):
        assert 0 < before.end - after.start <= 100


def test_one_huge_english_sentence_splits_between_words():
    words = [f"word{i}" for i in range(2000)]
    text = " ".join(words)
    chunks = chunk_text(text, chunk_size=200, chunk_overlap=50)
    check_invariants(text, chunks, 200, 50)
    for chunk in chunks:
        assert chunk.start == 0 or text[chunk.start - 1] == " "
        assert chunk.end == len(text) or text[chunk.end] == " "


def test_long_japanese_sentence_prefers_commas():
    text = "、".join(["図書館の本棚に並ぶ古い本の数々"] * 60) + "。"
    chunks = chunk_text(text, chunk_size=100, chunk_overlap=20)
    check_invariants(text, chunks, 100, 20)
    for chunk in chunks[:-1]:
        assert chunk.content.endswith("、")


def test_overlap_falls_back_to_characters_for_long_sentences():
    text = " ".join(
        f"This long sentence number {i} has many words in it to exceed the overlap."
        for i in range(10)
    )
    chunks = chunk_text(text, chunk_size=170, chunk_overlap=30)
    check_invariants(text, chunks, 170, 30)
    for before, after in pairwise(chunks):
        assert 0 < before.end - after.start <= 30
        assert text[after.start - 1] == " ", "a character overlap still starts at a word"


def test_zero_overlap_gives_disjoint_chunks():
    text = " ".join(EN_SENTENCES)
    chunks = chunk_text(text, chunk_size=150, chunk_overlap=0)
    check_invariants(text, chunks, 150, 0)
    assert all(a.end <= b.start for a, b in pairwise(chunks))


@pytest.mark.parametrize(
    "unit",
    [
        "e\u0301",  # e + combining acute
        "か\u3099",  # decomposed が
        "ﾊﾟ",  # half-width katakana + half-width semi-voiced mark
        "👨\u200d👩\u200d👧",  # emoji ZWJ sequence
        "👍🏽",  # emoji + skin tone modifier
        "🇯🇵",  # regional-indicator flag
        "क्षि",  # Devanagari conjunct
    ],
)
def test_grapheme_clusters_are_never_cut(unit):
    text = unit * 300
    for size, overlap in [(10, 3), (37, 11), (100, 0)]:
        chunks = chunk_text(text, chunk_size=size, chunk_overlap=overlap)
        check_invariants(text, chunks, size, overlap)
        for chunk in chunks:
            assert not unicodedata.combining(chunk.content[0])
            assert (chunk.start - 0) % len(unit) == 0 and chunk.end % len(unit) == 0


def test_combining_mark_after_a_space_stays_with_it():
    text = "word \u0301accent " * 40
    chunks = chunk_text(text, chunk_size=25, chunk_overlap=5)
    check_invariants(text, chunks, 25, 5)


def test_a_cluster_longer_than_a_chunk_is_cut_but_bounded():
    text = "a" + "\u0301" * 50 + " tail"
    chunks = chunk_text(text, chunk_size=20, chunk_overlap=5)
    assert all(len(c.content) <= 20 for c in chunks)
    assert "".join(c.content for c in chunks if c.start < 51).startswith("a\u0301")
    assert chunks[-1].content.endswith(" tail")


def test_pages_from_a_parsed_pdf():
    pages = [" ".join(EN_SENTENCES[i * 8 : i * 8 + 8]) for i in range(3)]
    doc = parse(make_pdf(pages), filename="p.pdf")
    chunks = chunk_text(doc.text, chunk_size=200, chunk_overlap=50, pages=doc.pages)
    for chunk in chunks:
        *_, number = next(p for p in doc.pages if p[0] <= chunk.start < p[1])
        assert chunk.page == number
    assert {c.page for c in chunks} == {1, 2, 3}


def test_page_of_an_offset_between_pages_is_the_page_above():
    text = "one\n\n\n\ntwo"
    chunks = chunk_text(text, chunk_size=3, chunk_overlap=0, pages=[(0, 3, 4), (7, 10, 9)])
    assert [(c.content, c.page) for c in chunks] == [("one", 4), ("two", 9)]
    assert chunk_text(text, chunk_size=3, chunk_overlap=0)[0].page is None


_PUNCTUATION = [
    " ",
    " ",
    "\n",
    "\n\n",
    ".",
    "!",
    "?",
    ",",
    "。",
    "、",
    "「",
    "」",
    "！",
    "\u3000",
    "\t",
]
_MARKS_AND_EMOJI = ["\u0301", "\u3099", "\u200d", "👍", "🏽", "🇯", "🇵"]
_ALPHABET = st.sampled_from([*"abcxyz ABC", *"文庫図書館あいう", *_PUNCTUATION, *_MARKS_AND_EMOJI])


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(_ALPHABET, max_size=400).map("".join),
    size=st.integers(1, 120),
    overlap_ratio=st.floats(0, 0.95),
)
def test_chunk_invariants_hold_for_any_text(text, size, overlap_ratio):
    overlap = min(int(size * overlap_ratio), size - 1)
    chunks = chunk_text(text, chunk_size=size, chunk_overlap=overlap)
    if text.strip():
        assert chunks
    check_invariants(text, chunks, size, overlap)


@settings(max_examples=100, deadline=None)
@given(
    parts=st.lists(st.text(min_size=1, max_size=60), min_size=1, max_size=6),
    size=st.integers(5, 80),
)
def test_pages_are_those_of_the_chunk_start(parts, size):
    text, spans, offset = "", [], 0
    for number, part in enumerate(parts, 1):
        if text:
            text += "\n\n"
            offset += 2
        text += part
        spans.append((offset, offset + len(part), number))
        offset += len(part)
    for chunk in chunk_text(text, chunk_size=size, chunk_overlap=size // 4, pages=spans):
        expected = max((n for s, _, n in spans if s <= chunk.start), default=1)
        assert chunk.page == expected
