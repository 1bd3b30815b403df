"""The request limits every door holds (DESIGN decision 9): REST, MCP, /v1 and the web app
(which speaks REST) import these figures, and the chat doors call `check_history`, so no door
accepts more than another. docs/security.md, "Request limits", lists each with its doors.
"""

from __future__ import annotations

from collections.abc import Sequence

from bunko.errors import ValidationError

# A chat question (REST `message`, MCP `question`, /v1's last message).
MESSAGE_CHARS = 8_000
# One earlier turn of a conversation a client sends along.
TURN_CHARS = 4 * MESSAGE_CHARS
# Earlier turns sent with a question: a stored conversation's ceiling, so a client can replay
# a whole one. The model reads only the last few, so more would only cost memory.
HISTORY_TURNS = 100
# All earlier turns together; far below HISTORY_TURNS * TURN_CHARS (3.2 M characters).
HISTORY_CHARS = 200_000
# A search query (REST `q`, MCP search_text `query`, research corpora search).
QUERY_CHARS = 4_000
# The text the search service embeds, whatever door it came through: a question plus the
# two earlier questions a follow-up is searched with (8,000 + 2 x 2,000) fits.
SEARCHED_CHARS = 16_000
# Hits a search returns (`limit`) and sources a chat cites (`topK`).
RESULTS = 100


def check_history(contents: Sequence[str]) -> None:
    """Refuse a history over HISTORY_TURNS turns or HISTORY_CHARS characters in all (each
    turn's own TURN_CHARS bound is the door schema's)."""
    if len(contents) > HISTORY_TURNS:
        raise ValidationError(
            f"history: at most {HISTORY_TURNS} earlier turns (HISTORY_TURNS); got {len(contents)}"
        )
    total = sum(len(text) for text in contents)
    if total > HISTORY_CHARS:
        raise ValidationError(
            f"history: at most {HISTORY_CHARS} characters in all earlier turns "
            f"(HISTORY_CHARS); got {total}"
        )
