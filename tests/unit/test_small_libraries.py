"""The small-library draws of `bunko eval` (evaluation/libraries.py), on a made-up set."""

from __future__ import annotations

from bunko.evaluation.beir import BeirSet
from bunko.evaluation.libraries import draw_libraries, measure, topics


def made_up_set() -> BeirSet:
    corpus, titles, queries, qrels = {}, {}, {}, {}
    for article in range(6):
        for paragraph in range(3):
            doc = f"a{article}-p{paragraph}"
            corpus[doc], titles[doc] = f"text {doc}", f"Article {article}"
            for n in range(2):
                qid = f"{doc}-q{n}"
                queries[qid], qrels[qid] = f"question {qid}", {doc: 1}
    return BeirSet(corpus=corpus, queries=queries, qrels=qrels, titles=titles)


def test_topics_are_shared_titles_else_the_document():
    data = made_up_set()
    assert topics(data)["a0-p1"] == "Article 0"
    data.titles = {d: d for d in data.corpus}  # every title unique: each document its own
    assert topics(data)["a0-p1"] == "a0-p1"


def test_libraries_hold_different_topics_and_never_ask_about_them_as_unanswerable():
    data = made_up_set()
    libraries = draw_libraries(data, 3, 5, seed=1)
    assert len(libraries) == 5
    for library in libraries:
        held = {d.split("-")[0] for d in library.documents}
        assert len(held) == 3  # one paragraph of each of three articles
        assert all(rel <= set(library.documents) for _, rel in library.answerable)
        for question in library.unanswerable:
            assert question.split()[1].split("-")[0] not in held
    assert draw_libraries(data, 3, 5, seed=1) == libraries  # seeded
    assert len({lib.workspace_id for lib in libraries}) == 5
    assert draw_libraries(data, 6, 1) == []  # no topic left to ask about


def test_measure_counts_kept_and_refused_per_question():
    data = made_up_set()
    [library] = draw_libraries(data, 1, 1)

    def search(workspace_id, question):
        assert workspace_id == library.workspace_id
        return list(library.documents) if question in dict(library.answerable) else []

    figures = measure([library], search)
    assert figures["kept"] == 1.0 and figures["refused"] == 1.0
    assert figures["answerable_questions"] == 2
