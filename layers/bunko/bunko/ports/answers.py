"""Where answers and their marks are kept (domain/answers.py). Every read names the library:
another library's answer id finds nothing. A record past `expires_at` is gone for every read
(the AWS table's TTL removes it some time later; `expire` removes it locally)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from bunko.domain.answers import AnswerMark, AnswerRecord


class AnswerStore(Protocol):
    def add(self, record: AnswerRecord) -> None:
        """Keep one answer."""

    def get(self, library_id: str, answer_id: str) -> AnswerRecord | None: ...

    def set_mark(
        self,
        library_id: str,
        answer_id: str,
        marked: AnswerMark,
        *,
        collected: bool,
        expires_at: datetime | None,
    ) -> AnswerRecord | None:
        """Mark it with `marked` (a new mark replaces the last), put it on the missing list when
        `collected` (it stays there once on it), keep it until `expires_at`; None when
        there is no such answer in the library."""

    def marked(
        self, library_id: str, *, limit: int, offset: int = 0
    ) -> tuple[list[AnswerRecord], int]:
        """The library's marked answers, last marked first, and how many there are."""

    def collected(self, library_id: str, *, limit: int) -> list[AnswerRecord]:
        """The library's missing list (refused or marked down), newest answer first."""

    def delete_library(self, library_id: str) -> int:
        """Every answer of the library; returns how many."""

    def expire(self, now: datetime) -> int:
        """Remove what expired by `now`; how many went (0 where the store's TTL does it)."""
