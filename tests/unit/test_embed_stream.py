"""EmbedStream embeds the texts of successive documents in batches of exactly `batch_size`
across document boundaries while the embedder is busy (what waits goes at once when it is
idle), and hands each document back with exactly its own vectors, or the error of a batch it
had texts in."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from bunko.services.ingest.embed_stream import EmbedStream


def _vectors(texts: list[str]) -> np.ndarray:
    return np.array([[float(t)] for t in texts], dtype=np.float32)


def test_batches_are_exact_across_documents_and_each_gets_its_own_vectors():
    calls: list[int] = []
    busy = threading.Event()  # the embedder's first batch runs until every item is added

    def embed(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        busy.wait(10)
        return _vectors(texts)

    sizes = {"a": 3, "b": 5, "c": 1, "d": 7, "e": 2}
    handed: dict[str, np.ndarray] = {}
    n = 0
    with ThreadPoolExecutor(max_workers=1) as executor:
        stream: EmbedStream[str] = EmbedStream(embed, batch_size=4, executor=executor)
        for name, size in sizes.items():
            stream.add(name, [str(n + i) for i in range(size)])
            n += size
            handed.update(stream.ready())
        busy.set()
        stream.flush()
        while stream:
            handed.update(stream.ready(wait=True))
    # a's 3 texts went at once (the embedder was idle), then full batches only while it was
    # busy: no batch cut at a document's end.
    assert calls == [3, 4, 4, 4, 3]
    start = 0
    for name, size in sizes.items():
        expected = np.arange(start, start + size, dtype=np.float32)[:, None]
        np.testing.assert_array_equal(handed[name], expected)
        start += size
    assert list(handed) == list(sizes)  # in order


def test_an_idle_embedder_gets_what_waits_at_once():
    calls: list[int] = []

    def embed(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return _vectors(texts)

    with ThreadPoolExecutor(max_workers=1) as executor:
        stream: EmbedStream[str] = EmbedStream(embed, batch_size=64, executor=executor)
        stream.add("a", ["1", "2"])
        (name, vectors), *rest = stream.ready(wait=True)  # no flush needed: it was idle
        assert (name, vectors.tolist(), rest, calls) == ("a", [[1.0], [2.0]], [], [2])


def test_a_failed_batch_fails_exactly_the_documents_with_a_text_in_it():
    busy = threading.Event()

    def embed(texts: list[str]) -> np.ndarray:
        busy.wait(10)
        if "poison" in texts:
            raise RuntimeError("the embedding service answered 500")
        return np.zeros((len(texts), 1), dtype=np.float32)

    # Batches of 3 after the first (submitted to an idle embedder): [o] [a a b] [b poison c]
    # [d d e] [e]
    docs = {"o": ["x"], "a": ["x", "x"], "b": ["x", "x"], "p": ["poison"], "c": ["x"]}
    docs |= {"d": ["x", "x"], "e": ["x", "x"]}
    with ThreadPoolExecutor(max_workers=1) as executor:
        stream: EmbedStream[str] = EmbedStream(embed, batch_size=3, executor=executor)
        for name, texts in docs.items():
            stream.add(name, texts)
        busy.set()
        stream.flush()
        results = {}
        while stream:
            results.update(stream.ready(wait=True))
    failed = {k for k, v in results.items() if isinstance(v, BaseException)}
    assert failed == {"b", "p", "c"}
    assert str(results["p"]) == "the embedding service answered 500"
    assert all(results[k].shape == (len(docs[k]), 1) for k in docs if k not in failed)


def test_ready_without_wait_never_blocks_and_waits_for_unsubmitted_texts():
    release = threading.Event()

    def embed(texts: list[str]) -> np.ndarray:
        release.wait(10)
        return np.zeros((len(texts), 1), dtype=np.float32)

    with ThreadPoolExecutor(max_workers=1) as executor:
        stream: EmbedStream[str] = EmbedStream(embed, batch_size=2, executor=executor)
        stream.add("a", ["x", "x", "x"])  # one batch embedding, one text waiting
        assert stream.ready() == [] and len(stream) == 1
        release.set()
        assert stream.ready(wait=True) == []  # its last text is not even submitted
        stream.flush()
        (name, vectors), *rest = stream.ready(wait=True)
        assert (name, vectors.shape, rest) == ("a", (3, 1), [])
        assert len(stream) == 0


def test_an_embedder_without_vectors_gives_none():
    with ThreadPoolExecutor(max_workers=1) as executor:
        stream: EmbedStream[str] = EmbedStream(lambda t: None, batch_size=2, executor=executor)
        stream.add("a", ["x", "y", "z"])
        stream.flush()
        assert stream.ready(wait=True) == [("a", None)]
