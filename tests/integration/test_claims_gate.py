"""Claims on the embedded default (the graph `bunko serve` builds, a real SQLite file, the
packaged USE model): a query that states a claim is judged by USE's claim row
(calibration.CLAIM_ROWS), a question by the question row. The abstract and the claims were
written for this test, in SciFact's manner."""

from __future__ import annotations

from pathlib import Path

import pytest

from bunko.adapters.collecting_queue import CollectingQueue
from bunko.bootstrap.root import build_services
from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.services.search import SearchOptions
from bunko.services.search.calibration import CLAIM_ROWS

ABSTRACT = (
    "# Sporulation genes of Bacillus subtilis found by transposon sequencing\n\n"
    "The differentiation of Bacillus subtilis into a dormant spore is one of the best studied "
    "developmental programmes in bacteria. We used transposon sequencing to look for "
    "sporulation genes that earlier genetic screens missed. The screen found 130 of the 150 "
    "genes already known to be needed for spores, and 24 further genes never linked to spore "
    "formation. Fluorescence microscopy of null mutants showed delays in the start of "
    "sporulation, defects in membrane remodelling and slow spore maturation. Deleting the "
    "protease adaptor gene had no effect on how many cells formed spores.\n"
)
SUPPORTED = [
    "Transposon sequencing finds new sporulation genes.",
    "Membrane remodelling defects delay the onset of endospore differentiation.",
    "Lack of the protease adaptor does not affect sporulation efficiency in Bacillus subtilis.",
]
OTHER_FIELDS = [
    "Vitamin D deficiency is unrelated to birth weight.",
    "Aspirin inhibits the production of PGE2.",
    "Hypertension is frequently observed in type 1 diabetes patients.",
]
DEFAULT = Settings.model_fields["min_score"].default


@pytest.fixture(scope="module")
def abstract_library(tmp_path_factory):
    queue = CollectingQueue()
    abstract_library = build_services(
        Settings(data_dir=Path(tmp_path_factory.mktemp("claims")), embedder="use"), queue=queue
    )
    abstract_library.ingest.submit_text(WS, path="sporulation.md", content=ABSTRACT)
    abstract_library.pipeline.process(queue.take())
    yield abstract_library
    abstract_library.close()


def best(abstract_library, query: str, min_score: float = 0.0) -> float:
    items = abstract_library.search.search(
        WS, query, SearchOptions(limit=10, min_score=min_score)
    ).items
    return max((i.similarity for i in items), default=0.0)


def test_the_abstracts_claims_are_kept_and_other_fields_claims_refused(abstract_library):
    for claim in SUPPORTED:
        assert best(abstract_library, claim, DEFAULT) >= DEFAULT, claim
    for claim in OTHER_FIELDS:
        assert best(abstract_library, claim, DEFAULT) == 0.0, claim


def test_a_claim_is_judged_by_the_claim_row_and_a_question_is_not(abstract_library):
    claim = SUPPORTED[1]
    question = "Do membrane remodelling defects delay the onset of sporulation?"
    search = abstract_library.search
    assert search.claim_rows is CLAIM_ROWS  # the packaged rows, as `bunko serve` builds it
    with_rows = best(abstract_library, claim), best(abstract_library, question)
    search.claim_rows = {}  # the service's knob: no model has a claim row
    try:
        without = best(abstract_library, claim), best(abstract_library, question)
    finally:
        search.claim_rows = CLAIM_ROWS
    assert with_rows[0] != without[0]
    assert with_rows[1] == without[1]
