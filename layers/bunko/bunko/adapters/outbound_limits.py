"""The bounds of every call Bunko makes to a model endpoint (embeddings, chat, rerank): what
an answer may hold, how big it may be and how long it may take, whatever the endpoint says.
One place, so the adapters, the settings and docs/security.md agree."""

from __future__ import annotations

from bunko.domain.accounts import MAX_EMBEDDING_DIMENSION

__all__ = ["MAX_EMBEDDING_DIMENSION"]

# An embeddings answer may be as big as its vectors written as JSON text, plus slack:
# a float as JSON, with its comma and a space, is at most 25 characters
# ("-1.2345678901234567e-05, "); the rest of a vector's object (index, "object") is short,
# and `model` and `usage` come once.
BYTES_PER_NUMBER = 40
BYTES_PER_VECTOR = 512
ANSWER_SLACK = 64 * 1024

# An error answer is read up to this much (its message), the rest is dropped.
ERROR_BYTES = 64 * 1024

# Each wait (connect, a read) has the client's timeout; these bound the whole answer.
EMBED_SECONDS = 120.0
CHAT_SECONDS = 900.0  # the longest a Lambda function runs; a long local generation fits
RERANK_SECONDS = 60.0

# A streamed chat answer: at most max_tokens pieces of text, at most this many characters a
# token on average, and this many bytes a token on the wire (one SSE event per token, with
# its JSON envelope, is 150-400 bytes).
CHAT_CHARS_PER_TOKEN = 32
CHAT_BYTES_PER_TOKEN = 1024

# A rerank answer: a result per document sent at most, each a small object, or the document
# itself when the server echoes it back.
RERANK_BYTES_PER_RESULT = 256
