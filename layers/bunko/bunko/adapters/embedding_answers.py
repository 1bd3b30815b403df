"""An OpenAI-compatible embeddings answer, read with suspicion: how many bytes it may take,
and the vectors it holds, refused (RefusedAnswer, naming the problem) unless there is one
per text sent, all of one length within MAX_EMBEDDING_DIMENSION (and the length expected,
once known), every number finite."""

from __future__ import annotations

import json

import numpy as np

from bunko.adapters.bounded_http import RefusedAnswer
from bunko.adapters.outbound_limits import (
    ANSWER_SLACK,
    BYTES_PER_NUMBER,
    BYTES_PER_VECTOR,
    MAX_EMBEDDING_DIMENSION,
)


def _texts(count: int) -> str:
    return f"{count} text" if count == 1 else f"{count} texts"


def answer_limit(count: int, dimension: int | None) -> int:
    """The most bytes an answer of `count` vectors may take: their numbers as JSON text,
    at the expected dimension, or the largest allowed while it is unknown (a probe)."""
    numbers = dimension or MAX_EMBEDDING_DIMENSION
    return count * (numbers * BYTES_PER_NUMBER + BYTES_PER_VECTOR) + ANSWER_SLACK


def too_large(head: bytes, *, count: int, limit: int, dimension: int | None) -> str:
    """Why an answer that passed `limit` bytes was cut off, from its first `head` bytes:
    most often vectors too long, which the first one shows."""
    numbers, complete = _first_vector(head)
    most = MAX_EMBEDDING_DIMENSION
    if numbers > most or (dimension and numbers > dimension):
        if complete:
            size = f"{numbers}-dimensional vectors"
        else:
            size = f"vectors of at least {numbers:,} dimensions"
        expected = f"expected {dimension}" if dimension and numbers <= most else f"at most {most}"
        return f"the endpoint answered {size}; {expected}"
    vectors = "1 vector" if count == 1 else f"{count} vectors"
    return (
        f"the endpoint's answer for {_texts(count)} passed {limit:,} bytes, more than "
        f"{vectors} of {dimension or most} numbers can take; cut off"
    )


def _first_vector(head: bytes) -> tuple[int, bool]:
    """How many numbers the first vector in `head` has (so far), and whether it ended."""
    start = head.find(b'"embedding"')
    opening = head.find(b"[", start) if start >= 0 else -1
    if opening < 0:
        return 0, False
    closing = head.find(b"]", opening)
    numbers = head[opening + 1 : closing if closing >= 0 else len(head)]
    if closing >= 0:
        return (numbers.count(b",") + 1 if numbers.strip() else 0), True
    return numbers.count(b","), False  # the last number may be cut: count the whole ones


def vectors(body: bytes, *, count: int, dimension: int | None) -> np.ndarray:
    """The answer's vectors in the order of the texts sent, as float32 rows."""
    try:
        rows = json.loads(body)["data"]
        numbered = {int(row.get("index", i)): row["embedding"] for i, row in enumerate(rows)}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RefusedAnswer(f"the endpoint's answer is no embeddings list ({exc!r})") from exc
    if len(rows) != count:
        raise RefusedAnswer(f"the endpoint answered {len(rows)} vectors for {_texts(count)}")
    if sorted(numbered) != list(range(count)):
        raise RefusedAnswer(f"the endpoint's vectors are not numbered 0 to {count - 1}")
    ordered = [numbered[i] for i in range(count)]
    if not all(isinstance(v, list) for v in ordered):
        raise RefusedAnswer("the endpoint answered a vector that is no list of numbers")
    lengths = sorted({len(v) for v in ordered})
    if len(lengths) > 1:
        raise RefusedAnswer(
            f"the endpoint answered vectors of different lengths ({lengths[0]} to "
            f"{lengths[-1]} numbers)"
        )
    if not 0 < lengths[0] <= MAX_EMBEDDING_DIMENSION:
        raise RefusedAnswer(
            f"the endpoint answered {lengths[0]}-dimensional vectors; at most "
            f"{MAX_EMBEDDING_DIMENSION}"
        )
    if dimension is not None and lengths[0] != dimension:
        raise RefusedAnswer(f"the server returned {lengths[0]} dimensions, expected {dimension}")
    try:
        with np.errstate(over="ignore"):  # a number too large for float32 is refused below
            matrix = np.asarray(ordered, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise RefusedAnswer(f"the endpoint answered a vector of non-numbers ({exc})") from exc
    if matrix.dtype != np.float32 or matrix.ndim != 2 or not np.isfinite(matrix).all():
        raise RefusedAnswer(
            "the endpoint answered a vector holding a value that is not a finite number "
            "(NaN, infinity, or too large)"
        )
    return matrix
