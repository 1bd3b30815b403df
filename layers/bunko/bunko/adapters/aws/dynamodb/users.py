"""DynamoDBUserStore and DynamoDBLoginAttemptStore: the account side's users in the table.

Usernames are unique by `username_key` through a claim item written in the same transaction
as the user. The number of admins is a counter item changed in those transactions too, and
deleting an admin is conditioned on the counter staying above zero, so two concurrent
deletes can never remove the last admin (the same rule the SQLite store keeps with a lock).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from datetime import datetime
from typing import Any

from bunko.adapters.aws.dynamodb.items import serialize
from bunko.adapters.aws.dynamodb.table import Table, TransactionCancelled
from bunko.deploy_schema import GSI1, GSI1_PK, GSI1_SK, PK, SK
from bunko.domain.accounts import LoginAttempts, User, username_key
from bunko.errors import ConflictError, NotFoundError, ServiceUnavailableError

_S = serialize
_USER_FIELDS = [f.name for f in fields(User)]
ADMINS = {PK: "USERS", SK: "ADMINS"}
_RACES = 30  # optimistic retries of a login-attempt update before giving up


def _user_key(user_id: str) -> dict[str, str]:
    return {PK: f"USER#{user_id}", SK: "USER"}


def _claim_key(username: str) -> dict[str, str]:
    return {PK: f"USERNAME#{username_key(username)}", SK: "USERNAME"}


def _user_item(user: User) -> dict[str, Any]:
    values: dict[str, Any] = {name: getattr(user, name) for name in _USER_FIELDS}
    values["created_at"] = user.created_at.isoformat()
    values["updated_at"] = user.updated_at.isoformat()
    return {
        **_user_key(user.id),
        **values,
        GSI1_PK: "USERS",
        GSI1_SK: f"{values['created_at']}#{user.id}",
    }


def _user(item: dict[str, Any]) -> User:
    values = {name: item[name] for name in _USER_FIELDS if name in item}
    values["created_at"] = datetime.fromisoformat(values["created_at"])
    values["updated_at"] = datetime.fromisoformat(values["updated_at"])
    return User(**values)


def _admins(delta: int, *, keep_one: bool = False) -> dict[str, Any]:
    update: dict[str, Any] = {
        "Key": _S(ADMINS),
        "UpdateExpression": "ADD n :d",
        "ExpressionAttributeValues": _S({":d": delta}),
    }
    if keep_one:
        update["ConditionExpression"] = "n > :one"
        update["ExpressionAttributeValues"] = _S({":d": delta, ":one": 1})
    return {"Update": update}


class DynamoDBUserStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def add_user(self, user: User) -> None:
        ops: list[dict[str, Any]] = [
            {
                "Put": {
                    "Item": _S(_user_item(user)),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            {
                "Put": {
                    "Item": _S({**_claim_key(user.username), "user_id": user.id}),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
        ]
        if user.is_admin:
            ops.append(_admins(+1))
        try:
            self.table.transact(ops)
        except TransactionCancelled as exc:
            raise ConflictError(f"username {user.username!r} is taken") from exc

    def add_first_admin(self, user: User) -> bool:
        admin = replace(user, is_admin=True)
        first = {
            "Update": {
                "Key": _S(ADMINS),
                "UpdateExpression": "ADD n :one",
                "ConditionExpression": "attribute_not_exists(n) OR n < :one",
                "ExpressionAttributeValues": _S({":one": 1}),
            }
        }
        ops: list[dict[str, Any]] = [
            {
                "Put": {
                    "Item": _S(_user_item(admin)),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            {
                "Put": {
                    "Item": _S({**_claim_key(user.username), "user_id": user.id}),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            first,
        ]
        try:
            self.table.transact(ops)
        except TransactionCancelled as exc:
            if exc.reasons[2] == "ConditionalCheckFailed":
                return False  # an admin exists (a taken name is add_user's conflict then)
            raise ConflictError(f"username {user.username!r} is taken") from exc
        return True

    def save_user(self, user: User) -> None:
        current = self.table.get(_user_key(user.id))
        if current is None:
            raise NotFoundError(f"user {user.id} not found")
        ops: list[dict[str, Any]] = [
            {
                "Put": {
                    "Item": _S(_user_item(user)),
                    # The read above is the base of the claim and counter changes: nobody else may
                    # have changed name or role meanwhile.
                    "ConditionExpression": "username = :name AND is_admin = :admin",
                    "ExpressionAttributeValues": _S(
                        {":name": current["username"], ":admin": current["is_admin"]}
                    ),
                }
            }
        ]
        if username_key(current["username"]) != username_key(user.username):
            ops.append({"Delete": {"Key": _S(_claim_key(current["username"]))}})
            ops.append(
                {
                    "Put": {
                        "Item": _S({**_claim_key(user.username), "user_id": user.id}),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                }
            )
        if current["is_admin"] != user.is_admin:
            ops.append(_admins(+1) if user.is_admin else _admins(-1, keep_one=True))
        try:
            self.table.transact(ops)
        except TransactionCancelled as exc:
            raise ConflictError(f"user {user.username!r} could not be saved: {exc}") from exc

    def get_user(self, user_id: str) -> User | None:
        item = self.table.get(_user_key(user_id))
        return _user(item) if item else None

    def get_user_by_username(self, username: str) -> User | None:
        claim = self.table.get(_claim_key(username))
        return self.get_user(claim["user_id"]) if claim else None

    def list_users(self) -> list[User]:
        found = self.table.query(
            IndexName=GSI1,
            KeyConditionExpression="gsi1pk = :pk",
            ExpressionAttributeValues=_S({":pk": "USERS"}),
        )
        return [_user(item) for item in found]

    def count_admins(self) -> int:
        counter = self.table.get(ADMINS)
        return int(counter["n"]) if counter else 0

    def delete_user(self, user_id: str) -> bool:
        current = self.table.get(_user_key(user_id))
        if current is None:
            return False
        ops: list[dict[str, Any]] = [
            {
                "Delete": {
                    "Key": _S(_user_key(user_id)),
                    "ConditionExpression": "is_admin = :admin",
                    "ExpressionAttributeValues": _S({":admin": current["is_admin"]}),
                }
            },
            {"Delete": {"Key": _S(_claim_key(current["username"]))}},
        ]
        if current["is_admin"]:
            ops.append(_admins(-1, keep_one=True))
        try:
            self.table.transact(ops)
        except TransactionCancelled as exc:
            if current["is_admin"] and exc.reasons[-1] == "ConditionalCheckFailed":
                raise ConflictError("the last admin cannot be deleted") from exc
            raise ConflictError(f"user {user_id} changed while being deleted") from exc
        return True


class DynamoDBLoginAttemptStore:
    """Counts in LOGIN#<key> items. `update_attempts` is optimistic: each item carries a
    revision, and the write is one transaction conditioned on every revision read, retried
    when another attempt got in first (the DynamoDB form of SQLite's write transaction)."""

    def __init__(self, table: Table, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.table = table
        self._sleep = sleep

    @staticmethod
    def _key(key: str) -> dict[str, str]:
        return {PK: f"LOGIN#{key}", SK: "LOGIN"}

    def get_attempts(self, key: str) -> LoginAttempts | None:
        item = self.table.get(self._key(key))
        return _attempts(key, item) if item else None

    def save_attempts(self, attempts: LoginAttempts) -> None:
        self.table.put(self._item(attempts))

    def update_attempts(
        self,
        keys: Sequence[str],
        change: Callable[[list[LoginAttempts]], list[LoginAttempts]],
    ) -> None:
        for race in range(_RACES):
            items = {k: self.table.get(self._key(k)) for k in keys}
            records = [_attempts(k, items[k]) if items[k] else LoginAttempts(key=k) for k in keys]
            ops = []
            for record in change(records):
                rev = (items.get(record.key) or {}).get("rev")
                put: dict[str, Any] = {"Item": _S({**self._item(record), "rev": (rev or 0) + 1})}
                if rev is None:  # absent, or written by save_attempts
                    put["ConditionExpression"] = "attribute_not_exists(rev)"
                else:
                    put["ConditionExpression"] = "rev = :rev"
                    put["ExpressionAttributeValues"] = _S({":rev": rev})
                ops.append({"Put": put})
            try:
                self.table.transact(ops)
                return
            except TransactionCancelled:
                self._sleep(random.uniform(0, 0.01 * (race + 1)))
        raise ServiceUnavailableError("too many logins at once for this account; try again")

    def clear_attempts(self, key: str) -> None:
        self.table.client.delete_item(TableName=self.table.name, Key=_S(self._key(key)))

    def _item(self, attempts: LoginAttempts) -> dict[str, Any]:
        return {
            **self._key(attempts.key),
            "failures": attempts.failures,
            "locked_until": _iso(attempts.locked_until),
            "last_failure": _iso(attempts.last_failure),
        }


def _attempts(key: str, item: dict[str, Any]) -> LoginAttempts:
    return LoginAttempts(
        key=key,
        failures=int(item["failures"]),
        locked_until=_dt(item.get("locked_until")),
        last_failure=_dt(item.get("last_failure")),
    )


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
