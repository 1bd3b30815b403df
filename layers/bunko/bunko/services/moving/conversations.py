"""Conversations moved with a library (`bunko export --conversations`): each for its owner
by username, its citations pointing to the imported documents' ids."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from bunko.domain import utcnow
from bunko.domain.conversations import Conversation, Message
from bunko.services.moving.archive import ArchiveReader
from bunko.services.moving.parts import MovingParts

_CONVERSATION_IDS = uuid.UUID("0b8f3c4e-2a61-4d0f-9a55-7c1d3e9b6a20")


def import_conversations(
    parts: MovingParts, reader: ArchiveReader, workspace: str, paths: dict[str, str]
) -> tuple[int, int]:
    """The archive's conversations, each for its owner by username (None: the library's own);
    (added, skipped because their owner has no account here). One already here (its id is
    derived from the archive's and the library's) is left alone."""
    added = skipped = 0
    if parts.conversations is None:
        return added, skipped
    store, limits = parts.conversations.store, parts.conversations.limits
    for record in reader.conversations():
        username = record.get("owner")
        if username is None:
            owner = workspace
        else:
            user = parts.users.get_user_by_username(username) if parts.users else None
            if user is None:
                skipped += 1
                continue
            owner = user.id
        conversation_id = moved_conversation_id(workspace, record.get("id"))
        if store.get(workspace, owner, conversation_id, messages=False) is not None:
            continue
        created = when(record.get("created_at"))
        store.add(
            Conversation(
                id=conversation_id,
                workspace_id=workspace,
                owner=owner,
                title=record.get("title") or None,
                created_at=created,
                updated_at=created,
            )
        )
        messages = [_message(m, paths) for m in record.get("messages", [])][: limits.max_messages]
        if messages:
            store.append(
                workspace,
                owner,
                conversation_id,
                messages,
                max_messages=limits.max_messages,
                title=record.get("title"),
            )
        added += 1
    return added, skipped


def moved_conversation_id(workspace: str, archived_id: Any) -> str:
    """The id a conversation of the archive has in `workspace` (the same on every import:
    importing twice adds none, and its answers point to it)."""
    return str(uuid.uuid5(_CONVERSATION_IDS, f"{workspace}:{archived_id}"))


def _message(raw: dict[str, Any], paths: dict[str, str]) -> Message:
    sources = []
    for source in raw.get("sources") or []:
        source = dict(source)
        path = source.pop("path", None)
        source["documentId"] = paths.get(path or "", source.get("documentId"))
        sources.append(source)
    role = "assistant" if raw.get("role") == "assistant" else "user"
    return Message(
        role=role,
        content=str(raw.get("content", "")),
        sources=sources,
        created_at=when(raw.get("created_at")),
        truncated=bool(raw.get("truncated")),
    )


def when(text: Any) -> datetime:
    try:
        return datetime.fromisoformat(text) if isinstance(text, str) else utcnow()
    except ValueError:
        return utcnow()
