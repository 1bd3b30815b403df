"""The CDK app synthesized once per session, with asset bundling skipped (CDK's
`aws:cdk:bundling-stacks` context), and cdk-nag's AwsSolutions pack applied."""

from __future__ import annotations

import importlib.util
import os

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "1")

# Looked up, not imported: importing aws_cdk starts a Node process, which the modules here
# that never synthesize (and a run that deselects the synths) need not pay for.
if importlib.util.find_spec("aws_cdk") is None:
    pytest.skip("the cdk extra is not installed", allow_module_level=True)


def synthesize(tmp_path_factory, **context):
    """The stack synthesized with these context values (no asset bundling)."""
    import aws_cdk

    from infra.app import build_app

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
def template(synthesized):
    from aws_cdk.assertions import Template

    return Template.from_stack(synthesized)


@pytest.fixture(scope="session")
def annotations(synthesized):
    from aws_cdk.assertions import Annotations

    return Annotations.from_stack(synthesized)
