"""Shared reads of the CDK app: infra/cdk.json's committed context, a synthesized template's
resources of a kind and their logical ids, and a stack's cdk-nag errors."""

from __future__ import annotations

import json
from pathlib import Path

CDK_JSON = Path(__file__).resolve().parents[2] / "infra" / "cdk.json"


def committed_context() -> dict:
    return json.loads(CDK_JSON.read_text(encoding="utf-8"))["context"]


def nag_errors(stack) -> list:
    from aws_cdk.assertions import Annotations, Match

    errors = Annotations.from_stack(stack).find_error("*", Match.string_like_regexp(".*"))
    return [e.entry.data for e in errors]


def resources(template, kind: str) -> dict:
    return template.find_resources(kind)


def logical_id(template, kind: str, fragment: str) -> str:
    [found] = [k for k in resources(template, kind) if fragment in k]
    return found
