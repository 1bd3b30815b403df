"""The CDK app synthesized once per session, with asset bundling skipped (CDK's
`aws:cdk:bundling-stacks` context), and cdk-nag's AwsSolutions pack applied."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "1")

aws_cdk = pytest.importorskip("aws_cdk", reason="the cdk extra is not installed")

from aws_cdk.assertions import Annotations, Template  # noqa: E402

from infra.app import build_app  # noqa: E402


def synthesize(tmp_path_factory, **context):
    """The stack synthesized with these context values (no asset bundling)."""
    app = aws_cdk.App(
        context={"aws:cdk:bundling-stacks": [], **context},
        outdir=str(tmp_path_factory.mktemp("cdk.out")),
    )
    app, stack = build_app(app)
    app.synth()
    return stack


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory):
    return synthesize(tmp_path_factory)


@pytest.fixture(scope="session")
def template(synthesized) -> Template:
    return Template.from_stack(synthesized)


@pytest.fixture(scope="session")
def annotations(synthesized) -> Annotations:
    return Annotations.from_stack(synthesized)
