"""The calibrated similarity: absolute, so one min_score refuses nonsense on any corpus."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.evaluation.abstention import random_queries
from bunko.services.search.search import SearchOptions
from tests.conftest import EVAL_DIR

pytestmark = pytest.mark.slow  # loads the USE model and indexes real corpora

DEFAULT = Settings.model_fields["min_score"].default


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


def test_a_cross_lingual_match_counts_on_its_vectors(three):
    # No shared term: the cosine alone decides, on USE's scale (a translation scores ~0.71,
    # unrelated passages ~0.07). A close match passes the default cut; a looser one ranks
    # first, far above the rest, and passes where the cosine is higher.
    items = search(three, "緑茶は何度で淹れますか？").items
    assert [i.path for i in items] == ["tea.md"], items
    assert items[0].text_score == 0 and items[0].similarity >= DEFAULT
    ranked = search(three, "トマトの水やり", min_score=0).items
    assert ranked[0].path == "garden.md" and ranked[0].similarity > 5 * ranked[1].similarity


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
                    source="cli",  # a bulk load, as `bunko ingest` does: no per-user upload rate
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
