"""Chat on AWS with a workspace's own Bedrock models: an llm config naming a cross-region
inference profile and a rerank config naming Bedrock Rerank, created through the api
function, answer a question on the stream function (which serves /chat/stream on AWS).

Bedrock is stood in for by wrapping whichever client factory is current (so the permission
recorder's hook stays on the clients): Rerank with botocore's Stubber; ConverseStream with
event-stream bytes in the before-send hook, since the Stubber validates a response against
the output shape, which an event stream fails (as in tests/e2e/test_chat_bedrock.py)."""

from __future__ import annotations

import base64
import io
import json
from dataclasses import dataclass, field

import pytest
from botocore.awsrequest import AWSResponse
from botocore.stub import ANY, Stubber
from fastapi.testclient import TestClient
from moto.core.models import botocore_stubber as moto_answers

from bunko.bootstrap import models
from tests.aws.conftest import FakeLambdaContext
from tests.aws.eventstream import converse_stream
from tests.aws.handlers import api_event, call, load_event, load_function, sign_in
from tests.aws.stand_ins import REGION

CLAUDE = "us.anthropic.claude-3-5-haiku-20241022-v1:0"  # an inference profile
RERANK = "amazon.rerank-v1:0"
BOUNDARY = "bunko-models-boundary"
DOCUMENTS = {
    "cats.md": "Cats purr when they are content and sleep through most of the night.",
    "owls.md": "Owls hunt at night and turn their heads almost all the way round.",
}
QUESTION = "What do cats and owls do at night?"


class RawBody(io.BytesIO):
    def stream(self, amt=1024, **_):  # what urllib3's response offers botocore
        while chunk := self.read(amt):
            yield chunk


@dataclass
class Bedrock:
    """What the clients the models ask for are answered with, and what they were sent."""

    answers: list[bytes] = field(default_factory=list)  # ConverseStream bodies, in order
    reranks: list[tuple[dict, dict]] = field(default_factory=list)  # (response, expected)
    conversations: list[dict] = field(default_factory=list)  # ConverseStream requests
    reranked: list[dict] = field(default_factory=list)  # Rerank parameters
    stubbers: list[Stubber] = field(default_factory=list)

    def wrap(self, service: str, client):
        if service == "bedrock-agent-runtime":
            client.meta.events.register(
                "before-parameter-build.bedrock-agent-runtime.Rerank",
                lambda params, **_: self.reranked.append(params),
            )
            stubber = Stubber(client)
            while self.reranks:
                response, expected = self.reranks.pop(0)
                stubber.add_response("rerank", response, expected)
            stubber.activate()
            self.stubbers.append(stubber)
        else:
            # moto answers bedrock-runtime too (every handler runs), without ConverseStream
            client.meta.events.unregister("before-send", moto_answers)
            client.meta.events.register("before-send", self._converse)
        return client

    def _converse(self, request, **_) -> AWSResponse:
        self.conversations.append({"url": request.url, "body": json.loads(request.body)})
        headers = {"Content-Type": "application/vnd.amazon.eventstream"}
        return AWSResponse(request.url, 200, headers, RawBody(self.answers.pop(0)))


@pytest.fixture
def bedrock(monkeypatch):
    stand_in = Bedrock()
    previous = models.boto_factory  # the recorder's, in the permission contract's run
    monkeypatch.setattr(
        models,
        "boto_factory",
        lambda service, region: stand_in.wrap(service, previous(service, region)),
    )
    yield stand_in
    for stubber in stand_in.stubbers:
        stubber.assert_no_pending_responses()
        stubber.deactivate()


def upload(api, token: str, name: str, text: str) -> None:
    body = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        f"Content-Type: text/markdown\r\n\r\n{text}\r\n--{BOUNDARY}--\r\n"
    ).encode()
    event = api_event("POST", "/upload", headers={
        "Authorization": f"Bearer {token}",
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
    })  # fmt: skip
    event["body"], event["isBase64Encoded"] = base64.b64encode(body).decode(), True
    response = api.handler(event, FakeLambdaContext())
    assert response["statusCode"] == 201, response["body"]


def index_queued(aws_env) -> None:
    """The ingest function, given every queued job as the event source would."""
    ingest = load_function("ingest")
    template = load_event("sqs_ingest_job.json")
    for message in aws_env.receive_all(aws_env.queue_url):
        template["Records"][0]["body"] = message["Body"]
        assert ingest.handler(template, FakeLambdaContext()) == {"batchItemFailures": []}


def ask(stream: TestClient, token: str, message: str) -> list[dict]:
    """POST /chat/stream on the stream function: its events, up to [DONE]."""
    response = stream.post(
        "/chat/stream",
        json={"message": message, "userLanguage": "en"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200, response.text
    data = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
    assert data[-1] == "[DONE]", data
    return [json.loads(d) for d in data[:-1]]


def test_chat_with_a_bedrock_inference_profile_and_bedrock_rerank(
    api_with_accounts, aws_env, bedrock
):
    api = api_with_accounts
    # The stream function's app is the api function's app with a middleware more, which
    # can only be added before the app serves its first request.
    stream = TestClient(load_function("stream", "main").build())
    token = sign_in(api)
    for name, text in DOCUMENTS.items():
        upload(api, token, name, text)
    index_queued(aws_env)
    ids = {}
    for name, model_id, kind in (("claude", CLAUDE, "llm"), ("rerank", RERANK, "rerank")):
        status, config = call(api, "POST", "/model-configs", {
            "name": name, "provider": "bedrock", "modelId": model_id, "type": kind,
        }, token=token)  # fmt: skip
        assert status == 201, config
        ids[kind] = config["id"]
    status, saved = call(api, "PUT", "/user-settings", {
        "selectedLLMId": ids["llm"], "selectedRerankId": ids["rerank"], "enableRerank": True,
        "similarityThreshold": 0, "topK": 2, "temperature": 0.1, "maxTokens": 300,
    }, token=token)  # fmt: skip
    assert status == 200, saved

    # The reranker reverses the order the search found the passages in.
    bedrock.reranks.append((
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
    ))  # fmt: skip
    bedrock.answers.append(converse_stream("Cats sleep [2] ", "and owls hunt [1]."))
    with stream:
        events = ask(stream, token, QUESTION)

    assert [e["data"] for e in events if e["type"] == "error"] == []
    answer = [e["data"] for e in events if e["type"] == "content"][-2:]
    assert "".join(answer) == "Cats sleep [2] and owls hunt [1]."
    [sources] = [e["data"] for e in events if e["type"] == "sources"]
    [rerank] = bedrock.reranked
    searched = [s["inlineDocumentSource"]["textDocument"]["text"] for s in rerank["sources"]]
    assert sorted(searched) == sorted(DOCUMENTS.values())
    assert [s["content"] for s in sources] == searched[::-1]
    assert [s["score"] for s in sources] == [0.91, 0.12]
    # The profile is what Bedrock is asked for, and the prompt numbers the passages in the
    # reranker's order.
    [conversation] = bedrock.conversations
    assert conversation["url"].endswith(f"/model/{CLAUDE}/converse-stream".replace(":", "%3A"))
    system = conversation["body"]["system"][0]["text"]
    first, second = (s["fileName"] for s in sources)
    assert system.index(f"[1] ({first})") < system.index(f"[2] ({second})")
