"""Chat models on Bedrock as docs/aws.md recommends them: cross-region inference profiles
(`us.anthropic…`), which most current models need, and third-party models whose first use
subscribes through AWS Marketplace. The grants, read from the synthesized template."""

from __future__ import annotations

import pytest

from tests.infra.conftest import synthesize
from tests.infra.template_queries import nag_errors

pytestmark = pytest.mark.slow  # CDK synth

PROFILE = "us.anthropic.claude-3-5-haiku-20241022-v1:0"
AMAZON = "amazon.nova-lite-v1:0"


def statements(stack, role_prefix: str) -> list[dict]:
    from aws_cdk.assertions import Template

    policies = Template.from_stack(stack).find_resources("AWS::IAM::Policy")
    return [
        s
        for logical, p in policies.items()
        if logical.startswith(role_prefix)
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]


def resources_for(stack, role_prefix: str, action: str) -> list:
    found = []
    for s in statements(stack, role_prefix):
        actions = s["Action"] if isinstance(s["Action"], list) else [s["Action"]]
        if action in actions:
            found += s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]]
    return found


def text(resource) -> str:
    return resource if isinstance(resource, str) else str(resource)


def test_an_inference_profile_grants_the_profile_and_its_model_in_every_region(
    tmp_path_factory,
):
    stack = synthesize(tmp_path_factory, **{"bunko:chatModelIds": [PROFILE, AMAZON]})
    granted = [
        text(r)
        for r in resources_for(
            stack, "FunctionsStreamRole", "bedrock:InvokeModelWithResponseStream"
        )
    ]
    assert any(f"inference-profile/{PROFILE}" in r for r in granted), granted
    assert any(":bedrock:*::foundation-model/anthropic.claude-3-5-haiku" in r for r in granted)
    assert any(f"foundation-model/{AMAZON}" in r and ":bedrock:*:" not in r for r in granted)
    assert not any(f"foundation-model/{PROFILE}" in r for r in granted)  # was denied at run time
    # chat only streams (ConverseStream): no plain InvokeModel on the chat models
    invoke = [text(r) for r in resources_for(stack, "FunctionsStreamRole", "bedrock:InvokeModel")]
    assert len(invoke) == 1 and "titan-embed" in invoke[0]  # the embedding model's alone
    # no product ids given: the functions may not subscribe, and synth says so
    assert resources_for(stack, "FunctionsStreamRole", "aws-marketplace:Subscribe") == []
    assert any("marketplaceProductIds" in w for w in warnings(stack))
    assert nag_errors(stack) == []


def test_marketplace_subscriptions_are_held_to_the_products_named(tmp_path_factory):
    """Subscribe has no resource: without a product condition, a role could subscribe the
    account to anything on AWS Marketplace."""
    stack = synthesize(tmp_path_factory, **{
        "bunko:chatModelIds": [PROFILE], "bunko:rerankModelIds": ["cohere.rerank-v3-5:0"],
        "bunko:marketplaceProductIds": ["prod-5oba7y7jpji56", "prod-cohere-rerank"],
    })  # fmt: skip
    for role in ("FunctionsStreamRole", "FunctionsApiRole"):
        subscribe = [
            s for s in statements(stack, role) if s["Action"] == "aws-marketplace:Subscribe"
        ]
        assert subscribe == [{
            "Action": "aws-marketplace:Subscribe", "Effect": "Allow", "Resource": "*",
            "Condition": {"ForAnyValue:StringEquals": {
                "aws-marketplace:ProductId": ["prod-5oba7y7jpji56", "prod-cohere-rerank"]}},
        }]  # fmt: skip
    assert resources_for(stack, "FunctionsIngestRole", "aws-marketplace:Subscribe") == []
    assert not any("marketplaceProductIds" in w for w in warnings(stack))
    assert nag_errors(stack) == []


def warnings(stack) -> list[str]:
    from aws_cdk.assertions import Annotations, Match

    found = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp(".*"))
    return [str(w.entry.data) for w in found]


def test_models_not_sold_on_marketplace_need_no_subscription(tmp_path_factory):
    stack = synthesize(tmp_path_factory, **{
        "bunko:chatModelIds": [AMAZON, "us.meta.llama3-3-70b-instruct-v1:0",
                               "mistral.mistral-large-2402-v1:0"],
        "bunko:marketplaceProductIds": ["prod-unused"],
    })  # fmt: skip
    assert resources_for(stack, "FunctionsStreamRole", "aws-marketplace:Subscribe") == []
    assert not any("marketplaceProductIds" in w for w in warnings(stack))


def test_rerank_models_get_rerank_and_invoke(tmp_path_factory):
    stack = synthesize(tmp_path_factory, **{"bunko:rerankModelIds": ["cohere.rerank-v3-5:0"]})
    assert resources_for(stack, "FunctionsApiRole", "bedrock:Rerank") == ["*"]
    invoke = [text(r) for r in resources_for(stack, "FunctionsApiRole", "bedrock:InvokeModel")]
    assert any("foundation-model/cohere.rerank-v3-5:0" in r for r in invoke), invoke
    assert nag_errors(stack) == []
