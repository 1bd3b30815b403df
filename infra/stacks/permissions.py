"""Least-privilege grants written out: explicit actions on explicit resources.

CDK's grant_* helpers add wildcard actions (s3:GetObject*, kms:ReEncrypt*) and every index
of a table (`table/index/*`); these statements name exactly what Bunko calls.
"""

from __future__ import annotations

import re

from aws_cdk import Annotations, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3

from bunko.deploy_schema import GLOBAL_INDEXES, GSI1

# Transactions need the per-item actions of their parts (Put/Update/Delete/ConditionCheck).
# No Scan of the table: every runtime read is a key or a partition (a scan's cost follows the
# whole account's data). Only gsi1 may be scanned: it holds just workspaces and documents,
# for the rare walk over every workspace's documents (heal, a whole reindex).
TABLE_ACTIONS = [
    "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
    "dynamodb:ConditionCheckItem", "dynamodb:BatchGetItem", "dynamodb:BatchWriteItem",
    "dynamodb:Query",
]  # fmt: skip
INDEX_ACTIONS = ["dynamodb:Query"]
# The audit trail's items (`AUDIT#<library>`, adapters/aws/dynamodb/audit.py) are appended
# with a conditional put and removed only by the table's TTL: no function may rewrite or
# delete one (docs/aws.md, "The audit trail").
AUDIT_KEYS = "AUDIT#*"
AUDIT_DENIED = ["dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"]


def grant_table(role: iam.IRole, table: dynamodb.ITable) -> None:
    role.add_to_principal_policy(iam.PolicyStatement(
        actions=TABLE_ACTIONS, resources=[table.table_arn],
    ))  # fmt: skip
    role.add_to_principal_policy(iam.PolicyStatement(
        actions=INDEX_ACTIONS,
        resources=[f"{table.table_arn}/index/{name}" for name, _, _ in GLOBAL_INDEXES],
    ))  # fmt: skip
    role.add_to_principal_policy(iam.PolicyStatement(
        actions=["dynamodb:Scan"], resources=[f"{table.table_arn}/index/{GSI1}"],
    ))  # fmt: skip
    role.add_to_principal_policy(iam.PolicyStatement(
        effect=iam.Effect.DENY, actions=AUDIT_DENIED, resources=[table.table_arn],
        conditions={"ForAnyValue:StringLike": {"dynamodb:LeadingKeys": [AUDIT_KEYS]}},
    ))  # fmt: skip


def grant_files(
    role: iam.IRole,
    bucket: s3.IBucket,
    blob_prefix: str,
    drop_prefix: str,
    *,
    drop_write: bool | None,
    blob_read: bool = True,
    moves: tuple[str, list[str]] | None = None,
) -> None:
    """Blobs: read (unless not `blob_read`: the sources' sync writes and deletes originals,
    the ingest function reads them), write, delete. Drops: read and delete a refused
    presigned upload's version (ingest), or write (presigned uploads), or nothing (None: the
    sources' sync). `moves`: (prefix, S3 actions) on libraries' archives."""
    role.add_to_principal_policy(iam.PolicyStatement(
        actions=["s3:GetObject"] * blob_read + ["s3:PutObject", "s3:DeleteObject"],
        resources=[bucket.arn_for_objects(f"{blob_prefix}*")],
    ))  # fmt: skip
    # The web functions only sign uploads into drop/ (PutObject, with the tag that expires a
    # presigned drop: PutObjectTagging); ingest only reads them.
    drop_actions = (
        ["s3:PutObject", "s3:PutObjectTagging"]
        if drop_write
        else ["s3:GetObject", "s3:DeleteObjectVersion"]
    )
    if drop_write is not None:
        role.add_to_principal_policy(iam.PolicyStatement(
            actions=drop_actions, resources=[bucket.arn_for_objects(f"{drop_prefix}*")],
        ))  # fmt: skip
    prefixes = [f"{blob_prefix}*"] + ([f"{drop_prefix}*"] if drop_write is not None else [])
    if moves is not None:
        moves_prefix, actions = moves
        role.add_to_principal_policy(iam.PolicyStatement(
            actions=actions, resources=[bucket.arn_for_objects(f"{moves_prefix}*")],
        ))  # fmt: skip
        prefixes.append(f"{moves_prefix}*")
    # Listing is needed for prefix deletes and to tell "missing" from "forbidden" on HEAD.
    role.add_to_principal_policy(iam.PolicyStatement(
        actions=["s3:ListBucket"], resources=[bucket.bucket_arn],
        conditions={"StringLike": {"s3:prefix": prefixes}},
    ))  # fmt: skip


# Cross-region inference profiles are named by a geography before the model id
# (us.anthropic.claude-…); most current models are reachable only through one.
_PROFILE = re.compile(r"^(us|us-gov|eu|apac|jp|au|ca|global)\.(.+)$")


def model_arns(stack: Stack, model_id: str) -> list[str]:
    """What InvokeModel is authorised on for this id: the foundation model in this region;
    for an inference profile, the profile and its model in every region it routes to."""
    profile = _PROFILE.match(model_id)
    if profile is None:
        return [f"arn:{stack.partition}:bedrock:{stack.region}::foundation-model/{model_id}"]
    return [
        f"arn:{stack.partition}:bedrock:{stack.region}:{stack.account}:inference-profile/{model_id}",
        f"arn:{stack.partition}:bedrock:*::foundation-model/{profile[2]}",
    ]


# Providers whose Bedrock models are not sold through AWS Marketplace (Bedrock's page on
# product id condition keys): they need no subscription.
_NOT_ON_MARKETPLACE = ("amazon.", "deepseek.", "mistral.", "meta.", "qwen.", "openai.")


def third_party(model_id: str) -> bool:
    """A model sold through AWS Marketplace: its first use subscribes the account."""
    profile = _PROFILE.match(model_id)
    return not (profile[2] if profile else model_id).startswith(_NOT_ON_MARKETPLACE)


def grant_marketplace(
    roles: list[iam.IRole], stack: Stack, model_ids: list[str], product_ids: list[str]
) -> None:
    """The Marketplace calls a third-party model's first use makes to subscribe, for the
    products named (bunko:marketplaceProductIds, from Bedrock's product id table) and no
    other: Subscribe takes no resource, only the aws-marketplace:ProductId condition. With
    none named, the functions subscribe to nothing: an administrator subscribes once (the
    model's first use in the console), and synth says so."""
    marketplace = sorted({m for m in model_ids if third_party(m)})
    if not marketplace:
        return
    if not product_ids:
        Annotations.of(stack).add_warning_v2(
            "bunko:marketplaceSubscription",
            f"{', '.join(marketplace)}: sold through AWS Marketplace; the functions may not "
            "subscribe (bunko:marketplaceProductIds is empty): subscribe once as an "
            "administrator before the first use (docs/aws.md, 'Chat with Bedrock models')",
        )
        return
    for role in roles:
        role.add_to_principal_policy(iam.PolicyStatement(
            actions=["aws-marketplace:ViewSubscriptions"], resources=["*"],
        ))  # fmt: skip
        role.add_to_principal_policy(iam.PolicyStatement(
            actions=["aws-marketplace:Subscribe"], resources=["*"],
            conditions={"ForAnyValue:StringEquals": {"aws-marketplace:ProductId": product_ids}},
        ))  # fmt: skip


def grant_bedrock(roles: list[iam.IRole], stack: Stack, model_ids: list[str], *, stream: bool):
    """InvokeModel (embeddings) or its streaming variant (chat, which only ever calls
    ConverseStream) on exactly the configured models."""
    actions = ["bedrock:InvokeModelWithResponseStream" if stream else "bedrock:InvokeModel"]
    resources = [arn for m in model_ids for arn in model_arns(stack, m)]
    for role in roles:
        role.add_to_principal_policy(iam.PolicyStatement(actions=actions, resources=resources))


def grant_rerank(roles: list[iam.IRole], stack: Stack, model_ids: list[str]) -> None:
    """Bedrock Rerank (bedrock-agent-runtime) on the configured reranking models: the Rerank
    action has no resource of its own ('*'); the model is invoked by its ARN."""
    for role in roles:
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=["bedrock:Rerank"], resources=["*"])
        )
        role.add_to_principal_policy(iam.PolicyStatement(
            actions=["bedrock:InvokeModel"],
            resources=[arn for m in model_ids for arn in model_arns(stack, m)],
        ))  # fmt: skip
