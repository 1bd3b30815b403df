"""Sentence splitting and line joining (domain/sentences, domain/reflow) on real-looking text:
English with abbreviations, decimals and initials, Japanese and Chinese, and the lines a PDF
page broke."""

from __future__ import annotations

import pytest

from bunko.domain.reflow import Vocabulary, reflow
from bunko.domain.sentences import is_heading, is_item, is_whole, sentence_key, split_sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Dr. Smith inspected the lamp, e.g. its lens, and found 3.5 million cracks. "
            "It was repaired.",
            [
                "Dr. Smith inspected the lamp, e.g. its lens, and found 3.5 million cracks.",
                "It was repaired.",
            ],
        ),
        (
            "Mayor W. Haydon Burns' Jacksonville Story built a new city hall. It opened in 1962.",
            [
                "Mayor W. Haydon Burns' Jacksonville Story built a new city hall.",
                "It opened in 1962.",
            ],
        ),
        (
            "The U.S. Army paid $1.2 million, i.e. Mr. Lee's estimate. See No. 5 in Fig. 3.",
            ["The U.S. Army paid $1.2 million, i.e. Mr. Lee's estimate.", "See No. 5 in Fig. 3."],
        ),
        (
            "He said no. Then he left. Was it late? Yes! The average size was 3.62. It held.",
            [
                "He said no.",
                "Then he left.",
                "Was it late?",
                "Yes!",
                "The average size was 3.62.",
                "It held.",
            ],
        ),
        (
            'The keeper wrote "all is well." Then the storm came.',
            ['The keeper wrote "all is well."', "Then the storm came."],
        ),
        (
            "灯台は1871年に建てられた。「修復する。」と町長は言った。本当ですか？はい！",
            [
                "灯台は1871年に建てられた。",
                "「修復する。」と町長は言った。",
                "本当ですか？",
                "はい！",
            ],
        ),
        (
            "大熊猫以竹子为主要食物。它们生活在四川！",
            ["大熊猫以竹子为主要食物。", "它们生活在四川！"],
        ),
        (
            "Budget and costs\nThe total was $480,000.",
            ["Budget and costs", "The total was $480,000."],
        ),
    ],
)
def test_sentences_end_where_they_end(text, expected):
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    "line",
    ["Harbor Point Lighthouse", "Restoration Report 2024", "Budget and costs", "第1条（目的）",
     "# Budget", "梅雨"],
)  # fmt: skip
def test_short_lines_without_sentence_punctuation_are_headings(line):
    assert is_heading(line)


@pytest.mark.parametrize(
    "line",
    [
        "The total budget was $480,000.",
        "この規程は、予算の執行について定める。",
        "Budget: $480,000",
        "- lantern glazing",
        "Lantern\t$120,000",
        "The masonry of the tower, the lantern and the stair were all repaired in 2024 by the town",
    ],
)
def test_statements_items_and_long_lines_are_not_headings(line):
    assert not is_heading(line)


def test_whole_sentences_and_cut_ones():
    assert is_whole("A grant of $120,000 came from the fund.")
    assert is_whole("「修復する。」")
    assert is_whole("The average size was 3.62.")
    assert not is_whole("A grant of")
    assert not is_whole("Mayor W.")
    assert not is_whole("as shown, e.g.")
    assert not is_whole("この規程は、予算の執行について")
    assert is_item("Lantern\t$120,000") and is_item("Budget: $480,000")
    assert sentence_key("The  Budget.") == sentence_key("the budget.")


def test_a_sentence_broken_across_lines_is_joined_and_headings_stay():
    text = (
        "Harbor Point Lighthouse\n"
        "Restoration Report 2024\n"
        "The lighthouse was built in 1871 by the engineer Thomas Stevenson, who designed its\n"
        "cast-iron lantern and the spiral stair that visitors climb today. The work took two\n"
        "years.\n"
        "Budget and costs\n"
        "The total budget was $480,000. A grant of\n"
        "$120,000 came from the Maritime Heritage Fund.\n"
        "\n"
        "Next steps"
    )
    assert reflow(text) == (
        "Harbor Point Lighthouse\n"
        "Restoration Report 2024\n"
        "The lighthouse was built in 1871 by the engineer Thomas Stevenson, who designed its "
        "cast-iron lantern and the spiral stair that visitors climb today. The work took two "
        "years.\n"
        "Budget and costs\n"
        "The total budget was $480,000. A grant of $120,000 came from the Maritime Heritage "
        "Fund.\n"
        "\n"
        "Next steps"
    )


def test_a_hyphenated_word_break_is_joined_but_a_real_hyphen_stays():
    text = (
        "The masonry was repointed and the lantern glazing replaced after a careful exam-\n"
        "ple of the stair, which is well-\n"
        "known to every visitor who has climbed the one hundred and twenty steps of it."
    )
    joined = reflow(text)
    assert "careful example of the stair" in joined
    assert "which is well-known to every visitor" in joined
    # the document's own words decide first: it writes "long-term" elsewhere
    words = Vocabulary(["a long-term plan", "the keepers' examination"])
    assert reflow("the long-\nterm plan and the exam-\nination of the keepers", words) == (
        "the long-term plan and the examination of the keepers"
    )
    assert reflow("an e-\nmail to the follow-\nup team about an Anglo-\nSaxon site") == (
        "an e-mail to the follow-up team about an Anglo-Saxon site"
    )
    assert reflow("the soft\u00ad\nhyphen and the follow-\ning lines") == (
        "the softhyphen and the following lines"
    )


def test_japanese_lines_join_without_spaces_and_articles_stay_apart():
    text = (
        "第1条（目的）\n"
        "この規程は、株式会社ハーバーポイントの灯台修復事業における予算の執行と管理について必要な事項を定\n"
        "めるものとする。灯台は1871年にトーマス・スティーブンソンによって建て\n"
        "られた。\n"
        "第2条（予算）\n"
        "総予算は48万ドルとする。"
    )
    assert reflow(text).split("\n") == [
        "第1条（目的）",
        "この規程は、株式会社ハーバーポイントの灯台修復事業における予算の執行と管理について必要な事項を"
        "定めるものとする。灯台は1871年にトーマス・スティーブンソンによって建てられた。",
        "第2条（予算）",
        "総予算は48万ドルとする。",
    ]


def test_lists_tables_and_colon_introductions_keep_their_lines():
    text = (
        "The works of 2024 covered the following parts of the lighthouse and the keeper's house:\n"
        "- the lantern glazing and its frames\n"
        "- the masonry of the tower\n"
        "Part\tCost\n"
        "Lantern\t$120,000"
    )
    assert reflow(text) == text
