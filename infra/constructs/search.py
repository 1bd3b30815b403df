"""Search: an OpenSearch Serverless VECTORSEARCH collection with its three policies.

Encryption (AWS-owned key) and network policies must exist before the collection; the data
access policy names the functions' roles, so it is added once they exist (`allow`).
"""

from __future__ import annotations

import hashlib
import json
import re

from aws_cdk import aws_iam as iam
from aws_cdk import aws_opensearchserverless as aoss
from constructs import Construct

# Data-plane permissions (aoss:*) granted to the functions' roles on the collection's
# indexes; they create only the index of a workspace's own embedding model, when it is
# chosen (`<deployment index>-m-<config id>`, bootstrap/aws_generations.py), and delete only such
# an index, once no workspace uses its model (services/embedding/model_handover.retire). The setup function
# creates the deployment's index and alone may add a field to its mapping (UpdateIndex: an
# index made before a field existed, such as metadata_terms, gets it on the next deploy).
READ_WRITE_INDEX = ["aoss:DescribeIndex", "aoss:ReadDocument", "aoss:WriteDocument"]
CREATE_INDEX = ["aoss:CreateIndex", "aoss:DescribeIndex", "aoss:UpdateIndex"]
MODEL_INDEX = ["aoss:CreateIndex", "aoss:DeleteIndex"]
MODEL_INDEX_SUFFIX = "-m-*"
# Collection names are 3–28 characters; security and access policy names at most 32.
COLLECTION_NAME = re.compile(r"[a-z][a-z0-9-]{2,27}")
POLICY_NAME_MAX = 32


def collection_name_for(stack_name: str) -> str:
    """The default collection name: the stack's, in the characters a collection allows, so a
    second stack in the account (another name) gets its own collection and policies."""
    name = re.sub(r"[^a-z0-9-]+", "-", stack_name.lower()).strip("-")[:28].rstrip("-")
    if not re.match(r"[a-z]", name):
        name = f"b-{name}"[:28].rstrip("-")
    return name if len(name) >= 3 else f"{name}-kb"


def policy_name(collection: str, kind: str) -> str:
    """`<collection>-<kind>`, shortened with a hash of the full name when over 32 characters
    (a 28-character collection name plus `-data` would be 33)."""
    name = f"{collection}-{kind}"
    if len(name) <= POLICY_NAME_MAX:
        return name
    digest = hashlib.sha256(collection.encode()).hexdigest()[:6]
    head = collection[: POLICY_NAME_MAX - len(kind) - len(digest) - 2].rstrip("-")
    return f"{head}-{digest}-{kind}"


class SearchCollection(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, name: str, standby_replicas: bool
    ) -> None:
        super().__init__(scope, construct_id)
        if not COLLECTION_NAME.fullmatch(name):
            raise ValueError(f"collection name {name!r}: 3–28 of a-z, 0-9 and -, a letter first")
        self.name = name
        resource = [f"collection/{name}"]
        encryption = aoss.CfnSecurityPolicy(
            self, "Encryption", name=policy_name(name, "enc"), type="encryption",
            policy=json.dumps({"Rules": [{"ResourceType": "collection", "Resource": resource}],
                               "AWSOwnedKey": True}),
        )  # fmt: skip
        # Public endpoint, but every request is SigV4-signed and checked against the data
        # access policy below; use a VPC endpoint policy instead for a private collection.
        # The collection's API only: OpenSearch Dashboards stays closed (nothing uses it).
        network = aoss.CfnSecurityPolicy(
            self, "Network", name=policy_name(name, "net"), type="network",
            policy=json.dumps([{"Rules": [
                {"ResourceType": "collection", "Resource": resource},
            ], "AllowFromPublic": True}]),
        )  # fmt: skip
        self.collection = aoss.CfnCollection(
            self, "Collection", name=name, type="VECTORSEARCH",
            # Off: one OCU each for indexing and search instead of two (docs/aws.md).
            standby_replicas="ENABLED" if standby_replicas else "DISABLED",
            description="Bunko chunks: BM25 (kuromoji) and k-NN (faiss HNSW)",
        )  # fmt: skip
        self.collection.node.add_dependency(encryption, network)
        self.endpoint = self.collection.attr_collection_endpoint
        self.arn = self.collection.attr_arn

    def allow(
        self, *, index: str, readers_writers: list[iam.IRole], index_admins: list[iam.IRole]
    ) -> None:
        """The data access policy, and the IAM permission to call the collection's API.

        `index`: the deployment's index, which the admins (the setup function) create; the
        readers and writers may create only its per-model siblings."""
        describe = {"ResourceType": "collection", "Resource": [f"collection/{self.name}"],
                    "Permission": ["aoss:DescribeCollectionItems"]}  # fmt: skip

        def rule(indexes: str, permissions: list[str]) -> dict:
            resource = [f"index/{self.name}/{indexes}"]
            return {"ResourceType": "index", "Resource": resource, "Permission": permissions}

        statements = [
            {"Rules": [rule("*", READ_WRITE_INDEX), describe],
             "Principal": [role.role_arn for role in readers_writers]},
            {"Rules": [rule(f"{index}{MODEL_INDEX_SUFFIX}", MODEL_INDEX)],
             "Principal": [role.role_arn for role in readers_writers]},
            {"Rules": [rule(index, CREATE_INDEX), describe],
             "Principal": [role.role_arn for role in index_admins]},
        ]  # fmt: skip
        self.access_policy = aoss.CfnAccessPolicy(
            self, "DataAccess", name=policy_name(self.name, "data"), type="data",
            policy=_stack_json(self, statements),
        )  # fmt: skip
        for role in readers_writers + index_admins:
            role.add_to_principal_policy(iam.PolicyStatement(
                actions=["aoss:APIAccessAll"], resources=[self.arn],
            ))  # fmt: skip


def _stack_json(scope: Construct, value: object) -> str:
    from aws_cdk import Stack

    return Stack.of(scope).to_json_string(value)
