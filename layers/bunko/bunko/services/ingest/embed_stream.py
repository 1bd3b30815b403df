"""EmbedStream: the texts of successive documents, embedded in a thread in batches of exactly
`batch_size` across document boundaries, handed back document by document.

Exact batches: a document's chunks never make a small batch of their own (70 chunks embedded
as 64 + 6 pay a whole call for the 6), so the pipeline embeds the same batches as the
embedder alone would. One exception: when the embedder has nothing to do, the texts waiting
go at once (a smaller batch beats an idle embedder: at the start of each job batch, and
whenever preparing documents is slower than embedding them). A batch that fails fails
exactly the documents with a chunk in it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

T = TypeVar("T")
Vectors = np.ndarray | None  # None: the embedder gives no vectors (keyword search only)


@dataclass
class _Batch:
    start: int  # the stream position of its first text
    end: int
    future: Future


class EmbedStream(Generic[T]):
    def __init__(
        self, embed: Callable[[list[str]], Vectors], *, batch_size: int, executor: Executor
    ) -> None:
        self._embed, self._size, self._executor = embed, batch_size, executor
        self._texts: list[str] = []  # not yet submitted
        self._items: deque[tuple[T, int, int]] = deque()  # item, its stream span
        self._batches: deque[_Batch] = deque()
        self._last: Future | None = None  # the batch submitted last (the queue is FIFO)
        self._end = 0  # stream position after the last text added

    def __len__(self) -> int:
        """Items not handed back yet."""
        return len(self._items)

    def add(self, item: T, texts: list[str]) -> None:
        """Queue an item's texts; every full batch is submitted at once, and what waits
        too when the embedder is idle."""
        self._items.append((item, self._end, self._end + len(texts)))
        self._end += len(texts)
        self._texts += texts
        while len(self._texts) >= self._size:
            self._submit(self._size)
        if self._texts and (self._last is None or self._last.done()):
            self._submit(len(self._texts))

    def flush(self) -> None:
        """Start embedding what is left (a last, smaller batch): no more items follow."""
        if self._texts:
            self._submit(len(self._texts))

    def _submit(self, n: int) -> None:
        texts, self._texts = self._texts[:n], self._texts[n:]
        start = self._end - len(self._texts) - n
        self._last = self._executor.submit(self._embed, texts)
        self._batches.append(_Batch(start, start + n, self._last))

    def ready(self, *, wait: bool = False) -> list[tuple[T, Vectors | BaseException]]:
        """The items, in order, whose every batch has finished: each with its vectors or the
        error of a batch it had texts in. `wait`: wait for the first item's batches."""
        done: list[tuple[T, Vectors | BaseException]] = []
        while self._items:
            item, start, end = self._items[0]
            batches = [b for b in self._batches if b.start < end and b.end > start]
            if end > start and (not batches or batches[-1].end < end):
                break  # some of its texts are not submitted yet
            if not (wait and not done) and not all(b.future.done() for b in batches):
                break
            self._items.popleft()
            done.append((item, _vectors(batches, start, end)))
            while self._batches and self._batches[0].end <= end:
                self._batches.popleft()  # no later item has texts in it
        return done


def _vectors(batches: list[_Batch], start: int, end: int) -> Vectors | BaseException:
    parts: list[np.ndarray] = []
    for batch in batches:
        error = batch.future.exception()
        if error is not None:
            return error
        found: Vectors = batch.future.result()
        if found is None:
            return None
        parts.append(found[max(start - batch.start, 0) : end - batch.start])
    return np.concatenate(parts) if len(parts) > 1 else parts[0] if parts else None
