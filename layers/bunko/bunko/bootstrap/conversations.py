"""The conversation service over a shape's conversation store, with the operator's limits
(BUNKO_CONVERSATION_*, in Settings)."""

from __future__ import annotations

from collections.abc import Callable

from bunko.config import Settings
from bunko.ports.conversations import ConversationStore
from bunko.services.chat import ConversationLimits, ConversationService


def build_conversations(
    settings: Settings,
    store: ConversationStore | None,
    *,
    workspaces_of: Callable[[str, str], tuple[str, ...]] | None = None,
) -> ConversationService | None:
    if store is None:
        return None
    limits = ConversationLimits(
        retention_days=settings.conversation_retention_days,
        max_messages=settings.conversation_max_messages,
        max_conversations=settings.conversation_max_per_user,
    )
    return ConversationService(store, limits, workspaces_of=workspaces_of)
