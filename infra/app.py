#!/usr/bin/env python3
"""The Bunko CDK app: `cdk synth` / `cdk deploy` from infra/ (see docs/aws.md).

Parameters come from cdk.json's context (`bunko:*`), overridable with `-c key=value`.
cdk-nag's AwsSolutions pack checks the stack on every synth.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# infra/ is imported as the `infra` package from the repository root. Its constructs/ folder
# has no __init__.py on purpose, so `import constructs` still finds the library.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.stacks.bunko_stack import BunkoConfig, BunkoStack


def _context(app: cdk.App, key: str, default: object) -> object:
    value = app.node.try_get_context(f"bunko:{key}")
    if value is None:
        return default
    # -c values arrive as strings; a None default is a profile's number or switch
    if isinstance(default, (list, dict, bool, int)) or default is None:
        return json.loads(value) if isinstance(value, str) else value
    return value


def config_from_context(app: cdk.App) -> BunkoConfig:
    defaults = BunkoConfig()
    values = {
        name: _context(app, _camel(name), getattr(defaults, name))
        for name in BunkoConfig.__dataclass_fields__
    }
    return BunkoConfig(**values)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def build_app(app: cdk.App | None = None) -> tuple[cdk.App, BunkoStack]:
    app = app or cdk.App()
    stack_name = app.node.try_get_context("bunko:stackName") or "Bunko"
    stack = BunkoStack(
        app, stack_name, config=config_from_context(app),
        description="Bunko: a serverless knowledge base (API Gateway, Lambda, S3, DynamoDB, "
        "OpenSearch Serverless, Bedrock)",
    )  # fmt: skip
    cdk.Aspects.of(app).add(AwsSolutionsChecks(verbose=True))
    return app, stack


if __name__ == "__main__":
    built, _ = build_app()
    built.synth()
