"""Which sentences the offline answerer quotes first (issue 45, point 5): the one that holds
what the question asks for (a number, a time, a name), an example with the claim it
illustrates, and, for a question that says it in other words than the passages, the
sentence its own words find as well as the ones the model finds close. Texts written for
these tests; the model is the real default one (USE)."""

from __future__ import annotations

from bunko.adapters.extractive_chat import asks_for, best_quotes, holds_answer
from bunko.domain.quotes import quotable
from bunko.services.search.background_terms import written_alike

STAIR = (
    "The stair of the lighthouse is made of cast iron. It was restored by the firm of Marsh "
    "and Daughters in 2024. The lighthouse stair has a rail of brass."
)
KEEPERS = (
    "Harbor Point Lighthouse\n\n"
    "Emperor Wilhelm visited the harbour and the lighthouse in 1889. "
    "The lighthouse was built on the rocks north of the harbour in 1871. "
    "Keeper Gegeen Harlowe ruled the station for only two years, from 1871 to 1873. "
    "Ships passing the point still see the light from twenty miles out."
)
LANTERN = (
    "Harbor Point Lighthouse\n\n"
    "The keepers' cottage was turned into a museum in 2023. The restoration of the lantern "
    "was assigned to Kestrel Glassworks, a firm from Leith. Visitors may climb the tower on "
    "weekends."
)


def test_a_question_asks_for_a_number_a_time_or_a_name():
    assert asks_for("How many steps are there to the top?") == "number"
    assert asks_for("When was the lighthouse built?") == "time"
    assert asks_for("In which year did it reopen?") == "time"
    assert asks_for("What year did it reopen?") == "time"
    assert asks_for("Who restored the stair?") == "name"
    assert asks_for("灯台は何年に建てられましたか？") == "time"
    assert asks_for("職員は何人いますか？") == "number"
    assert asks_for("誰が修復しましたか？") == "name"
    assert asks_for("What is the lantern made of?") == ""


def test_an_answer_is_what_the_question_does_not_already_say():
    question = "How many men did the captain send in 1754?"
    assert holds_answer("number", "The captain sent 40 men to the fort.", question)
    # the year is the question's own: the sentence holds no other number
    assert not holds_answer("number", "In 1754 the captain sent men to the fort.", question)
    who = "Who restored the stair of the lighthouse?"
    assert holds_answer("name", "It was restored by Marsh and Daughters.", who)
    assert not holds_answer("name", "The lighthouse stair has a rail of brass.", who)
    assert holds_answer("time", "It opened in May.", "When did the museum open?")


def test_a_who_question_quotes_the_sentence_with_a_name_first():
    quotes = best_quotes("Who restored the stair of the lighthouse?", [STAIR])
    assert quotes[0] == (
        1,
        "The stair of the lighthouse is made of cast iron. It was restored by the firm of "
        "Marsh and Daughters in 2024.",
    )


def test_an_example_comes_with_the_claim_it_illustrates():
    passage = (
        "Many tide tables of the old harbour are suspected to be wrong, but nobody has checked "
        "them. For instance, the 1902 table gives a low tide at noon on a day of spring tides. "
        "As such, the tables are kept in the harbour office. The office opens at nine."
    )
    claim, example, consequence, other = (
        "Many tide tables of the old harbour are suspected to be wrong, but nobody has checked "
        "them.",
        "For instance, the 1902 table gives a low tide at noon on a day of spring tides.",
        "As such, the tables are kept in the harbour office.",
        "The office opens at nine.",
    )
    assert [q.parts for q in quotable([passage])] == [
        (claim, example),
        (example, consequence),
        (other,),
    ]
    first = best_quotes("Which tide tables are suspected to be wrong?", [passage])[0][1]
    assert "the 1902 table gives a low tide at noon" in first
    # 例えば ("for example") goes with the sentence before it too
    ja = "灯台の記録には誤りが多いとされる。例えば、1902年の表は正午に干潮を示している。"
    assert [q.text for q in quotable([ja])] == [ja]


def test_the_question_language_against_the_passages():
    assert written_alike("When was the museum opened?", [LANTERN]) is True
    assert written_alike("Wann wurde das Museum eröffnet?", [LANTERN]) is False
    # a follow-up is judged by its last line
    assert (
        written_alike("When was the museum opened?\nWer hat die Laterne restauriert?", [LANTERN])
        is False
    )
    assert written_alike("ประภาคารสร้างเมื่อไหร่", [LANTERN]) is None


def test_a_paraphrase_keeps_the_sentence_its_own_words_find(use):
    # "Geegen" is misspelled and "keeper" the only other word held: the model alone puts the
    # emperor's visit first; the words and the model together, the keeper's years
    question = "When was Geegen the keeper?"
    with_words = best_quotes(question, [KEEPERS], embedder=use, same_language=written_alike)
    assert with_words[0][1] == (
        "Keeper Gegeen Harlowe ruled the station for only two years, from 1871 to 1873."
    )
    alone = best_quotes(question, [KEEPERS], embedder=use)  # no judge: the model alone
    assert alone[0][1].startswith("Emperor Wilhelm visited")


def test_a_question_in_another_language_is_quoted_by_the_model(use):
    quotes = best_quotes(
        "Welche Firma hat die Laterne restauriert?", [LANTERN], embedder=use,
        same_language=written_alike,
    )  # fmt: skip
    assert quotes[0][1].startswith("The restoration of the lantern was assigned to Kestrel")
    assert len(quotes) == 3  # as many as by words: the closest is not always the answer
