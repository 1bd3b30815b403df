"""The calibrated similarity: absolute, so one min_score refuses nonsense on any corpus."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bunko.abstention import foreign_queries, measure, random_queries
from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.services.calibration import CALIBRATIONS, calibration_for
from bunko.services.search import SearchOptions
from tests.conftest import EVAL_DIR

DEFAULT = SearchOptions().min_score


@pytest.mark.parametrize("name", sorted(CALIBRATIONS))
def test_similarity_is_a_probability_rising_with_both_signals(name):
    row = CALIBRATIONS[name]
    grid = [i / 10 for i in range(11)]
    for a in grid:
        for b in grid:
            s = row.similarity(a, b)
            assert 0.0 <= s <= 1.0
            if a < 1:
                assert row.similarity(a + 0.1, b) >= s
            if b < 1:
                assert row.similarity(a, b + 0.1) >= s
    assert row.similarity(0.0, 0.0) < DEFAULT  # nothing in common: below the default cut
    assert row.similarity(0.0, 1.0) > DEFAULT  # every query term, however worded: above


def test_unknown_models_fall_back_to_keyword_coverage():
    assert calibration_for("use-multilingual-v3") is CALIBRATIONS["use-multilingual-v3"]
    assert calibration_for("bedrock-amazon.titan-embed-text-v2:0-1024") is CALIBRATIONS["keyword"]
    assert calibration_for(None) is CALIBRATIONS["keyword"]


THREE = {
    "garden.md": "Water the tomatoes every morning and mulch the beds in July.",
    "tea.md": "Green tea is brewed at 80 degrees for two minutes.",
    "bikes.md": "Check the tyre pressure and oil the chain before a long ride.",
}


@pytest.fixture(scope="module")
def three(use_services):
    for path, text in THREE.items():
        use_services.ingest.submit_text(WS, path=path, content=text, category="three")
    assert use_services.queue.join(timeout=300)
    return use_services


def search(services, query, **kw):
    return services.search.search(WS, query, SearchOptions(category="three", **kw))


@pytest.mark.parametrize(
    "query", ["zzqxj nonexistent token", "qwpoe rtzu", "ぬぽゃ", "Lorem ipsum dolor sit amet"]
)
def test_nonsense_over_a_tiny_knowledge_base_returns_nothing(three, query):
    assert search(three, query).items == []  # the default min_score
    assert search(three, query, min_score=0.99).items == []
    # fusion still ranks a best candidate; only its absolute similarity is low
    assert all(i.similarity < DEFAULT for i in search(three, query, min_score=0).items)


def test_a_related_query_passes_the_default_cut(three):
    items = search(three, "how long should green tea brew").items
    assert items and items[0].path == "tea.md"
    assert items[0].similarity >= DEFAULT
    assert 0 < items[0].text_score <= 1  # coverage, absolute


def test_a_cross_lingual_match_ranks_first_but_is_only_kept_when_asked(three):
    # No shared term, vectors only: USE's cosine alone is weak evidence (the fitted row),
    # so the default cut refuses it while min_score 0 still ranks the right file first.
    items = search(three, "トマトの水やり", min_score=0).items
    assert items[0].path == "garden.md" and items[0].text_score == 0
    assert items[0].similarity < DEFAULT
    assert search(three, "トマトの水やり").items == []


def _eval_dir() -> Path:
    return Path(os.environ.get("BUNKO_EVAL_DIR", EVAL_DIR))


@pytest.fixture(scope="module")
def real_corpora(use_services):
    """The first 150 passages of each eval set (SciFact, JSQuAD), in one category."""
    root = _eval_dir()
    if not (root / "scifact" / "corpus.jsonl").is_file():
        pytest.skip("eval sets not present (set BUNKO_EVAL_DIR)")
    for name in ("scifact", "jsquad-valid"):
        with (root / name / "corpus.jsonl").open(encoding="utf-8") as f:
            for n, line in zip(range(150), f, strict=False):
                row = json.loads(line)
                use_services.ingest.submit_text(
                    WS,
                    path=f"{name}/{n}.txt",
                    content=f"{row.get('title', '')}\n\n{row['text']}",
                    category="real",
                )
    assert use_services.queue.join(timeout=600)
    return use_services


@pytest.mark.parametrize("query", ["zzqxj nonexistent token", *random_queries(12, seed=7)])
def test_nonsense_over_real_corpora_returns_nothing(real_corpora, query):
    options = SearchOptions(category="real")
    assert real_corpora.search.search(WS, query, options).items == []


def test_a_real_question_over_real_corpora_is_answered(real_corpora):
    root = _eval_dir()
    with (root / "scifact" / "corpus.jsonl").open(encoding="utf-8") as f:
        first = json.loads(f.readline())
    items = real_corpora.search.search(WS, first["title"], SearchOptions(category="real")).items
    assert items and items[0].path == "scifact/0.txt" and items[0].similarity >= DEFAULT


def test_random_queries_are_seeded_and_varied():
    a, b = random_queries(30, seed=1), random_queries(30, seed=1)
    assert a == b and len(set(a)) == 30 and a != random_queries(30, seed=2)


def test_measure_counts_kept_and_refused():
    index = {"good": ["d1", "d2"], "lost": ["d9"], "weak": []}

    def fake_engine(query: str, cutoff: float) -> list[str]:
        if cutoff == 0:
            return index.get(query, ["d9"])
        return index.get(query, []) if query == "good" else []

    figures = measure(
        fake_engine,
        {"q1": ("good", {"d1"}), "q2": ("lost", {"d1"}), "q3": ("weak", {"d1"})},
        {"random": ["x", "y"], "other": ["good"]},
        min_score=0.3,
    )
    assert figures["answerable_found"] == 1 and figures["answerable_kept"] == 1.0
    assert figures["answerable_kept_all"] == round(1 / 3, 4)
    assert figures["refused_by_source"] == {"random": 1.0, "other": 0.0}
    assert figures["unanswerable_refused"] == round(2 / 3, 4)


def test_foreign_queries_come_from_sibling_sets(tmp_path):
    for name, texts in {"en": ["a claim"], "ja": ["質問です", "もう一つ"]}.items():
        (tmp_path / name).mkdir()
        rows = [json.dumps({"_id": str(i), "text": t}) for i, t in enumerate(texts)]
        (tmp_path / name / "queries.jsonl").write_text("\n".join(rows), encoding="utf-8")
    assert {k: sorted(v) for k, v in foreign_queries(tmp_path / "en").items()} == {
        "ja": ["もう一つ", "質問です"]
    }
    assert list(foreign_queries(tmp_path / "ja")) == ["en"]
