"""A pytest plugin that records the AWS calls each Lambda function makes while tests run.

Load it with `-p tests.aws.permission_recorder` and BUNKO_PERMISSION_RECORD=<file>: every
boto3 client and OpenSearch client the composition root builds (bunko.adapters.aws.clients)
gets a `provide-client-params` hook (it fires for real calls and for presigned URLs alike,
and before botocore's Stubber answers), and each call is written down as IAM actions on
concrete resources, under the function whose graph built the client (`lambda_entry.api_app`:
api and stream; `ingest_handler`: ingest). The Bedrock chat and rerank clients a model config
asks for (bunko.bootstrap.models.boto_factory) are hooked the same way, as the web functions'.
tests/infra/test_permission_contract.py checks the record against the synthesized roles.
"""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict
from typing import Any
from urllib.parse import urlparse

RECORD: dict[str, set[tuple[str, str]]] = defaultdict(set)
_BUILDERS = {
    "api_app": "api",
    "ingest_handler": "ingest",
    "ingest_retries": "ingest",
    "sources": "sources",
    "moves": "ingest",  # a library's move, run by the ingest function
}
CONVERSE_ACTIONS = {"Converse": "InvokeModel", "ConverseStream": "InvokeModelWithResponseStream"}
# Cross-region inference profile ids start with one of these (us.anthropic.claude-…).
INFERENCE_PROFILE_GEOGRAPHIES = frozenset(
    ["us", "us-gov", "eu", "apac", "jp", "au", "ca", "global"]
)


def _function_building() -> str:
    """Which function's graph is being built: the lambda_entry builder on the stack."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name in _BUILDERS and code.co_filename.endswith("lambda_entry.py"):
            return _BUILDERS[code.co_name]
        frame = frame.f_back
    return "outside-functions"  # a test's own client: not a function's call


def iam_calls(service: str, operation: str, params: dict[str, Any]) -> list[tuple[str, str]]:
    """(IAM action, resource) pairs one API call needs; resources as `kind:name[/detail]`."""
    if service == "s3":
        bucket = params.get("Bucket", "")
        if operation in ("ListObjectsV2", "ListObjects"):
            return [("s3:ListBucket", f"bucket:{bucket}?prefix={params.get('Prefix', '')}")]
        if operation == "DeleteObjects":
            keys = [o["Key"] for o in params.get("Delete", {}).get("Objects", [])]
            return [("s3:DeleteObject", f"object:{bucket}/{k}") for k in keys]
        action = {"HeadObject": "GetObject"}.get(operation, operation)
        if operation == "DeleteObject" and params.get("VersionId"):
            action = "DeleteObjectVersion"  # IAM's action for deleting one version
        found = [(f"s3:{action}", f"object:{bucket}/{params.get('Key', '')}")]
        if operation == "PutObject" and params.get("Tagging"):
            # S3 authorises a PUT with x-amz-tagging on PutObjectTagging as well
            found.append(("s3:PutObjectTagging", f"object:{bucket}/{params.get('Key', '')}"))
        return found
    if service == "dynamodb":
        return _dynamodb(operation, params)
    if service == "sqs":
        return [(f"sqs:{operation}", f"queue:{params.get('QueueUrl', '').rsplit('/', 1)[-1]}")]
    if service == "bedrock-runtime":
        # The Converse API has no actions of its own: AWS authorises Converse with
        # InvokeModel and ConverseStream with InvokeModelWithResponseStream.
        action = CONVERSE_ACTIONS.get(operation, operation)
        return _on_model(f"bedrock:{action}", params.get("modelId", ""))
    if service == "bedrock-agent-runtime" and operation == "Rerank":
        # Rerank itself has no resource; the reranking model is invoked by its ARN.
        model = (params.get("rerankingConfiguration", {}).get("bedrockRerankingConfiguration", {})
                 .get("modelConfiguration", {}).get("modelArn", ""))  # fmt: skip
        return [("bedrock:Rerank", "*"), *_on_model("bedrock:InvokeModel", model)]
    if service == "kms":
        return [(f"kms:{operation}", f"key:{params.get('KeyId')}")]
    if service == "secretsmanager":
        return [(f"secretsmanager:{operation}", f"secret:{params.get('SecretId')}")]
    return [(f"{service}:{operation}", "*")]


def _on_model(action: str, model: str) -> list[tuple[str, str]]:
    """A foundation model: `model:<id>`. A cross-region inference profile is authorised on
    itself (`profile:<id>`) and on its foundation model in every region it may route the
    call to (`routed:<model id>`). An ARN names its model or profile after the `/`."""
    model = model.split("/", 1)[1] if model.startswith("arn:") else model
    geography, _, routed = model.partition(".")
    if geography in INFERENCE_PROFILE_GEOGRAPHIES and routed:
        return [(action, f"profile:{model}"), (action, f"routed:{routed}")]
    return [(action, f"model:{model}")]


def _dynamodb(operation: str, params: dict[str, Any]) -> list[tuple[str, str]]:
    if operation == "TransactWriteItems":
        kinds = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                 "ConditionCheck": "ConditionCheckItem"}  # fmt: skip
        return [
            (f"dynamodb:{kinds[kind]}", f"table:{part['TableName']}")
            for item in params.get("TransactItems", [])
            for kind, part in item.items()
        ]
    if operation == "TransactGetItems":
        return [("dynamodb:GetItem", f"table:{i['Get']['TableName']}")
                for i in params.get("TransactItems", [])]  # fmt: skip
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [(f"dynamodb:{operation}", f"table:{t}") for t in params.get("RequestItems", {})]
    table = f"table:{params.get('TableName')}"
    if params.get("IndexName"):
        table += f"/index/{params['IndexName']}"
    return [(f"dynamodb:{operation}", table)]


def opensearch_permission(method: str, url: str) -> str:
    """The data access policy permission an OpenSearch request needs (AWS's table of
    supported operations for OpenSearch Serverless)."""
    path = urlparse(url).path
    # _analyze (the keyword weight's tokens) is counted as a read: not confirmed against a
    # real collection (docs/aws.md, "What was not run").
    if any(part in path for part in ("_search", "_msearch", "_count", "_analyze")):
        return "aoss:ReadDocument"
    if "_bulk" in path or "_doc" in path:
        return "aoss:WriteDocument"
    if method in ("HEAD", "GET"):
        return "aoss:DescribeIndex"
    if method == "PUT" and path.rstrip("/").endswith("/_mapping"):
        return "aoss:UpdateIndex"  # a field added to an existing index
    if method == "PUT":
        return "aoss:CreateIndex"
    if method == "DELETE" and "/_" not in path and path.strip("/").count("/") == 0:
        return "aoss:DeleteIndex"  # the whole index (a retired model's own)
    return f"aoss:{method}:{path}"


def opensearch_index(url: str) -> str:
    """`index:<name>`: the index a request names first (`index:*` for none: the data access
    policy then has to allow it on every index)."""
    first = urlparse(url).path.lstrip("/").split("/", 1)[0]
    return f"index:{'*' if not first or first.startswith('_') else first}"


def _install() -> None:
    from bunko.adapters.aws import clients

    real_boto, real_opensearch = clients.boto_client, clients.opensearch_client

    def boto_client(service: str, settings: Any) -> Any:
        client = real_boto(service, settings)
        _record_calls(client, service, _function_building())
        return client

    def opensearch_client(settings: Any) -> Any:
        client = real_opensearch(settings)
        function = _function_building()
        perform = client.transport.perform_request

        def recorded(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            RECORD[function].add((opensearch_permission(method, url), opensearch_index(url)))
            return perform(method, url, *args, **kwargs)

        client.transport.perform_request = recorded
        return client

    clients.boto_client = boto_client
    clients.opensearch_client = opensearch_client
    _install_model_clients()


def _install_model_clients() -> None:
    """Chat models and rerankers get their clients per request, from a user's model config
    (bunko.bootstrap.models), long after a builder returned: the stack cannot tell whose
    call it is. Only the web functions answer chat (the ingest function builds the same
    services but never calls a chat model or a reranker): their calls are the api's."""
    from bunko.bootstrap import models

    real = models.boto_factory

    def boto_factory(service: str, region: str | None) -> Any:
        client = real(service, region)
        _record_calls(client, service, "api")
        return client

    models.boto_factory = boto_factory


def _record_calls(client: Any, service: str, function: str) -> None:
    def record(params: dict, model: Any, **_: Any) -> None:
        for call in iam_calls(service, model.name, params):
            RECORD[function].add(call)

    client.meta.events.register("provide-client-params", record)


def pytest_configure(config) -> None:
    if os.environ.get("BUNKO_PERMISSION_RECORD"):
        _install()


def pytest_unconfigure(config) -> None:
    target = os.environ.get("BUNKO_PERMISSION_RECORD")
    if target:
        with open(target, "w", encoding="utf-8") as out:
            json.dump({f: sorted(map(list, calls)) for f, calls in RECORD.items()}, out, indent=1)
