"""ConversationService: chat conversations kept per owner, with their limits and retention.

The chat doors stay as they are; `recorded` wraps an answer's events and saves the question
and the finished answer (with its sources) into the conversation as the answer completes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from bunko.domain import new_id, utcnow
from bunko.domain.conversations import (
    DEFAULT_MAX_CONVERSATIONS,
    DEFAULT_MAX_MESSAGES,
    MAX_TITLE_CHARS,
    Conversation,
    ConversationFullError,
    Message,
    TooManyConversationsError,
    default_title,
    fit_message,
)
from bunko.errors import BunkoError, NotFoundError, ValidationError
from bunko.ports.chat import ChatMessage
from bunko.ports.conversations import ConversationStore
from bunko.services.bounds import check_name
from bunko.services.chat.chat import ChatEvent, Source

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConversationLimits:
    retention_days: int = 0  # 0: kept until deleted
    max_messages: int = DEFAULT_MAX_MESSAGES  # per conversation
    max_conversations: int = DEFAULT_MAX_CONVERSATIONS  # per owner


def clean_title(title: str) -> str:
    """A title a person gave: trimmed, 1–MAX_TITLE_CHARS characters, no control or bidi
    characters (ValidationError naming `title` otherwise)."""
    title = title.strip()
    if not title:
        raise ValidationError("title: must not be blank")
    if len(title) > MAX_TITLE_CHARS:
        raise ValidationError(f"title: at most {MAX_TITLE_CHARS} characters")
    return check_name(title, field="title")


class ConversationService:
    def __init__(
        self,
        store: ConversationStore,
        limits: ConversationLimits = ConversationLimits(),
        *,
        clock: Callable[[], datetime] = utcnow,
        workspaces_of: Callable[[str, str], tuple[str, ...]] | None = None,
    ) -> None:
        self.store = store
        # (workspace, owner) → every workspace whose conversations of `owner` count together
        # (a person's libraries: services/accounts/bills.py); None: the workspace alone.
        self.workspaces_of = workspaces_of
        self.limits = limits
        self.clock = clock
        self.prune()  # at start: what expired while the server was down goes now

    def _expiry(self, when: datetime) -> datetime | None:
        days = self.limits.retention_days
        return when + timedelta(days=days) if days else None

    def prune(self) -> int:
        try:
            return self.store.prune(self.clock())
        except Exception:  # pruning must never cost a write; the next one tries again
            log.exception("pruning expired conversations failed")
            return 0

    def create(self, workspace_id: str, owner: str, title: str | None = None) -> Conversation:
        """A new, empty conversation; TooManyConversationsError at the owner's limit."""
        title = clean_title(title) if title is not None and title.strip() else None
        self.prune()
        limit = self.limits.max_conversations
        places = self.workspaces_of(workspace_id, owner) if self.workspaces_of else (workspace_id,)
        if sum(self.store.count(w, owner) for w in places) >= limit:
            raise TooManyConversationsError(limit)
        now = self.clock()
        conversation = Conversation(
            id=new_id(),
            workspace_id=workspace_id,
            owner=owner,
            title=title,
            created_at=now,
            updated_at=now,
            expires_at=self._expiry(now),
        )
        self.store.add(conversation)
        return conversation

    def list(
        self, workspace_id: str, owner: str, *, limit: int, offset: int = 0
    ) -> list[Conversation]:
        """Most recently active first."""
        return self.store.list_conversations(workspace_id, owner, limit=limit, offset=offset)

    def get(self, workspace_id: str, owner: str, conversation_id: str) -> Conversation:
        found = self.store.get(workspace_id, owner, conversation_id)
        if found is None:
            raise NotFoundError(f"conversation {conversation_id} not found")
        return found

    def rename(
        self, workspace_id: str, owner: str, conversation_id: str, title: str
    ) -> Conversation:
        renamed = self.store.rename(workspace_id, owner, conversation_id, clean_title(title))
        if renamed is None:
            raise NotFoundError(f"conversation {conversation_id} not found")
        return renamed

    def delete(self, workspace_id: str, owner: str, conversation_id: str) -> None:
        if not self.store.delete(workspace_id, owner, conversation_id):
            raise NotFoundError(f"conversation {conversation_id} not found")

    def delete_owner(self, workspace_id: str, owner: str) -> int:
        """Every conversation `owner` has in the workspace (a deleted user's, in a shared
        library)."""
        return self.store.delete_owner(workspace_id, owner)

    def delete_workspace(self, workspace_id: str) -> int:
        """Every conversation in the workspace (its user is being deleted)."""
        return self.store.delete_workspace(workspace_id)

    def history(self, workspace_id: str, owner: str, conversation_id: str) -> list[ChatMessage]:
        """The stored turns a question in this conversation is answered with; NotFoundError,
        or ConversationFullError when no room is left for one more question and answer."""
        conversation = self.get(workspace_id, owner, conversation_id)
        if conversation.message_count + 2 > self.limits.max_messages:
            raise ConversationFullError(self.limits.max_messages)
        return [ChatMessage(m.role, m.content) for m in conversation.messages]

    def record_turn(
        self,
        workspace_id: str,
        owner: str,
        conversation_id: str,
        *,
        question: str,
        answer: str,
        sources: list[dict],
        asked: datetime | None = None,
    ) -> Conversation:
        """Append a question (asked at `asked`, default now) and its answer; the conversation
        is named after its first question when it has no title yet."""
        asked = asked or self.clock()
        answered = max(self.clock(), asked + timedelta(microseconds=1))
        content, kept, truncated = fit_message(answer, sources)
        text, _, long_question = fit_message(question, [])
        saved = self.store.append(
            workspace_id,
            owner,
            conversation_id,
            [
                Message("user", text, [], asked, long_question, self._expiry(asked)),
                Message("assistant", content, kept, answered, truncated, self._expiry(answered)),
            ],
            max_messages=self.limits.max_messages,
            title=default_title(question) or None,
            expires_at=self._expiry(answered),
        )
        if saved is None:
            raise NotFoundError(f"conversation {conversation_id} not found (deleted meanwhile?)")
        return saved

    def recorded(
        self,
        answer: Callable[..., Iterator[ChatEvent]],
        *,
        workspace_id: str,
        owner: str,
        conversation_id: str,
        question: str,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> Iterator[ChatEvent]:
        """`answer`'s events (ChatService.answer with every argument but `cancelled`), saving
        the turn when its sources arrive, that is when the answer is complete: an answer that
        failed or was stopped is not kept. A turn that cannot be saved ends in an error event."""
        asked = self.clock()
        events = answer(cancelled=cancelled)
        text: list[str] = []
        try:
            for event in events:
                if event.type == "content":
                    text.append(event.data)
                elif event.type == "sources":
                    saved, failure = self._save(
                        workspace_id,
                        owner,
                        conversation_id,
                        question=question,
                        answer="".join(text),
                        sources=[stored_source(s) for s in event.data],
                        asked=asked,
                    )
                    # the answer is the conversation's last message
                    yield replace(event, turn=saved.message_count - 1) if saved else event
                    if failure is not None:
                        yield ChatEvent("error", failure)
                    continue
                yield event
        finally:
            events.close()

    def _save(
        self, workspace_id: str, owner: str, conversation_id: str, **turn
    ) -> tuple[Conversation | None, str | None]:
        try:
            return self.record_turn(workspace_id, owner, conversation_id, **turn), None
        except BunkoError as exc:
            return None, f"the answer was not saved in the conversation: {exc}"
        except Exception:  # the answer itself still reaches the client, with its sources
            log.exception("saving a chat turn failed")
            return None, "the answer was not saved in the conversation: the server log has details"


def stored_source(source: Source) -> dict[str, Any]:
    """A source as a saved turn keeps it: in aurak's spelling, since GET /conversations hands
    saved turns back as the chat stream sent them (operations/aurak.ChatSource; a test holds
    the two equal)."""
    return {
        "fileName": source.file_name,
        "content": source.content,
        "score": source.score,
        "chunkIndex": source.chunk_index,
        "documentId": source.document_id,
        "page": source.page,
        "pageEnd": source.page_end,
        "quote": source.quote,
        "quoteStart": source.quote_start,
        "quoteEnd": source.quote_end,
        "quotes": [
            {"quote": q.text, "quoteStart": q.start, "quoteEnd": q.end} for q in source.quotes
        ],
    }
