"""The stack with an OpenAI-compatible embeddings endpoint (bunko:embeddingProvider=openai):
the functions that embed, and only they, may read the one secret that holds the endpoint's
key; the settings reach them as environment variables; the index has the endpoint's size;
no Bedrock grant is left; cdk-nag stays clean. Plus the synth-time checks of the settings."""

from __future__ import annotations

import json

import aws_cdk
import pytest
from aws_cdk.assertions import Annotations, Match, Template

from infra.app import build_app
from infra.stacks.bunko_stack import BunkoConfig
from infra.stacks.embedding import secret_resource

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
def synthesized(tmp_path_factory):
    app = aws_cdk.App(
        context={"aws:cdk:bundling-stacks": [], **CONTEXT},
        outdir=str(tmp_path_factory.mktemp("cdk.out")),
    )
    app, stack = build_app(app)
    app.synth()
    return stack


@pytest.fixture(scope="module")
def template(synthesized) -> Template:
    return Template.from_stack(synthesized)


def role_actions(template: Template) -> dict[str, set[tuple[str, str]]]:
    """(action, resource as JSON) per role policy's logical id."""
    found: dict[str, set[tuple[str, str]]] = {}
    for logical, policy in template.find_resources("AWS::IAM::Policy").items():
        pairs = found.setdefault(logical, set())
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"]
            resources = statement["Resource"]
            for action in actions if isinstance(actions, list) else [actions]:
                for resource in resources if isinstance(resources, list) else [resources]:
                    pairs.add((action, json.dumps(resource, sort_keys=True)))
    return found


def test_only_the_embedding_functions_may_read_exactly_that_secret(template):
    wanted = json.dumps(
        {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":secretsmanager:",
                           {"Ref": "AWS::Region"}, ":", {"Ref": "AWS::AccountId"},
                           f":secret:{SECRET}-??????"]]},
        sort_keys=True,
    )  # fmt: skip
    readers = set()
    for logical, pairs in role_actions(template).items():
        mentions = {(a, r) for a, r in pairs if SECRET in r}
        if mentions:
            assert mentions == {("secretsmanager:GetSecretValue", wanted)}, logical
            readers.add(logical)
    assert len(readers) == 3
    assert {r.removeprefix("Functions").split("Role")[0] for r in readers} == set(EMBEDDERS)


def test_the_settings_reach_the_embedding_functions_and_no_key_does(template):
    functions = template.find_resources("AWS::Lambda::Function")
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


def test_the_index_has_the_endpoints_size_and_no_bedrock_grant_is_left(template):
    template.has_resource_properties(
        "Custom::BunkoSearchIndex", {"IndexName": INDEX, "Dimension": "1024"}
    )
    actions = {a for pairs in role_actions(template).values() for a, _ in pairs}
    assert not [a for a in actions if a.startswith("bedrock:")]


def test_cdk_nag_aws_solutions_is_clean(synthesized):
    annotations = Annotations.from_stack(synthesized)
    pattern = Match.string_like_regexp("AwsSolutions-.*")
    assert [(e.id, e.entry.data) for e in annotations.find_error("*", pattern)] == []
    assert [(w.id, w.entry.data) for w in annotations.find_warning("*", pattern)] == []


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
    ],
)  # fmt: skip
def test_embedding_settings_are_checked_at_synth(fields, message):
    with pytest.raises(ValueError, match=message):
        BunkoConfig(**fields)
