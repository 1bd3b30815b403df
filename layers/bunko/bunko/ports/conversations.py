"""Where chat conversations and their messages are kept."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from bunko.domain.conversations import Conversation, Message


class ConversationStore(Protocol):
    """Every read and write names the workspace and the owner: another workspace's or another
    owner's id finds nothing. A record whose `expires_at` has passed is gone for every read
    (the AWS table's TTL removes it some time later; `prune` removes it locally)."""

    def add(self, conversation: Conversation) -> None:
        """A new conversation without messages; ConflictError if the id is taken."""

    def get(
        self, workspace_id: str, owner: str, conversation_id: str, *, messages: bool = True
    ) -> Conversation | None:
        """With its messages oldest first when `messages` (else `messages` is empty)."""

    def list_conversations(
        self, workspace_id: str, owner: str, *, limit: int, offset: int = 0
    ) -> list[Conversation]:
        """The owner's conversations, most recently active first, without their messages."""

    def count(self, workspace_id: str, owner: str) -> int: ...

    def rename(
        self, workspace_id: str, owner: str, conversation_id: str, title: str
    ) -> Conversation | None:
        """None when there is no such conversation (of this owner)."""

    def append(
        self,
        workspace_id: str,
        owner: str,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        max_messages: int,
        title: str | None = None,
        expires_at: datetime | None = None,
    ) -> Conversation | None:
        """Add the messages after the last one, all or none; `title` names a conversation
        that has none yet; the conversation's activity time becomes the last message's and
        its `expires_at` becomes `expires_at`. ConversationFullError when they would take it
        past `max_messages`; None when there is no such conversation."""

    def delete(self, workspace_id: str, owner: str, conversation_id: str) -> bool:
        """Delete it with its messages; False if there was none."""

    def delete_owner(self, workspace_id: str, owner: str) -> int:
        """Every conversation of the owner in the workspace; returns how many."""

    def delete_workspace(self, workspace_id: str) -> int:
        """Every conversation of every owner in the workspace; returns how many."""

    def prune(self, now: datetime) -> int:
        """Remove what expired by `now`; returns how many conversations went (0 where the
        storage expires records on its own)."""
