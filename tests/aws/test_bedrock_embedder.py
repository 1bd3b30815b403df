"""BedrockTitanEmbedder with botocore's Stubber: request shape, batching, retries."""

from __future__ import annotations

import io
import json

import boto3
import numpy as np
import pytest
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from bunko.adapters.aws.bedrock_embedder import BedrockTitanEmbedder
from bunko.errors import ServiceUnavailableError
from bunko.ports import Embedder

MODEL = "amazon.titan-embed-text-v2:0"


def response(vector: list[float]) -> dict:
    return {"body": body(vector), "contentType": "application/json"}


def body(vector: list[float]) -> StreamingBody:
    raw = json.dumps(
        {"embedding": vector, "inputTextTokenCount": 3, "embeddingsByType": {"float": vector}}
    ).encode()
    return StreamingBody(io.BytesIO(raw), len(raw))


def expected(text: str, dimension: int) -> dict:
    return {
        "modelId": MODEL,
        "contentType": "application/json",
        "accept": "application/json",
        "body": json.dumps(
            {
                "inputText": text,
                "dimensions": dimension,
                "normalize": True,
                "embeddingTypes": ["float"],
            }
        ),
    }


@pytest.fixture
def client():
    return boto3.client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )


def unit(dimension: int, hot: int) -> list[float]:
    v = [0.0] * dimension
    v[hot] = 1.0
    return v


@pytest.mark.parametrize("dimension", [256, 512, 1024])
def test_embeds_in_order_with_the_documented_request(client, dimension):
    embedder = BedrockTitanEmbedder(client, dimension=dimension, concurrency=1)
    assert isinstance(embedder, Embedder)
    texts = ["一つ目の文", "second text", "third"]
    with Stubber(client) as stub:
        for i, text in enumerate(texts):
            stub.add_response(
                "invoke_model", response(unit(dimension, i)), expected(text, dimension)
            )
        vectors = embedder.embed_documents(texts)
        stub.assert_no_pending_responses()
    assert vectors.shape == (3, dimension)
    assert vectors.dtype == np.float32
    assert [int(np.argmax(v)) for v in vectors] == [0, 1, 2]


def test_query_vector_is_normalised(client):
    embedder = BedrockTitanEmbedder(client, dimension=256)
    with Stubber(client) as stub:
        stub.add_response("invoke_model", response([3.0, 4.0] + [0.0] * 254), expected("q", 256))
        vector = embedder.embed_query("q")
    assert vector.shape == (256,)
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0)
    assert vector[:2] == pytest.approx([0.6, 0.8])


def test_throttling_is_retried_with_backoff(client):
    waits: list[float] = []
    embedder = BedrockTitanEmbedder(client, dimension=256, sleep=waits.append, max_backoff=4)
    with Stubber(client) as stub:
        stub.add_client_error(
            "invoke_model", "ThrottlingException", "Too many requests", http_status_code=429
        )
        stub.add_client_error(
            "invoke_model", "ServiceUnavailableException", "busy", http_status_code=503
        )
        stub.add_response("invoke_model", response(unit(256, 5)), expected("t", 256))
        vector = embedder.embed_query("t")
        stub.assert_no_pending_responses()
    assert int(np.argmax(vector)) == 5
    assert len(waits) == 2
    assert all(0 <= w <= 4 for w in waits)


def test_gives_up_after_max_attempts(client):
    waits: list[float] = []
    embedder = BedrockTitanEmbedder(client, dimension=256, max_attempts=3, sleep=waits.append)
    with Stubber(client) as stub:
        for _ in range(3):
            stub.add_client_error(
                "invoke_model", "ThrottlingException", "slow down", http_status_code=429
            )
        with pytest.raises(ServiceUnavailableError) as raised:
            embedder.embed_query("t")
    assert len(waits) == 2
    assert isinstance(raised.value.__cause__, client.exceptions.ThrottlingException)


def test_retries_stop_within_the_time_budget(client):
    # The api function's budget: no retry whose wait would end past it (API Gateway's 29 s).
    waits: list[float] = []
    embedder = BedrockTitanEmbedder(
        client, dimension=256, max_seconds=0.001, max_backoff=20, sleep=waits.append
    )
    with Stubber(client) as stub:
        stub.add_client_error(
            "invoke_model", "ThrottlingException", "slow down", http_status_code=429
        )
        with pytest.raises(ServiceUnavailableError):
            embedder.embed_query("t")
    assert waits == []


def test_validation_errors_fail_at_once(client):
    waits: list[float] = []
    embedder = BedrockTitanEmbedder(client, dimension=256, sleep=waits.append)
    with Stubber(client) as stub:
        stub.add_client_error(
            "invoke_model", "ValidationException", "bad input", http_status_code=400
        )
        with pytest.raises(client.exceptions.ValidationException):
            embedder.embed_query("t")
    assert waits == []


def test_concurrent_batch_keeps_input_order(client):
    embedder = BedrockTitanEmbedder(client, dimension=256, concurrency=4)
    texts = [f"text {i}" for i in range(12)]

    # Stubber answers in queue order, not by request, so answer every call with a vector
    # derived from its own input.
    def answer(params, **kwargs):
        text = json.loads(params["body"])["inputText"]
        return unit(256, int(text.split()[1]))

    calls = []

    def fake_invoke(**params):
        calls.append(params)
        return response(answer(params))

    embedder.client = type("C", (), {"invoke_model": staticmethod(fake_invoke)})()
    vectors = embedder.embed_documents(texts)
    assert [int(np.argmax(v)) for v in vectors] == list(range(12))
    assert len(calls) == 12


def test_empty_batch_and_empty_text(client):
    embedder = BedrockTitanEmbedder(client, dimension=512)
    assert embedder.embed_documents([]).shape == (0, 512)
    with Stubber(client) as stub:
        stub.add_response("invoke_model", response(unit(512, 0)), expected(" ", 512))
        assert embedder.embed_query("").shape == (512,)


def test_wrong_dimension_is_refused(client):
    with pytest.raises(ValueError, match="dimensions"):
        BedrockTitanEmbedder(client, dimension=384)
    embedder = BedrockTitanEmbedder(client, dimension=256)
    with Stubber(client) as stub:
        stub.add_response(
            "invoke_model",
            response([1.0] * 512),
            {"modelId": MODEL, "body": ANY, "contentType": ANY, "accept": ANY},
        )
        with pytest.raises(ValueError, match="512 dimensions"):
            embedder.embed_query("x")
