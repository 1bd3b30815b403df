"""Chat conversations kept on the server: /conversations (list, create, get with messages,
rename, delete). POST /chat/stream with `conversationId` saves each question and its answer
into one (routes/chat.py).

A conversation is the caller's own (the signed-in user's; for API keys and auth off, the
workspace's): another owner's id is 404. Scope kb:read, like chat itself. Limits: a title
1–200 characters (400), `BUNKO_CONVERSATION_MAX_MESSAGES` messages per conversation (413),
`BUNKO_CONVERSATION_MAX_PER_USER` conversations per owner (429).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field

from bunko.domain.conversations import MAX_TITLE_CHARS, Conversation, Message
from bunko.errors import ServiceUnavailableError
from bunko.http.deps import Reader, ServicesDep, conversation_owner
from bunko.http.errors import error_responses
from bunko.operations.aurak import Deleted
from bunko.services.chat import ConversationService

router = APIRouter(
    prefix="/conversations", tags=["conversations"], responses=error_responses(401, 403)
)


def get_conversations(services: ServicesDep) -> ConversationService:
    if services.conversations is None:
        raise ServiceUnavailableError("conversations are not available on this backend")
    return services.conversations


ConversationsDep = Annotated[ConversationService, Depends(get_conversations)]


class NewConversation(BaseModel):
    title: Annotated[
        str | None,
        Field(
            max_length=MAX_TITLE_CHARS,
            description="Optional; without it the first question names the conversation.",
        ),
    ] = None


class Rename(BaseModel):
    title: Annotated[str, Field(min_length=1, max_length=MAX_TITLE_CHARS)]


class StoredMessage(BaseModel):
    role: str
    content: str
    sources: list[dict[str, Any]]  # as /chat/stream's `sources` event carried them
    createdAt: datetime
    truncated: bool  # sources (or the text) were shortened to fit a stored message

    @classmethod
    def of(cls, m: Message) -> StoredMessage:
        return cls(
            role=m.role,
            content=m.content,
            sources=m.sources,
            createdAt=m.created_at,
            truncated=m.truncated,
        )


class ConversationSummary(BaseModel):
    id: str
    title: str | None  # null until given or until the first question names it
    messageCount: int
    createdAt: datetime
    updatedAt: datetime  # the last message, else creation
    expiresAt: datetime | None  # under BUNKO_CONVERSATION_RETENTION_DAYS

    @classmethod
    def of(cls, c: Conversation) -> ConversationSummary:
        return cls(
            id=c.id,
            title=c.title,
            messageCount=c.message_count,
            createdAt=c.created_at,
            updatedAt=c.updated_at,
            expiresAt=c.expires_at,
        )


class ConversationWithMessages(ConversationSummary):
    messages: list[StoredMessage]

    @classmethod
    def with_messages(cls, c: Conversation) -> ConversationWithMessages:
        summary = ConversationSummary.of(c).model_dump()
        return cls(**summary, messages=[StoredMessage.of(m) for m in c.messages])


@router.get("", response_model=list[ConversationSummary])
def list_conversations(
    principal: Reader,
    conversations: ConversationsDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
) -> list[ConversationSummary]:
    """The caller's conversations, most recently active first, without their messages."""
    found = conversations.list(
        principal.workspace_id, conversation_owner(principal), limit=limit, offset=offset
    )
    return [ConversationSummary.of(c) for c in found]


@router.post(
    "",
    status_code=201,
    response_model=ConversationWithMessages,
    responses=error_responses(400, 429),
)
def create_conversation(
    principal: Reader, conversations: ConversationsDep, body: NewConversation | None = None
) -> ConversationWithMessages:
    """A new, empty conversation (429 when the caller keeps the most allowed)."""
    title = body.title if body else None
    created = conversations.create(principal.workspace_id, conversation_owner(principal), title)
    return ConversationWithMessages.with_messages(created)


@router.get(
    "/{conversation_id}", response_model=ConversationWithMessages, responses=error_responses(404)
)
def get_conversation(
    conversation_id: str, principal: Reader, conversations: ConversationsDep
) -> ConversationWithMessages:
    """The conversation with its messages, oldest first."""
    found = conversations.get(
        principal.workspace_id, conversation_owner(principal), conversation_id
    )
    return ConversationWithMessages.with_messages(found)


@router.patch(
    "/{conversation_id}",
    response_model=ConversationSummary,
    responses=error_responses(400, 404),
)
def rename_conversation(
    conversation_id: str, body: Rename, principal: Reader, conversations: ConversationsDep
) -> ConversationSummary:
    renamed = conversations.rename(
        principal.workspace_id, conversation_owner(principal), conversation_id, body.title
    )
    return ConversationSummary.of(renamed)


@router.delete("/{conversation_id}", response_model=Deleted, responses=error_responses(404))
def delete_conversation(
    conversation_id: str, principal: Reader, conversations: ConversationsDep
) -> Deleted:
    """The conversation and its messages."""
    conversations.delete(principal.workspace_id, conversation_owner(principal), conversation_id)
    return Deleted(message="Conversation deleted", id=conversation_id)
