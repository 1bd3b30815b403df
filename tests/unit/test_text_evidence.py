"""Evidence finer than the topic (services/search/evidence.py), on passages written here."""

from __future__ import annotations

from bunko.services.search.background_terms import in_its_language, query_languages, weighted_terms
from bunko.services.search.evidence import (
    ANSWER_TYPE,
    HOW_MANY,
    WHEN,
    answer_type,
    evidence,
    holds_type,
    is_claim,
    question_terms,
)
from bunko.services.search.relevance_gate import window_signals

OFFICES = {
    "london": "The London office has 60 desks. It opens at 08:00 on weekdays.",
    "osaka": "The Osaka office has 24 desks. Visitors sign in at the office reception.",
    "leave": "Employees receive 25 days of paid leave. Tell your manager before 10:00 when ill.",
}


def test_a_sentence_holding_the_questions_specific_words_is_evidence():
    found = evidence(weighted_terms("How many desks does the Osaka office have?"), OFFICES)
    assert found["osaka"].evidence > 0.8
    assert found["osaka"].evidence > 2 * found["london"].evidence  # desks and office: topic
    assert found["leave"].evidence < 0.1


def test_a_question_on_the_librarys_topic_that_no_sentence_answers_has_little():
    # every passage is about offices; none says anything about dogs
    found = evidence(weighted_terms("Can I bring my dog to the office?"), OFFICES)
    assert max(e.evidence for e in found.values()) < 0.3
    assert 0.0 < found["osaka"].reach < 0.6  # "office" is there, "dog" and "bring" are not


def test_the_words_must_be_in_one_sentence_not_spread_over_the_passage():
    spread = {"p": "The Osaka office is in Umeda. Every desk has two screens."}
    together = {"p": "The Osaka office has 24 desks with two screens each."}
    question = weighted_terms("How many desks are in the Osaka office?")
    assert evidence(question, together)["p"].evidence > evidence(question, spread)["p"].evidence


def test_japanese_terms_are_read_as_the_engines_read_them():
    texts = {
        "rules": "リモートワークは週に3日まで認められています。残業は事前に上長の承認が必要です。",
        "osaka": "大阪オフィスは梅田駅から徒歩5分です。受付は9時から18時まで開いています。",
    }
    found = evidence(weighted_terms("リモートワークは週に何日までできますか？"), texts)
    assert found["rules"].evidence > 0.7 > found["osaka"].evidence
    refused = evidence(weighted_terms("育児休業は何か月取れますか？"), texts)
    assert max(e.evidence for e in refused.values()) < 0.3


def test_nothing_to_read_is_no_evidence():
    assert evidence(weighted_terms("anything"), {}) == {}
    assert evidence([], OFFICES) == {}


def test_a_question_is_weighed_in_its_own_language():
    # "dog" is a common Danish word ("but"): merged over every language it weighs almost
    # nothing, read as the English question it is it weighs like "bring"
    merged = dict((t.text, w) for t, w in weighted_terms("Can I bring my dog to the office?"))
    own = dict((t.text, w) for t, w in in_its_language("Can I bring my dog to the office?"))
    assert merged["dog"] <= 0.1 < 0.5 <= own["dog"]
    assert own["can"] <= 0.1 and own["the"] <= 0.1  # its question words still weigh little
    assert query_languages(["wie", "viel", "stufen", "hat", "der"]) == ["de"]
    assert query_languages(["kubernet"]) == []  # no language's common words: merged weights
    assert in_its_language("Kubernetes") == weighted_terms("Kubernetes")


def test_a_kanji_joined_to_a_particle_is_read_as_the_kanji():
    terms = {t.text: (t.expand, w) for t, w in in_its_language("犬をオフィスに連れて行けますか？")}
    assert "犬を" not in terms
    assert terms["犬"][0] and terms["犬"][1] >= 0.5  # the question is about a dog
    assert terms["ます"][1] <= 0.1


def test_the_documents_name_title_and_headings_are_context_not_evidence():
    texts = {
        "budget": "Budget and costs\nThe total budget was $480,000, paid by the council.",
        "history": "History\nThe lighthouse was built in 1871 and first lit in 1872.",
    }
    context = {cid: "harbor-point-report\nHarbor Point Lighthouse" for cid in texts}
    question = in_its_language("What does the lighthouse report say about the budget?")
    found = evidence(question, texts, context)
    # "lighthouse report" names the document: the budget sentence misses only "say"
    assert found["budget"].evidence > 0.6 > 2 * found["history"].evidence

    leave = {"p": "Employees receive 25 days of paid annual leave each year."}
    named = {"p": "leave-policy\nLeave policy"}
    asked = evidence(in_its_language("What is the parental leave policy?"), leave, named)
    assert asked["p"].evidence < 0.3  # "leave policy" is the file; "parental" is asked
    whole = evidence(in_its_language("What is the leave policy?"), leave, named)
    assert whole["p"].evidence == 1.0  # the question names the document itself


def test_two_adjacent_sentences_are_read_together_as_a_pair():
    text = {"p": "In 2023 the council restored the tower. The work cost 1.4 million dollars."}
    found = evidence(in_its_language("How much did the restoration cost?"), text)["p"]
    assert found.evidence < found.pair and found.pair > 0.8


def test_a_question_of_question_words_only_has_no_evidence():
    # kana nonsense (ぬぽゃ) or "what is it?": no word asks for anything a passage could hold
    for query in ("ぬぽゃ", "What is it?"):
        found = evidence(in_its_language(query), OFFICES, {c: c for c in OFFICES})
        assert max(e.evidence for e in found.values()) == 0.0


def test_what_no_passage_holds_is_absent_only_in_the_librarys_own_language():
    japanese = {
        "rules": "リモートワークは週に3日まで認められています。残業は事前に上長の承認が必要です。",
        "osaka": "大阪オフィスは梅田駅から徒歩5分です。受付は9時から18時まで開いています。",
    }
    # a staff canteen: no passage holds it, asked in the passages' language
    canteen = evidence(in_its_language("社員食堂はありますか？"), japanese)
    assert min(e.absent for e in canteen.values()) > 0.7
    remote = evidence(in_its_language("リモートワークは週に何日までできますか？"), japanese)
    assert max(e.absent for e in remote.values()) < 0.3
    # the same kind of question in another language than the passages says nothing by its
    # missing words: absent and reach are 0, the vectors judge it
    german = evidence(in_its_language("Gibt es eine Kantine für Mitarbeiter?"), OFFICES)
    assert all(e.absent == 0.0 and e.reach == 0.0 for e in german.values())
    assert all(abs(e.absent - (1.0 - e.reach)) < 1e-9 for e in canteen.values())


def test_a_question_in_a_language_the_tables_do_not_know_has_nothing_absent():
    # Thai: no term table reads it, so its words' absence from English files says nothing
    thai = evidence(in_its_language("ร้านเบเกอรี่เปิดกี่โมงเช้า"), OFFICES)
    assert set(thai) == set(OFFICES) and all(e.absent == 0.0 for e in thai.values())


def test_a_claim_is_read_over_the_whole_passage_and_its_title():
    # A claim states what a paper says, across its abstract's sentences and its title; a
    # question's answer is one sentence (SciFact's claims were refused for want of one)
    abstract = {
        "p": "Maternal vitamin D and infant size\n"
        "We measured vitamin D deficiency in 1,200 pregnant women. "
        "Low levels were common in winter. "
        "The birth weight of their infants did not differ."
    }
    named = {"p": "12345\nMaternal vitamin D and infant size"}
    claim = "Vitamin D deficiency is unrelated to birth weight."
    assert is_claim(claim)
    as_claim = evidence(in_its_language(claim), abstract, named, claim=True)["p"]
    as_question = evidence(in_its_language(claim), abstract, named)["p"]
    assert as_claim.evidence > 0.6 > as_question.evidence
    # a claim the passage does not make holds little of it, read either way
    other = "Smoking during pregnancy lowers birth weight."
    assert evidence(in_its_language(other), abstract, named, claim=True)["p"].evidence < 0.5
    # one passage among others: their shared words are still topic
    spread = {**abstract, "q": "Vitamin D deficiency in adults. Serum levels fall in winter."}
    named["q"] = "67890\nVitamin D in adults"
    found = evidence(in_its_language(claim), spread, named, claim=True)
    assert found["p"].evidence > found["q"].evidence


def test_questions_and_requests_are_told_from_claims():
    assert is_claim("DUSP4 decreases apoptosis.")
    assert is_claim("Summarise the leave policy for new staff.")  # a request: the passage
    for asked in (
        "What is the parental leave policy?",
        "How many desks does the Osaka office have.",  # a question without its mark
        "Can I bring my dog to the office",
        "日本で梅雨がないのは北海道とどこか。",  # Japanese questions often end in 。
        "交響曲第2番ハ短調が完成した年は。",
        "Fig. 3.",
        "parental leave policy",
    ):
        assert not is_claim(asked), asked


EXPENSES = {
    "date": "経費は発生した月の翌月10日までに経費精算システムで申請してください。",
    "none": "経費は経費精算システムで申請してください。領収書の画像を添付してください。",
}


def test_a_japanese_question_that_asks_when_or_how_many_wants_a_number_or_a_date():
    assert answer_type("経費の申請期限はいつですか？") == WHEN
    assert answer_type("東京大学が設立されたのは何年？") == WHEN
    assert answer_type("育児休業は何か月取れますか？") == HOW_MANY
    assert answer_type("大阪オフィスには何人いますか？") == HOW_MANY
    assert answer_type("会議室はいくつありますか？") == HOW_MANY
    # a name, a place, a person: no term tells them; いつも is "always"; English is not read
    for question in ("流れる物体を何というか", "経費はどこで申請しますか？",
                     "いつも何を食べますか？", "When was it founded?"):  # fmt: skip
        assert answer_type(question) is None, question
    assert holds_type(frozenset(["翌月", "10", "日ま"]), WHEN)
    assert holds_type(frozenset(["二十", "人"]), HOW_MANY)
    assert not holds_type(frozenset(["経費", "申請"]), WHEN)
    assert not holds_type(frozenset(["月曜"]), HOW_MANY)  # a date's word is not a number


def test_a_passage_with_no_answer_of_the_asked_type_loses_evidence():
    when = window_signals("経費の申請はいつまでですか？", EXPENSES, {})
    assert when["date"].evidence == 1.0
    assert when["none"].evidence == 1.0 - ANSWER_TYPE  # its words, but no date anywhere
    where = window_signals("経費はどこで申請しますか？", EXPENSES, {})
    assert where["date"].evidence == where["none"].evidence == 1.0  # a place: not judged


def test_japanese_question_words_built_on_nani_weigh_nothing():
    question = "経費は何日までに申請しますか？"
    # 何日 is in no list and weighed as a rare name (2.0): missing from every passage
    assert any("何" in t.text and w == 2.0 for t, w in in_its_language(question))
    assert not any("何" in t.text for t, _ in question_terms(question))
    found = window_signals(question, EXPENSES, {})
    assert found["date"].evidence == 1.0 and found["date"].absent < 0.05
    # English questions are read as before
    english = "How many desks does the Osaka office have?"
    assert question_terms(english) == in_its_language(english)


def test_the_noun_that_names_what_a_typed_question_asks_is_not_asked_of_the_passage():
    question = "経費の申請期限はいつですか？"  # "the deadline": the answer is a date, not 期限
    texts = [t.text for t, _ in question_terms(question)]
    assert "経費" in texts and "申請" in texts
    assert not any("期" in t or "限" in t for t in texts)  # nor the bigram 請期 across it
    # read with 期限, the passage that answers held half of what the question asks (0.52) and
    # 0.45 of its weight was nowhere in the library
    found = window_signals(question, EXPENSES, {})
    assert found["date"].evidence == 1.0 and found["date"].absent < 0.1
    assert found["none"].evidence == 1.0 - ANSWER_TYPE
    # in a question that asks for no number or date, the noun is read as before
    assert "時期" in [t.text for t, _ in question_terms("大学の設立時期は？")]
