"""PDF text comes out as paragraphs and whole sentences (issue 31): lines a page wrapped are
joined when the file is parsed, headings and paragraphs stay apart, a hyphenated line break
is mended but a real hyphen is kept, and Japanese lines join without spaces."""

from __future__ import annotations

from bunko.parsing import parse
from tests.fixtures_files import make_pdf, needs_cjk_font
from tests.report_pdf import BODY, HEADING, LIGHTHOUSE_REPORT, TITLE, make_report_pdf


def page_texts(data: bytes) -> dict[int, str]:
    doc = parse(data, filename="report.pdf")
    return {number: doc.text[start:end] for start, end, number in doc.pages}


def test_sentences_broken_over_lines_are_whole_and_headings_stand_alone():
    pages = page_texts(make_report_pdf(LIGHTHOUSE_REPORT))
    assert pages[1] == (
        "Harbor Point Lighthouse\n\nRestoration Report 2024\n\n"
        "This report describes the restoration of the Harbor Point lighthouse between March "
        "and October 2024. It was prepared for the town council and for the Maritime Heritage "
        "Fund."
    )
    assert pages[4] == (
        "Budget and costs\n\n"
        "The total budget for the restoration was $480,000, of which $312,500 was spent on the "
        "lantern and the masonry. A grant of $120,000 came from the Maritime Heritage Fund; "
        "the rest was paid by the town council."
    )


def test_a_hyphenated_line_break_is_mended_and_a_real_hyphen_kept():
    pages = page_texts(make_report_pdf(LIGHTHOUSE_REPORT))
    assert "designed its cast-iron lantern and the well-known spiral stair" in pages[2]
    assert "A careful examination of the stair found no cracks, e.g. in the landings" in pages[3]
    assert "Dr. Margaret Reid surveyed the tower in 1998" in pages[2]


def test_paragraph_gaps_and_headings_in_body_type_stay_apart():
    page = [
        (BODY, "Opening hours"),
        (BODY, "The lighthouse is open every day from ten in the morning until five in the"),
        (BODY, "afternoon, except in January."),
        (BODY, ""),
        (BODY, "Tickets cost eight pounds for adults and four pounds for children under"),
        (BODY, "sixteen; the museum is free."),
        (BODY, "Contact: keeper@harborpoint.example"),
    ]
    text = page_texts(make_report_pdf([page]))[1]
    assert text.split("\n") == [
        "Opening hours",
        "The lighthouse is open every day from ten in the morning until five in the "
        "afternoon, except in January.",
        "",
        "Tickets cost eight pounds for adults and four pounds for children under sixteen; "
        "the museum is free.",
        "Contact: keeper@harborpoint.example",
    ]


def test_type_sizes_alone_separate_a_title_from_its_text():
    page = [
        (TITLE, "Annual Report"),
        (HEADING, "Lighthouse Trust"),
        (BODY, "The trust looked after three lighthouses in 2024 and opened one of them to"),
        (BODY, "visitors."),
    ]
    assert page_texts(make_report_pdf([page]))[1].split("\n\n") == [
        "Annual Report",
        "Lighthouse Trust",
        "The trust looked after three lighthouses in 2024 and opened one of them to visitors.",
    ]


def test_pdfs_wrapped_by_their_maker_read_as_running_text():
    sentence = " ".join(["The keeper trimmed the wick and polished the lens every night."] * 6)
    text = parse(make_pdf([sentence]), filename="log.pdf").text
    assert text == sentence


@needs_cjk_font
def test_japanese_lines_join_without_spaces():
    page = [
        (HEADING, "第5条（補助金）"),
        (BODY, "海事遺産基金からの補助金は12万ドルとし、残額は町が負担する。灯台は"),
        (BODY, "1871年にトーマス・スティーブンソンによって建てられた。"),
    ]
    assert page_texts(make_report_pdf([page]))[1] == (
        "第5条（補助金）\n\n"
        "海事遺産基金からの補助金は12万ドルとし、残額は町が負担する。灯台は"
        "1871年にトーマス・スティーブンソンによって建てられた。"
    )
