"""bunko:signup reaches the functions that sign people up as BUNKO_SIGNUP (issue 49, point 5):
closed unless the context says open, and nothing else accepted."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from bunko.config import Settings
from infra.stacks.bunko_stack import BunkoConfig

pytestmark = pytest.mark.slow  # CDK synth


def test_only_open_or_closed():
    assert BunkoConfig().signup == "closed"
    with pytest.raises(ValueError, match="bunko:signup"):
        BunkoConfig(signup="invite")


@pytest.mark.parametrize("context", [{}, {"bunko:signup": "open"}])
def test_the_web_functions_read_the_setting(tmp_path_factory, monkeypatch, context):
    from infra.app import build_app

    app = cdk.App(
        context={"aws:cdk:bundling-stacks": [], **context},
        outdir=str(tmp_path_factory.mktemp("cdk.signup")),
    )
    _, stack = build_app(app)
    services = {
        f["Properties"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]: f["Properties"]
        for f in Template.from_stack(stack).find_resources("AWS::Lambda::Function").values()
        if "POWERTOOLS_SERVICE_NAME" in f["Properties"].get("Environment", {}).get("Variables", {})
    }
    expected = context.get("bunko:signup", "closed")
    for name in ("bunko-api", "bunko-stream"):
        value = services[name]["Environment"]["Variables"]["BUNKO_SIGNUP"]
        assert value == expected
        monkeypatch.setenv("BUNKO_SIGNUP", value)  # the name the functions read it under
        assert Settings(_env_file=None).signup == expected
    assert "BUNKO_SIGNUP" not in services["bunko-ingest"]["Environment"]["Variables"]
