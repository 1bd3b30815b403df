"""domain/evidence: the sentence of a source an answer rests on, found in the text as stored
(a PDF's line breaks and hyphenated word breaks still in it)."""

from __future__ import annotations

from bunko.chunking import chunk_text
from bunko.domain import Chunk
from bunko.domain.evidence import cited_lines, evidence, locate
from bunko.parsing.document import from_pages

STORED = (
    "Budget and costs\n\nThe total budget was $480,000. A careful exam-\nination found a "
    "grant of\n$120,000 from the Heritage Fund.\n\nNext steps"
)


def test_locate_ignores_line_breaks_and_hyphenated_word_breaks():
    start, end = locate(
        "A careful examination found a grant of $120,000 from the Heritage Fund.", STORED
    )
    assert STORED[start:end].startswith("A careful exam-\nination")
    assert STORED[start:end].endswith("Heritage Fund.")
    assert locate("not in the text", STORED) is None
    assert locate("", STORED) is None


def test_cited_lines_are_the_answers_sentences_that_cite_the_number():
    answer = (
        "Intro.\n- The budget was $480,000. [1]\n- A grant of $120,000 [2, 3] came in.\n- X [12]"
    )
    # a citing piece ends at its citation (what follows it is another sentence's)
    assert cited_lines(answer, 2) == "- A grant of $120,000 [2, 3]"
    assert cited_lines(answer, 3) == "- A grant of $120,000 [2, 3]"
    assert cited_lines(answer, 1) == "- The budget was $480,000. [1]"
    assert cited_lines(answer, 4) == ""


def test_the_evidence_is_the_cited_sentence_else_the_questions():
    found = evidence(STORED, "- The grant was $120,000 [1]", "How much was the grant?")
    assert found is not None and "$120,000" in found.text
    assert "$120,000" in STORED[found.start : found.end]
    # cited by no line: the question's terms find it
    by_question = evidence(STORED, "", "What was the total budget?")
    assert by_question is not None and by_question.text == "The total budget was $480,000."
    # a heading is never the evidence; nothing shared: none
    assert evidence(STORED, "", "gluon chromodynamics") is None


def test_a_chunk_knows_the_page_of_each_of_its_characters():
    parsed = from_pages([(1, "One. " * 30), (2, "Two. " * 30), (5, "Five. " * 10)], "PDF")
    assert parsed.pages == [(0, 149, 1), (151, 300, 2), (302, 361, 5)]
    chunks = chunk_text(parsed.text, chunk_size=200, chunk_overlap=20, pages=parsed.pages)
    first = chunks[0]
    assert (first.page, first.page_breaks) == (1, ((151, 2),))
    stored = Chunk("c", "d", "w", 1, 0, first.content, first.start, first.end, first.page,
                   first.page_breaks)  # fmt: skip
    assert stored.page_at(0) == 1 and stored.page_at(150) == 1 and stored.page_at(151) == 2
    assert stored.page_end == 2
    last = chunks[-1]
    assert last.page_breaks[-1][1] == 5  # a skipped page number is kept
