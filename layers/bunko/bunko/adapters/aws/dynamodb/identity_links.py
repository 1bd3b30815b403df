"""IdentityLinkStore in the single table (infra/TABLE_DESIGN.md, "Sign-in links").

A link is one item, `IDLINK#<issuer>` / `SUB#<subject>`, written only if absent, so two first
sign-ins of one person at once make one link. A user's links are gsi1 (`USERLINKS#<user>`),
which the table already has, so a deleted user takes them along.
"""

from __future__ import annotations

from bunko.adapters.aws.dynamodb.items import serialize
from bunko.adapters.aws.dynamodb.table import Table, key_only
from bunko.deploy_schema import GSI1, GSI1_PK, GSI1_SK, PK, SK
from bunko.domain import utcnow
from bunko.errors import ConflictError

_S = serialize


def _key(issuer: str, subject: str) -> dict[str, str]:
    return {PK: f"IDLINK#{issuer}", SK: f"SUB#{subject}"}


class DynamoDBIdentityLinkStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def linked_user(self, issuer: str, subject: str) -> str | None:
        item = self.table.get(_key(issuer, subject))
        return item["user_id"] if item else None

    def link(self, issuer: str, subject: str, user_id: str) -> None:
        item = {
            **_key(issuer, subject),
            "issuer": issuer,
            "subject": subject,
            "user_id": user_id,
            "created_at": utcnow().isoformat(),
            GSI1_PK: f"USERLINKS#{user_id}",
            GSI1_SK: f"{issuer}#{subject}",
        }
        client = self.table.client
        try:
            self.table.put(item, ConditionExpression="attribute_not_exists(pk)")
        except client.exceptions.ConditionalCheckFailedException as exc:
            raise ConflictError("this identity is linked to a user already") from exc

    def unlink(self, issuer: str, subject: str) -> bool:
        response = self.table.client.delete_item(
            TableName=self.table.name, Key=_S(_key(issuer, subject)), ReturnValues="ALL_OLD"
        )
        return "Attributes" in response

    def is_linked(self, issuer: str, user_id: str) -> bool:
        # the user's links on gsi1, sorted by "<issuer>#<subject>"
        found = self.table.query(
            IndexName=GSI1,
            Limit=1,
            KeyConditionExpression="gsi1pk = :pk AND begins_with(gsi1sk, :issuer)",
            ExpressionAttributeValues=_S({":pk": f"USERLINKS#{user_id}", ":issuer": f"{issuer}#"}),
        )
        return next(found, None) is not None

    def forget_user(self, user_id: str) -> int:
        items = list(
            self.table.query(
                IndexName=GSI1,
                KeyConditionExpression="gsi1pk = :pk",
                ExpressionAttributeValues=_S({":pk": f"USERLINKS#{user_id}"}),
            )
        )
        self.table.batch_write(deletes=[key_only(i) for i in items])
        return len(items)
