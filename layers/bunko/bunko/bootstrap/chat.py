"""The chat wing, wired: answers with sources (chat models chosen per user, per call), the
conversations kept per owner, and the chats in progress per user every chat door shares."""

from __future__ import annotations

from dataclasses import dataclass

from bunko.bootstrap.adapters import Adapters
from bunko.bootstrap.conversations import build_conversations
from bunko.bootstrap.models import chat_models
from bunko.bootstrap.settings import Preferences
from bunko.config import Settings
from bunko.services.accounts import Bills
from bunko.services.chat import (
    AnswerBook,
    ChatService,
    ChatSlots,
    ConversationService,
    MissingList,
)
from bunko.services.embedding import ModelSwitch
from bunko.services.search import SearchService


@dataclass(frozen=True)
class ChatWing:
    """Field names are the container's (`Services`)."""

    chat: ChatService
    conversations: ConversationService | None  # None where the shape keeps none
    chat_slots: ChatSlots  # chats in progress per user (docs/security.md)
    answers: AnswerBook | None  # answers people mark (None where no accounts are kept)
    missing: MissingList | None  # what a library could not answer, for its owners


def build_chat(
    settings: Settings,
    adapters: Adapters,
    search: SearchService,
    switch: ModelSwitch | None,
    preferences: Preferences | None,
    bills: Bills | None,
) -> ChatWing:
    """`bills`: the libraries a person's conversations count against."""
    chat = ChatService(
        search=search,
        models=chat_models(
            switch.configs if preferences and switch else None,
            embedder_for=lambda workspace_id: search.generation(workspace_id).embedder,
        ),
        settings=preferences.user if preferences else None,
    )
    conversations = build_conversations(
        settings,
        adapters.conversations,
        workspaces_of=bills.conversation_workspaces if bills is not None else None,
    )
    account = adapters.accounts
    answers = missing = None
    if account is not None and account.answers is not None:
        answers = AnswerBook(
            account.answers,
            settings=account.stores.settings,
            retention_days=settings.audit_retention_days,
        )
        missing = MissingList(account.answers, search)
    slots = ChatSlots(settings.chat_streams_per_user)
    return ChatWing(chat, conversations, slots, answers, missing)
