"""LibraryStore in the single table (infra/TABLE_DESIGN.md, "Libraries").

A library and its members share one partition (`LIB#<id>`: the head `LIB`, a `MEMBER#<user>`
item per member), so one strongly consistent query reads the members and one read answers
a role. A user's libraries are gsi1 (`USERLIBS#<user>`), which the table already has. A name
is claimed by an item `LIBNAME#<name key>`, written with the head in one transaction, so two
libraries never share a name.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bunko.adapters.aws.dynamodb.items import serialize
from bunko.adapters.aws.dynamodb.table import Table, TransactionCancelled, key_only
from bunko.deploy_schema import GSI1, GSI1_PK, GSI1_SK, PK, SK
from bunko.domain.libraries import Library, Membership, Role, name_key
from bunko.errors import ConflictError

_S = serialize
_HEAD, _MEMBER = "LIB", "MEMBER#"
_ATTEMPTS = 20  # reads of a library's members before a change under contention gives up


def _pk(library_id: str) -> str:
    return f"LIB#{library_id}"


def _claim(name: str) -> dict[str, str]:
    return {PK: f"LIBNAME#{name_key(name)}", SK: "CLAIM"}


def _member_item(library_id: str, user_id: str, role: Role) -> dict[str, Any]:
    return {
        PK: _pk(library_id),
        SK: _MEMBER + user_id,
        "library_id": library_id,
        "user_id": user_id,
        "role": role,
        GSI1_PK: f"USERLIBS#{user_id}",
        GSI1_SK: library_id,
    }


def _library(item: dict[str, Any]) -> Library:
    return Library(
        id=item["id"],
        name=item["name"],
        created_by=item.get("created_by"),
        created_at=datetime.fromisoformat(item["created_at"]),
    )


class DynamoDBLibraryStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def add_library(self, library: Library, owner: str | None) -> None:
        head = {
            PK: _pk(library.id),
            SK: _HEAD,
            "id": library.id,
            "name": library.name,
            "created_by": library.created_by,
            "created_at": library.created_at.isoformat(),
        }
        ops: list[dict[str, Any]] = [
            {"Put": {"Item": _S(head), "ConditionExpression": "attribute_not_exists(pk)"}},
            {
                "Put": {
                    "Item": _S({**_claim(library.name), "library_id": library.id}),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
        ]
        if owner is not None:
            ops.append({"Put": {"Item": _S(_member_item(library.id, owner, "owner"))}})
        try:
            self.table.transact(ops)
        except TransactionCancelled as exc:
            raise ConflictError(f"a library named {library.name!r} exists") from exc

    def get_library(self, library_id: str) -> Library | None:
        item = self.table.get({PK: _pk(library_id), SK: _HEAD})
        return _library(item) if item else None

    def list_libraries(self) -> list[Library]:
        # A scan: the heads have no index of their own, and only an admin asks, rarely.
        heads = self.table.scan(
            FilterExpression="sk = :head AND begins_with(pk, :lib)",
            ExpressionAttributeValues=_S({":head": _HEAD, ":lib": "LIB#"}),
            ConsistentRead=True,
        )
        return sorted((_library(h) for h in heads), key=lambda lib: name_key(lib.name))

    def get_library_by_name(self, name: str) -> Library | None:
        claim = self.table.get(_claim(name))
        return self.get_library(claim["library_id"]) if claim else None

    def _partition(self, library_id: str) -> list[dict[str, Any]]:
        """The head and every member, strongly consistent."""
        return list(
            self.table.query(
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues=_S({":pk": _pk(library_id)}),
                ConsistentRead=True,
            )
        )

    def delete_library(self, library_id: str) -> bool:
        items = self._partition(library_id)
        head = next((i for i in items if i[SK] == _HEAD), None)
        if head is None:
            return False
        self.table.batch_write(deletes=[key_only(i) for i in items] + [_claim(head["name"])])
        return True

    def set_member(
        self, library_id: str, user_id: str, role: Role, *, keep_an_owner: bool = False
    ) -> None:
        self._change(library_id, user_id, role, keep_an_owner=keep_an_owner)

    def remove_member(self, library_id: str, user_id: str, *, keep_an_owner: bool = False) -> bool:
        return self._change(library_id, user_id, None, keep_an_owner=keep_an_owner)

    def _change(
        self, library_id: str, user_id: str, role: Role | None, *, keep_an_owner: bool
    ) -> bool:
        """Write one membership (None: remove it) as a transaction that also moves the head's
        `ver` on from the value read, so two changes of one library's members never both
        pass a check made on the same reading: the loser reads again and decides again."""
        key = {PK: _pk(library_id), SK: _MEMBER + user_id}
        for _ in range(_ATTEMPTS):
            items = self._partition(library_id)
            head = next((i for i in items if i[SK] == _HEAD), None)
            roles = {i["user_id"]: i["role"] for i in items if i[SK].startswith(_MEMBER)}
            if role is None and user_id not in roles:
                return False
            others = [u for u, r in roles.items() if r == "owner" and u != user_id]
            if keep_an_owner and roles.get(user_id) == "owner" and role != "owner" and not others:
                raise ConflictError(
                    "the last owner stays an owner: make another member owner first"
                )
            member: dict[str, Any] = (
                {"Put": {"Item": _S(_member_item(library_id, user_id, role))}}
                if role is not None
                else {"Delete": {"Key": _S(key)}}
            )
            if head is None:  # no head, no owners to keep: the write alone
                self.table.transact([member])
                return True
            bump = {
                "Update": {
                    "Key": _S({PK: _pk(library_id), SK: _HEAD}),
                    "UpdateExpression": "SET ver = :new",
                    "ConditionExpression": "attribute_exists(pk) AND "
                    "(attribute_not_exists(ver) OR ver = :old)",
                    "ExpressionAttributeValues": _S(
                        {":new": head.get("ver", 0) + 1, ":old": head.get("ver", 0)}
                    ),
                }
            }
            try:
                self.table.transact([bump, member])
                return True
            except TransactionCancelled:
                continue  # another change of these members came first: read again
        raise ConflictError(f"library {library_id}: too many member changes at once, try again")

    def members(self, library_id: str) -> list[Membership]:
        return [
            Membership(i["library_id"], i["user_id"], i["role"])
            for i in self.table.partition(_pk(library_id), _MEMBER)
        ]

    def role_of(self, library_id: str, user_id: str) -> Role | None:
        item = self.table.get({PK: _pk(library_id), SK: _MEMBER + user_id})
        return item["role"] if item else None

    def _member_items(self, user_id: str) -> list[dict[str, Any]]:
        return list(
            self.table.query(
                IndexName=GSI1,
                KeyConditionExpression="gsi1pk = :pk",
                ExpressionAttributeValues=_S({":pk": f"USERLIBS#{user_id}"}),
            )
        )

    def memberships(self, user_id: str) -> list[tuple[Library, Role]]:
        roles = {i["library_id"]: i["role"] for i in self._member_items(user_id)}
        heads = self.table.batch_get([{PK: _pk(i), SK: _HEAD} for i in roles])
        found = [(_library(h), roles[h["id"]]) for h in heads]
        return sorted(found, key=lambda pair: name_key(pair[0].name))

    def forget_user(self, user_id: str) -> int:
        items = self._member_items(user_id)
        self.table.batch_write(deletes=[key_only(i) for i in items])
        return len(items)
