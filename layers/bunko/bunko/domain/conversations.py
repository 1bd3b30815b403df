"""Chat conversations kept on the server: a conversation belongs to one owner (the signed-in
user, or for API keys and auth off the workspace) in one workspace, and holds its messages in
order, each assistant message with the sources its answer cited.

Limits live here so every door and both stores agree: a title's length, a stored message's
size (one DynamoDB item, far under its 400 KB, and a whole conversation far under Lambda's
6 MB response), and how many messages a conversation may hold at most.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from bunko.domain.documents import utcnow
from bunko.errors import PayloadTooLargeError, TooManyRequestsError

MAX_TITLE_CHARS = 200
DEFAULT_TITLE_CHARS = 60  # a title made from the first question
# A stored message's content plus its sources as JSON, in UTF-8 bytes: sources are trimmed
# to fit (the full passage stays a click away by documentId and chunkIndex).
MAX_MESSAGE_BYTES = 48_000
# The most messages a conversation can be set to hold: 100 × 48 KB stays under the 6 MB a
# Lambda response may carry (GET /conversations/{id} answers them all).
MESSAGES_CEILING = 100
DEFAULT_MAX_MESSAGES = 100
DEFAULT_MAX_CONVERSATIONS = 1000
_ELLIPSIS = "…"

Role = Literal["user", "assistant"]


@dataclass
class Message:
    role: Role
    content: str
    sources: list[dict[str, Any]] = field(default_factory=list)  # as the chat returned them
    created_at: datetime = field(default_factory=utcnow)
    truncated: bool = False  # sources (or, rarely, the text) were trimmed to fit
    expires_at: datetime | None = None  # None: kept until deleted


@dataclass
class Conversation:
    id: str
    workspace_id: str
    owner: str
    title: str | None = None  # None until given or until the first question names it
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)  # the last message, else creation
    message_count: int = 0  # messages ever appended (the limit counts these)
    expires_at: datetime | None = None
    messages: list[Message] = field(default_factory=list)  # filled when asked for


class ConversationFullError(PayloadTooLargeError):
    def __init__(self, limit: int) -> None:
        super().__init__(
            f"this conversation holds its limit of {limit} messages: start a new conversation"
        )


class TooManyConversationsError(TooManyRequestsError):
    def __init__(self, limit: int) -> None:
        super().__init__(
            f"you have {limit} conversations, the most one user may keep: delete some to "
            "start a new one",
            retry_after=86_400,  # nothing frees a place but a deletion (or retention)
        )


def default_title(question: str) -> str:
    """The first question on one line, cut near DEFAULT_TITLE_CHARS (at a space when one is
    close, for text with spaces), with an ellipsis when cut."""
    text = " ".join(re.sub(r"[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]", "", question).split())
    text = "".join(ch for ch in text if ch.isprintable())
    if len(text) <= DEFAULT_TITLE_CHARS:
        return text
    cut = text[:DEFAULT_TITLE_CHARS]
    space = cut.rfind(" ")
    if space >= DEFAULT_TITLE_CHARS * 2 // 3:
        cut = cut[:space]
    return cut.rstrip(" ,.;:、。，") + _ELLIPSIS


def message_bytes(content: str, sources: list[dict[str, Any]]) -> int:
    return len(content.encode("utf-8")) + len(
        json.dumps(sources, ensure_ascii=False).encode("utf-8")
    )


def fit_message(
    content: str, sources: list[dict[str, Any]], budget: int = MAX_MESSAGE_BYTES
) -> tuple[str, list[dict[str, Any]], bool]:
    """(content, sources, truncated) within `budget` bytes: the sources' passages are
    shortened first, evenly; the text only if it alone is over."""
    if message_bytes(content, sources) <= budget:
        return content, sources, False
    # The longest passage length that fits (binary search), every passage cut to it.
    low, high = 0, max((len(str(s.get("content", ""))) for s in sources), default=0)
    while low < high:
        cap = (low + high + 1) // 2
        if message_bytes(content, [_shorten_source(s, cap) for s in sources]) <= budget:
            low = cap
        else:
            high = cap - 1
    trimmed = [_shorten_source(s, low) for s in sources]
    spare = budget - message_bytes("", trimmed)
    if len(content.encode("utf-8")) > spare:
        room = max(0, spare - len(_ELLIPSIS.encode("utf-8")))
        content = content.encode("utf-8")[:room].decode("utf-8", "ignore") + _ELLIPSIS
    return content, trimmed, True


def _shorten_source(source: dict[str, Any], cap: int) -> dict[str, Any]:
    text = str(source.get("content", ""))
    if len(text) <= cap:
        return source
    return {**source, "content": text[:cap] + _ELLIPSIS}
