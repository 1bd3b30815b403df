"""The permission contract: IAM follows the code, not the other way round.

The handler tests run in a child pytest with tests/aws/permission_recorder.py, which hooks
every client the composition root builds and writes down, per function, the IAM actions
and resources of each AWS call. Then, against the synthesized template:

1. every recorded call is granted to that function's role, on that resource (the ingest
   function reading the JWT secret would fail here, as it would in a real account);
2. every grant of the role is used by some recorded call, or is in UNRECORDED_GRANTS below,
   each with the reason no test of the code can make that call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from tests.infra.conftest import synthesize
from tests.infra.iam_grants import (
    RECORD_OF,
    grants,
    iam_calls,
    logical,
    render,
    role_statements,
    symbolic,
)

pytestmark = pytest.mark.slow  # a child pytest over tests/aws, then a CDK synth

REPO_ROOT = Path(__file__).resolve().parents[2]
RECORDED_TESTS = [
    "tests/aws/test_handlers.py",
    "tests/aws/test_api_gateway.py",
    "tests/aws/test_api_lifecycle.py",
    "tests/aws/test_accounts_on_aws.py",
    "tests/aws/test_workspace_model_on_aws.py",
    "tests/aws/test_models_on_aws.py",
    "tests/aws/test_sources_on_aws.py",
    "tests/aws/test_move_jobs_on_lambda.py",  # a library's move: api, then ingest
]
# The models tests/aws/test_models_on_aws.py chats and reranks with: the stack grants chat
# and rerank only on the models it is told of (bunko:chatModelIds, bunko:rerankModelIds).
CHAT_MODEL = "us.anthropic.claude-3-5-haiku-20241022-v1:0"  # an inference profile
RERANK_MODEL = "amazon.rerank-v1:0"
TEST_INDEX = "bunko-test"  # tests/aws/conftest.py's index, standing for the deployment's
_RUNTIME = "the Lambda service writes the function's logs with its role, not Bunko's code"
_XRAY = "tracing ACTIVE: Lambda sends the invocation's trace segments with the function's role"
_POLLER = "the SQS event source mapping polls, deletes and extends messages with this role"
_BEDROCK = (
    "the handler tests run keyword-only (BUNKO_EMBEDDING_PROVIDER=none: the OpenSearch "
    "stand-in has no k-NN); the embedder's InvokeModel call is checked with botocore's "
    "Stubber in test_bedrock_embedder.py, on exactly the configured model"
)
# the stack's default embedding model (Titan Text Embeddings), which this template has
_EMBEDDING_MODEL = (
    "arn:<AWS::Partition>:bedrock:<AWS::Region>::foundation-model/amazon.titan-embed-*"
)
_MARKETPLACE = (
    "a third-party model's first use subscribes to it through AWS Marketplace: Bedrock "
    "makes these calls with the caller's role, no code of Bunko's does"
)
_DOWNLOADS = (
    "the web functions read originals and extracted text from blobs/ (downloads, "
    "reindexing, LibreOffice conversions): routes the handler tests do not call"
)
_STORE = "the metadata store's paths beyond the handler tests (tests/contract runs them on moto)"
# (function, IAM action), or (function, IAM action, resource glob), granted though no
# recorded call makes it, and why.
UNRECORDED_GRANTS = {
    **{(f, "logs:CreateLogStream"): _RUNTIME for f in RECORD_OF},
    **{(f, "logs:PutLogEvents"): _RUNTIME for f in RECORD_OF},
    **{
        (f, a): _XRAY
        for f in RECORD_OF
        for a in (
            "xray:PutTraceSegments",
            "xray:PutTelemetryRecords",
            "xray:GetSamplingRules",
            "xray:GetSamplingTargets",
            "xray:GetSamplingStatisticSummaries",
        )
    },
    **{
        ("Ingest", a): _POLLER
        for a in (
            "sqs:ReceiveMessage",
            "sqs:ChangeMessageVisibility",
            "sqs:GetQueueUrl",
            "sqs:DeleteMessage",
            "sqs:GetQueueAttributes",
        )
    },
    **{(f, "bedrock:InvokeModel", _EMBEDDING_MODEL): _BEDROCK for f in RECORD_OF},
    **{
        (f, a): _MARKETPLACE
        for f in ("Api", "Stream")
        for a in ("aws-marketplace:ViewSubscriptions", "aws-marketplace:Subscribe")
    },
    **{(f, "s3:GetObject"): _DOWNLOADS for f in ("Api", "Stream")},
    ("Sources", "kms:Decrypt"): (
        "a source's credential (the connectors that take one) is decrypted with the model "
        "keys' key; the website the handler tests sync takes none"
    ),
    ("Ingest", "s3:DeleteObjectVersion"): (
        "a presigned upload over its uploader's quota on arrival: its version is deleted "
        "(tests/aws/test_presign_limits.py)"
    ),
    # One metadata store serves every function, with one grant; the handler tests do not
    # reach every store path (clearing scans, category listings on gsi2, uniqueness
    # condition checks), which the store's contract suite runs against moto.
    **{
        (f, a): _STORE
        for f in RECORD_OF
        for a in (
            "dynamodb:ConditionCheckItem",
            "dynamodb:Scan",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
            "dynamodb:BatchGetItem",
            "dynamodb:BatchWriteItem",
            "dynamodb:DeleteItem",
        )
    },
}


@pytest.fixture(scope="module")
def models_template(tmp_path_factory):
    """The stack as deployed with the recorded tests' chat and rerank models (this module's
    own: the shared `template` grants no chat or rerank model)."""
    from aws_cdk.assertions import Template

    return Template.from_stack(synthesize(
        tmp_path_factory,
        **{"bunko:chatModelIds": [CHAT_MODEL], "bunko:rerankModelIds": [RERANK_MODEL]},
    ))  # fmt: skip


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict[str, set[tuple[str, str]]]:
    pytest.importorskip("moto")
    target = tmp_path_factory.mktemp("permissions") / "record.json"
    env = dict(os.environ, BUNKO_PERMISSION_RECORD=str(target))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-p", "tests.aws.permission_recorder", *RECORDED_TESTS],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    raw = json.loads(target.read_text(encoding="utf-8"))
    return {name: {tuple(call) for call in calls} for name, calls in raw.items()}


@pytest.mark.parametrize("function", sorted(RECORD_OF))
def test_every_recorded_call_is_granted_on_its_resource(models_template, recorded, function):
    calls = iam_calls(recorded.get(RECORD_OF[function], set()))
    assert calls, f"nothing recorded for {function}"
    statements = role_statements(models_template, function)
    missing = []
    for action, resource in sorted(calls):
        name, prefix = symbolic(models_template, resource)
        if not grants(statements, action, name, prefix):
            missing.append((action, resource))
    if missing:
        pytest.fail("not granted:\n" + "\n".join(map(str, missing)))


def excused(function: str, action: str, resource: str) -> bool:
    return (function, action) in UNRECORDED_GRANTS or any(
        key[:2] == (function, action) and fnmatchcase(resource, key[2])
        for key in UNRECORDED_GRANTS
        if len(key) == 3
    )


@pytest.mark.parametrize("function", sorted(RECORD_OF))
def test_every_grant_is_used_or_documented(models_template, recorded, function):
    calls = iam_calls(recorded.get(RECORD_OF[function], set()))
    used = [(a, *symbolic(models_template, r)) for a, r in calls]
    unused = []
    for statement in role_statements(models_template, function):
        for action in statement["actions"]:
            for resource in statement["resources"]:
                if excused(function, action, resource):
                    continue
                if not any(a == action and fnmatchcase(r, resource) for a, r, _ in used):
                    unused.append((action, resource))
    if unused:
        pytest.fail("granted, never called, not documented:\n" + "\n".join(map(str, unused)))


@pytest.mark.parametrize("function", sorted(RECORD_OF))
def test_opensearch_calls_are_in_the_data_access_policy(models_template, recorded, function):
    """Each recorded request's permission on its index, as the deployment names it (the
    tests' index stands for the deployment's; `<index>-m-<id>` for a model's own)."""
    needed = {
        (a, r.removeprefix("index:")) for a, r in recorded.get(RECORD_OF[function], set())
        if a.startswith("aoss:")
    }  # fmt: skip
    assert needed, f"no OpenSearch call recorded for {function}"
    [policy] = models_template.find_resources("AWS::OpenSearchServerless::AccessPolicy").values()
    document = json.loads(render(policy["Properties"]["Policy"]))
    role = f"<{logical(models_template, 'AWS::IAM::Role', f'Functions{function}Role')}.Arn>"
    rules = [
        rule for statement in document if role in statement["Principal"]
        for rule in statement["Rules"] if rule["ResourceType"] == "index"
    ]  # fmt: skip
    [collection] = {r.split("/")[1] for rule in rules for r in rule["Resource"]}
    deployed = deployment_index(models_template)
    missing = []
    for permission, index in sorted(needed):
        name = f"index/{collection}/" + (index.replace(TEST_INDEX, deployed, 1))
        if not any(
            permission in rule["Permission"] and any(fnmatchcase(name, r) for r in rule["Resource"])
            for rule in rules
        ):
            missing.append((permission, name))
    assert not missing, f"not in the data access policy: {missing}"


def test_only_model_indexes_are_created_at_run_time(models_template):
    """The functions may create `<index>-m-*` only; the deployment's own index is the setup
    function's, which alone may add a field to its mapping (UpdateIndex)."""
    [policy] = models_template.find_resources("AWS::OpenSearchServerless::AccessPolicy").values()
    document = json.loads(render(policy["Properties"]["Policy"]))
    creates = {
        (tuple(statement["Principal"]), resource)
        for statement in document for rule in statement["Rules"]
        if "aoss:CreateIndex" in rule.get("Permission", []) for resource in rule["Resource"]
    }  # fmt: skip
    deployed = deployment_index(models_template)
    functions = {f"<{logical(models_template, 'AWS::IAM::Role', f'Functions{f}Role')}.Arn>"
                 for f in RECORD_OF}  # fmt: skip
    for principals, resource in creates:
        if functions & set(principals):
            assert resource.endswith(f"/{deployed}-m-*"), resource
        else:
            assert resource.endswith(f"/{deployed}"), resource
    updates = [
        (statement["Principal"], rule["Resource"])
        for statement in document for rule in statement["Rules"]
        if "aoss:UpdateIndex" in rule.get("Permission", [])
    ]  # fmt: skip
    assert updates and all(not functions & set(p) for p, _ in updates), updates
    assert all(r == [f"index/{r[0].split('/')[1]}/{deployed}"] for _, r in updates), updates


def test_only_model_indexes_are_deleted_at_run_time(models_template):
    """Issue 47, point 9: a model's own index is deleted once no workspace uses it, so the
    functions may delete `<index>-m-*` and nothing else (never the deployment's index)."""
    [policy] = models_template.find_resources("AWS::OpenSearchServerless::AccessPolicy").values()
    document = json.loads(render(policy["Properties"]["Policy"]))
    deletes = [
        (statement["Principal"], resource)
        for statement in document for rule in statement["Rules"]
        if "aoss:DeleteIndex" in rule.get("Permission", []) for resource in rule["Resource"]
    ]  # fmt: skip
    deployed = deployment_index(models_template)
    functions = {f"<{logical(models_template, 'AWS::IAM::Role', f'Functions{f}Role')}.Arn>"
                 for f in RECORD_OF}  # fmt: skip
    assert deletes and all(functions & set(p) for p, _ in deletes), deletes
    assert all(r.endswith(f"/{deployed}-m-*") for _, r in deletes), deletes


def test_a_new_mapped_field_reaches_an_index_deployed_before(models_template):
    """The setup resource names the fields the index maps, so adding one (metadata_terms) is
    an Update on which the setup function maps it on the existing index."""
    from bunko.adapters.aws.opensearch.queries import index_body
    from infra.constructs.index_setup import MAPPED_FIELDS

    assert tuple(sorted(index_body(8)["mappings"]["properties"])) == MAPPED_FIELDS
    [setup] = models_template.find_resources("Custom::BunkoSearchIndex").values()
    assert setup["Properties"]["Mapping"] == ",".join(MAPPED_FIELDS)


def deployment_index(models_template) -> str:
    [api] = [
        f["Properties"]["Environment"]["Variables"]["BUNKO_OPENSEARCH_INDEX"]
        for f in models_template.find_resources("AWS::Lambda::Function").values()
        if "BUNKO_OPENSEARCH_INDEX" in f["Properties"].get("Environment", {}).get("Variables", {})
        and f["Properties"]["Environment"]["Variables"].get("POWERTOOLS_SERVICE_NAME") == "bunko-api"
    ]  # fmt: skip
    return api
