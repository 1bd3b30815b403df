"""Opt-in: the index against a real OpenSearch (Serverless) endpoint, k-NN included.

Set BUNKO_TEST_OPENSEARCH_URL (https://<id>.<region>.aoss.amazonaws.com, with AWS
credentials whose role is in the collection's data access policy; or any OpenSearch URL
with BUNKO_TEST_OPENSEARCH_SIGV4=false). Writes become searchable on the engine's own
schedule (no refresh=true), so assertions poll.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from bunko.adapters.aws.clients import opensearch_client
from bunko.adapters.aws.opensearch.index import OpenSearchServerlessIndex
from bunko.adapters.aws.settings import AwsSettings
from bunko.ports import IndexEntry, SearchFilter

URL = os.environ.get("BUNKO_TEST_OPENSEARCH_URL")
pytestmark = pytest.mark.skipif(not URL, reason="set BUNKO_TEST_OPENSEARCH_URL to run")
WS = "live-test"
DIMENSION = 8


def eventually(check: Callable[[], bool], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail("the engine did not reach the expected state in time")
        time.sleep(2)


@pytest.fixture(scope="module")
def live_index() -> Iterator[OpenSearchServerlessIndex]:
    sigv4 = os.environ.get("BUNKO_TEST_OPENSEARCH_SIGV4", "true").lower() != "false"
    settings = AwsSettings(opensearch_endpoint=URL, opensearch_sigv4=sigv4)
    name = f"bunko-live-{uuid.uuid4().hex[:8]}"
    index = OpenSearchServerlessIndex(opensearch_client(settings), index=name, dimension=DIMENSION)
    index.ensure_index()
    yield index
    index.client.indices.delete(index=name)


def unit(hot: int) -> list[float]:
    v = np.full(DIMENSION, 0.05, dtype=np.float32)
    v[hot] = 1.0
    return (v / np.linalg.norm(v)).tolist()


def test_live_roundtrip(live_index):
    entries = [
        IndexEntry("c0", "d0", WS, 1, "全文検索エンジンの説明", "a", unit(0)),
        IndexEntry("c1", "d1", WS, 1, "vector search with filters", "b", unit(1)),
        IndexEntry("c2", "d1", WS, 1, "東京都に住んでいます", "b", unit(2)),
    ]
    live_index.index(entries)
    eventually(lambda: live_index.count(WS) == 3)
    filters = SearchFilter(WS)
    eventually(
        lambda: [h.chunk_id for h in live_index.keyword_search("検索", filters, 5)] == ["c0"]
    )
    keyword, vector = live_index.hybrid_search("search", unit(1), SearchFilter(WS, category="b"), 2)
    assert [h.chunk_id for h in keyword] == ["c1"]
    assert vector[0].chunk_id == "c1"
    assert vector[0].score == pytest.approx(1.0, abs=1e-3)  # cosine of a vector with itself
    assert {h.chunk_id for h in vector} <= {"c1", "c2"}  # the filter ran inside k-NN
    live_index.delete_document(WS, "d1")
    eventually(lambda: live_index.count(WS) == 1)
    live_index.clear(WS)
    eventually(lambda: live_index.count(WS) == 0)
