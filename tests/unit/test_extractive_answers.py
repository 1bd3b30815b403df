"""The offline answerer's choice of quotes (issue 31): whole sentences that answer the question,
never a bare heading, never a sentence cut at a PDF line break, never the same sentence twice,
and the evaluation's counts of the answers that fail at this."""

from __future__ import annotations

from bunko.adapters.extractive_chat import INTRO, ExtractiveChat, best_quotes
from bunko.domain.quotes import quotable
from bunko.domain.sentences import is_heading, is_whole, sentence_key
from bunko.evaluation.answers import has_cut_sentence, headings_only, quotes_of
from bunko.ports.chat import ChatRequest

# Text stored from a PDF upload before the parser joined lines: every page line is a line.
PAGE_1 = (
    "Harbor Point Lighthouse\n"
    "Restoration Report 2024\n"
    "The lighthouse was built in 1871 by the engineer Thomas Stevenson, who designed its\n"
    "cast-iron lantern and the spiral stair that visitors climb today. The tower is 31 metres\n"
    "tall."
)
PAGE_4 = (
    "Budget and costs\n"
    "The total budget for the restoration was $480,000, of which $312,500 was spent on the\n"
    "lantern and the masonry. A grant of\n"
    "$120,000 came from the Maritime Heritage Fund; the rest was paid by the town council."
)
# the next chunk overlaps the last one by a sentence, as the chunker makes them
PAGE_4_NEXT = (
    "$120,000 came from the Maritime Heritage Fund; the rest was paid by the town council.\n"
    "Next steps\n"
    "The lighthouse reopens to visitors in May 2025."
)
REPORT = [PAGE_1, PAGE_4, PAGE_4_NEXT]


def answer(question: str, passages: list[str], language: str = "en") -> str:
    request = ChatRequest(messages=[], question=question, passages=passages, language=language)
    return "".join(ExtractiveChat().stream(request))


def assert_worth_reading(text: str) -> list[str]:
    quotes = quotes_of(text)
    assert quotes, text
    assert not any(is_heading(q) for q in quotes), text
    assert all(is_whole(q) for q in quotes), text
    keys = [sentence_key(q) for q in quotes]
    assert len(keys) == len(set(keys)), text
    return quotes


def test_the_budget_question_gets_the_figure_not_the_headings():
    text = answer("What does the lighthouse report say about the budget?", REPORT)
    quotes = assert_worth_reading(text)
    assert quotes[0] == (
        "The total budget for the restoration was $480,000, of which $312,500 was spent on "
        "the lantern and the masonry."
    )
    # the heading it sits under follows its citation: where the quote comes from
    assert text.splitlines()[1].endswith("masonry. [2] — Budget and costs")
    assert "Restoration Report 2024 [" not in text and "Harbor Point Lighthouse [" not in text


def test_a_follow_up_gets_the_whole_sentence_with_its_number():
    # services/follow_up searches "And how much …?" with the question before it
    question = (
        "What does the lighthouse report say about the budget?\nAnd how much came from the grant?"
    )
    quotes = assert_worth_reading(answer(question, REPORT))
    assert quotes[0].endswith(
        "A grant of $120,000 came from the Maritime Heritage Fund; the rest was paid by the "
        "town council."
    )
    assert not any(q.endswith("A grant of") for q in quotes)


def test_who_and_when_quotes_the_sentence_once():
    text = answer("When was the lighthouse built and by whom?", [PAGE_1, PAGE_1, PAGE_4])
    quotes = assert_worth_reading(text)
    built = [q for q in quotes if "built in 1871 by the engineer Thomas Stevenson" in q]
    assert len(built) == 1
    assert built[0].endswith("the spiral stair that visitors climb today.")


def test_a_documents_opening_sentence_does_not_lead_when_another_answers():
    regulation = (
        "第1条（目的）\n"
        "この規程は、ハーバーポイント灯台の修復事業における予算の執行と管理について必要な事項を定める。\n"
        "第5条（補助金）\n"
        "海事遺産基金からの補助金は12万ドルとし、残額は町が負担する。"
    )
    text = answer("補助金はいくらですか？", [regulation], language="ja")
    assert text.startswith(INTRO["ja"])
    quotes = assert_worth_reading(text)
    assert quotes[0] == "海事遺産基金からの補助金は12万ドルとし、残額は町が負担する。"
    assert text.splitlines()[1].endswith("[1] — 第5条（補助金）")
    assert not any(q.startswith("この規程は") for q in quotes)


def test_a_sentence_that_points_back_comes_with_the_one_before_it():
    passages = [
        "拍の周期の長短によって、音楽の速度を感じる。これをテンポという。音楽には拍子もある。"
    ]
    assert best_quotes("拍の周期の長短によって音楽の速度を感じることを何という？", passages)[0] == (
        1,
        "拍の周期の長短によって、音楽の速度を感じる。これをテンポという。",
    )
    english = [
        "Peyton Manning led two teams to the Super Bowl. He is also the oldest quarterback to "
        "play in one, at age 39."
    ]
    assert best_quotes("Who is the oldest quarterback to play in a Super Bowl?", english) == [
        (1, english[0])
    ]


def test_repeats_and_pieces_of_sentences_are_not_quotable():
    pieces = quotable(
        [
            "The museum opened in 2023. It shows the keepers' logbooks.",
            "shows the keepers' logbooks. The museum opened in 2023.",  # starts mid-sentence
        ]
    )
    texts = [q.text for q in pieces if q.whole]
    assert texts == ["The museum opened in 2023. It shows the keepers' logbooks."]


def test_quotes_from_a_second_source_compete_with_more_of_the_first():
    passages = [
        "The lighthouse was built in 1871. The lighthouse keeper lived in the cottage.",
        "The lighthouse museum opened in 2023.",
    ]
    numbers = [n for n, _ in best_quotes("lighthouse museum keeper built", passages)]
    assert sorted(set(numbers)) == [1, 2]


def test_the_evaluation_counts_headings_only_and_cut_answers():
    headings = "Here is what the knowledge base says:\n- Harbor Point Lighthouse [1]\n- Budget and costs [2]"
    cut = "Here is what the knowledge base says:\n- The total was $480,000. [1]\n- A grant of [1]"
    good = "Here is what the knowledge base says:\n- A grant of $120,000 came. [1] — Budget"
    assert headings_only(headings) and not has_cut_sentence(headings)
    assert has_cut_sentence(cut) and not headings_only(cut)
    assert not headings_only(good) and not has_cut_sentence(good)
    assert quotes_of(good) == ["A grant of $120,000 came."]
    assert not headings_only("1871 [1].") and not has_cut_sentence("1871 [1].")  # an LLM's
