"""`cdk deploy` reads infra/cdk.json: the committed context is what these tests synthesize
(the other infra tests build their own context and never read the file), with cdk-nag's
pack applied as on every synth. Asset bundling is skipped here; `make synth` (run by CI
after the tests) builds the layer too."""

from __future__ import annotations

import sys

import pytest

from tests.infra.conftest import synthesize
from tests.infra.template_queries import committed_context, nag_errors

pytestmark = pytest.mark.slow  # CDK synth


def test_the_committed_context_synthesizes_clean(tmp_path_factory):
    stack = synthesize(tmp_path_factory, **committed_context())
    assert nag_errors(stack) == []


def test_the_committed_runtime_is_the_building_interpreters():
    # The layer's bytecode is compiled by the interpreter that runs `make synth`: the
    # committed runtime must be one this machine (and CI's) has.
    runtime = committed_context()["bunko:pythonVersion"]
    assert runtime == f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.mark.parametrize("stage", ["prod", "v2"])
def test_any_stage_name_synthesizes(tmp_path_factory, stage):
    stack = synthesize(tmp_path_factory, **{"bunko:stageName": stage})
    from aws_cdk.assertions import Template

    stages = Template.from_stack(stack).find_resources("AWS::ApiGateway::Stage")
    assert [s["Properties"]["StageName"] for s in stages.values()] == [stage]
    assert nag_errors(stack) == []  # the WAF finding's suppression follows the stage
