"""/chat/stream with Bedrock: ConverseStream answers parsed by botocore from a real
event-stream body, Bedrock errors as error events, and Bedrock Rerank (botocore's Stubber)
reordering the sources exactly as it says."""

from __future__ import annotations

import io
import json
import time

import boto3
import httpx
import pytest
from botocore.awsrequest import AWSResponse
from botocore.stub import ANY, Stubber

from bunko.bootstrap import models
from bunko.server_app import create_app
from tests.aws.eventstream import converse_stream, event, exception
from tests.e2e.chat_harness import ask, load_documents
from tests.e2e.live_server import LiveServer

CLAUDE = "anthropic.claude-3-haiku-20240307-v1:0"
RERANK = "cohere.rerank-v3-5:0"
REGION = "us-east-1"


class RawBody(io.BytesIO):
    def stream(self, amt=1024, **_):  # what urllib3's response offers botocore
        while chunk := self.read(amt):
            yield chunk


class BedrockRuntime:
    """A real bedrock-runtime client whose HTTP exchange is answered in botocore's
    before-send hook: the request is recorded, the response is raw wire bytes.
    (Stubber validates responses against the output shape, which an event stream fails.)"""

    def __init__(self) -> None:
        self.client = boto3.client(
            "bedrock-runtime",
            region_name=REGION,
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )
        self.requests: list[dict] = []
        self.responses: list[tuple[int, bytes, str]] = []
        self.delay = 0.0  # seconds before answering: a slow model
        self.client.meta.events.register("before-send", self._answer)

    def reply(
        self, body: bytes, status: int = 200, content_type="application/vnd.amazon.eventstream"
    ):
        self.responses.append((status, body, content_type))

    def _answer(self, request, **_) -> AWSResponse:
        self.requests.append({"url": request.url, "body": json.loads(request.body)})
        time.sleep(self.delay)
        status, body, content_type = self.responses.pop(0)
        headers = {"Content-Type": content_type}
        if status >= 400:
            headers["x-amzn-ErrorType"] = json.loads(body)["__type"]
        return AWSResponse(request.url, status, headers, RawBody(body))


@pytest.fixture
def bedrock_runtime(rest, monkeypatch):
    runtime = BedrockRuntime()
    agent = boto3.client(
        "bedrock-agent-runtime",
        region_name=REGION,
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    clients = {"bedrock-runtime": runtime.client, "bedrock-agent-runtime": agent}
    # Model clients are built per call from boto_factory, looked up at each call.
    monkeypatch.setattr(models, "boto_factory", lambda service, region: clients[service])
    with Stubber(agent) as rerank:
        yield runtime, rerank
        rerank.assert_no_pending_responses()


def bedrock_user(rest, *, rerank: bool = False, **settings):
    user = rest.new_user()
    load_documents(user)
    llm = user.client.post(
        "/model-configs",
        json={"name": "claude", "provider": "bedrock", "modelId": CLAUDE, "type": "llm"},
    ).json()
    reranker = user.client.post(
        "/model-configs",
        json={"name": "cohere", "provider": "bedrock", "modelId": RERANK, "type": "rerank"},
    ).json()
    values = {
        "selectedLLMId": llm["id"],
        "selectedRerankId": reranker["id"],
        "enableRerank": rerank,
        "temperature": 0.1,
        "maxTokens": 300,
        **settings,
    }
    assert user.client.put("/user-settings", json=values).status_code == 200
    return user


def test_converse_stream_answer_with_grounded_prompt(rest, bedrock_runtime):
    runtime, _ = bedrock_runtime
    user = bedrock_user(rest)
    runtime.reply(converse_stream("It was built ", "in 1872 [1]."))
    answer = ask(user.client, "When was the lighthouse built?", language="en")
    assert answer.done and not answer.errors, answer.errors
    assert answer.text == "It was built in 1872 [1]."
    deltas = [e["data"] for e in answer.events if e["type"] == "content"][-2:]
    assert deltas == ["It was built ", "in 1872 [1]."]  # one event per delta
    assert answer.sources[0]["fileName"] == "lighthouse.txt"
    (request,) = runtime.requests
    assert request["url"].endswith(f"/model/{CLAUDE}/converse-stream".replace(":", "%3A"))
    body = request["body"]
    assert body["inferenceConfig"] == {"temperature": 0.1, "maxTokens": 300}
    assert "[1] (lighthouse.txt)" in body["system"][0]["text"]
    assert body["messages"][-1] == {
        "role": "user",
        "content": [{"text": "When was the lighthouse built?"}],
    }


def test_error_mid_stream_is_an_error_event_then_done(rest, bedrock_runtime):
    runtime, _ = bedrock_runtime
    user = bedrock_user(rest)
    runtime.reply(
        event("messageStart", {"role": "assistant"})
        + event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "It was "}})
        + exception("validationException", "Input is too long for requested model.")
    )
    answer = ask(user.client, "When was the lighthouse built?")
    assert answer.done and answer.text == "It was " and answer.sources is None
    assert len(answer.errors) == 1 and answer.errors[0].startswith("bedrock:")
    assert "too long" in answer.errors[0] and "topK" in answer.errors[0]


def test_access_denied_names_what_to_enable(rest, bedrock_runtime):
    runtime, _ = bedrock_runtime
    user = bedrock_user(rest)
    denied = {"__type": "AccessDeniedException", "message": "no access"}
    runtime.reply(json.dumps(denied).encode(), status=403, content_type="application/json")
    answer = ask(user.client, "When was the lighthouse built?")
    assert answer.done and answer.text == "" and answer.sources is None
    assert "Model access" in answer.errors[0] and CLAUDE in answer.errors[0]


def test_throttling_is_retried_then_answers(rest, bedrock_runtime):
    runtime, _ = bedrock_runtime
    user = bedrock_user(rest)
    throttled = {"__type": "ThrottlingException", "message": "slow down"}
    runtime.reply(json.dumps(throttled).encode(), status=429, content_type="application/json")
    runtime.reply(converse_stream("Built in 1872 [1]."))
    answer = ask(user.client, "When was the lighthouse built?")
    assert not answer.errors and answer.text == "Built in 1872 [1]."
    assert len(runtime.requests) == 2


QUESTION = "lighthouse bakery bread museum"


def test_rerank_on_and_off(rest, bedrock_runtime):
    runtime, rerank = bedrock_runtime
    user = bedrock_user(rest, rerank=False, similarityThreshold=0, topK=2)
    runtime.reply(converse_stream("ok [1]"))
    plain = [s["fileName"] for s in ask(user.client, QUESTION).sources]
    assert sorted(plain) == ["bakery.txt", "lighthouse.txt"]

    assert user.client.put("/user-settings", json={"enableRerank": True}).status_code == 200
    # The reranker reverses the search order.
    rerank.add_response(
        "rerank",
        {"results": [{"index": 1, "relevanceScore": 0.91}, {"index": 0, "relevanceScore": 0.12}]},
        {
            "queries": [{"type": "TEXT", "textQuery": {"text": QUESTION}}],
            "sources": ANY,
            "rerankingConfiguration": {
                "type": "BEDROCK_RERANKING_MODEL",
                "bedrockRerankingConfiguration": {
                    "numberOfResults": 2,
                    "modelConfiguration": {
                        "modelArn": f"arn:aws:bedrock:{REGION}::foundation-model/{RERANK}"
                    },
                },
            },
        },
    )
    runtime.reply(converse_stream("ok [1]"))
    reranked = ask(user.client, QUESTION).sources
    assert [s["fileName"] for s in reranked] == plain[::-1]
    assert [s["score"] for s in reranked] == [0.91, 0.12]
    # the prompt numbers the sources in the reranker's order
    system = runtime.requests[-1]["body"]["system"][0]["text"]
    assert system.index(f"[1] ({plain[1]})") < system.index(f"[2] ({plain[0]})")


@pytest.mark.slow  # waits for a slow model by design
def test_keep_alive_comments_while_the_model_is_slow(rest, bedrock_runtime):
    runtime, _ = bedrock_runtime
    runtime.delay = 2.0
    user = bedrock_user(rest)
    runtime.reply(converse_stream("Built in 1872 [1]."))
    body = {"message": "When was the lighthouse built?"}
    # the same services, served by an app that pings every 0.5 s (15 s in production)
    with (
        LiveServer(create_app(rest.services, keep_alive_seconds=0.5)) as live,
        httpx.Client(base_url=live.url, headers=user.client.headers, timeout=60) as client,
        client.stream("POST", "/chat/stream", json=body) as response,
    ):
        lines = list(response.iter_lines())
    comments = [line for line in lines if line.startswith(":")]
    assert len(comments) >= 2, lines
    assert lines.index(comments[0]) < lines.index(
        'data: {"type": "content", "data": "Built in 1872 [1]."}'
    )
    assert [line for line in lines if line.startswith("data:")][-1] == "data: [DONE]"
