"""AnswerBook: every answer kept under an id its asker may mark (thumbs up or down, with an
optional comment); a library's owners read the marked answers and the missing list
(services/chat/missing.py). docs/answers.md says what is kept, for whom and for how long.

A door wraps its answer's events in `recorded`: when the answer completes (its sources
arrive) the record is written and the sources event carries its id. A record that cannot be
written costs the answer nothing: its sources event then has no id.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime

from bunko.domain import utcnow
from bunko.domain.answers import (
    MARKABLE_DAYS,
    MARKS,
    MAX_COMMENT_CHARS,
    MAX_KEPT_ANSWER_CHARS,
    MAX_KEPT_SOURCES,
    AnswerMark,
    AnswerRecord,
    Mark,
    kept_until,
)
from bunko.domain.auth import SCOPE_WRITE, Principal
from bunko.errors import NotFoundError, PermissionDeniedError, ValidationError
from bunko.ports import SettingsStore
from bunko.ports.answers import AnswerStore
from bunko.services.chat.chat import ChatEvent, Source
from bunko.services.settings import conversation_owner

log = logging.getLogger(__name__)

SETTINGS_SCOPE = "answers"  # the library's answer settings in the SettingsStore
SOURCE_CHARS = 600  # of a cited passage, as owners read it beside a marked answer
MAX_PAGE = 200


@dataclass(frozen=True)
class AnswerSettings:
    collect_missing: bool = True  # refused and marked-down questions go on the missing list


def cited(source: Source) -> dict:
    """A cited source as a record keeps it: where it is and the start of its passage."""
    return {
        "fileName": source.file_name,
        "documentId": source.document_id,
        "chunkIndex": source.chunk_index,
        "page": source.page,
        "score": source.score,
        "quote": source.quote,
        "content": source.content[:SOURCE_CHARS],
    }


def require_owner(principal: Principal) -> None:
    """Marks and the missing list are the library's owners' (a viewer or editor: 403)."""
    if not (principal.has(SCOPE_WRITE) and principal.manages()):
        raise PermissionDeniedError("only the library's owners may read its marked answers")


class AnswerBook:
    def __init__(
        self,
        store: AnswerStore,
        *,
        settings: SettingsStore | None = None,
        retention_days: int = 365,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.store = store
        self.settings = settings
        self.retention_days = retention_days  # the audit trail's (BUNKO_AUDIT_RETENTION_DAYS)
        self.clock = clock
        self._expired_at: datetime | None = None

    # -- settings --------------------------------------------------------------------------
    def answer_settings(self, library_id: str) -> AnswerSettings:
        saved = self.settings.get_settings(SETTINGS_SCOPE, library_id) if self.settings else None
        return AnswerSettings(collect_missing=bool((saved or {}).get("collectMissing", True)))

    def change_settings(self, principal: Principal, *, collect_missing: bool) -> AnswerSettings:
        require_owner(principal)
        if self.settings is None:
            raise ValidationError("answer settings are not kept on this deployment")
        library = principal.workspace_id
        self.settings.put_settings(SETTINGS_SCOPE, library, {"collectMissing": collect_missing})
        return AnswerSettings(collect_missing=collect_missing)

    def stop_collecting(self, library_id: str) -> None:
        """Turn the library's collection off for the machine's operator (`bunko import` of a
        library whose collection was off); nothing when settings are not kept here."""
        if self.settings is not None:
            self.settings.put_settings(SETTINGS_SCOPE, library_id, {"collectMissing": False})

    def forget_library(self, library_id: str) -> None:
        """Everything kept of a library's answers (the library, or its person, is deleted)."""
        self.store.delete_library(library_id)
        if self.settings is not None:
            self.settings.delete_settings(SETTINGS_SCOPE, library_id)

    # -- recording -------------------------------------------------------------------------
    def recorded(
        self,
        answer: Callable[..., Iterator[ChatEvent]],
        *,
        principal: Principal,
        question: str,
        door: str,
        conversation_id: str | None = None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> Iterator[ChatEvent]:
        """`answer`'s events, the sources event carrying the kept answer's id."""
        events = answer(cancelled=cancelled)
        text: list[str] = []
        try:
            for event in events:
                if event.type == "content":
                    text.append(event.data)
                elif event.type == "sources":
                    kept = self.keep(
                        principal,
                        question=question,
                        answer="".join(text),
                        sources=list(event.data),
                        door=door,
                        conversation_id=conversation_id,
                        turn=event.turn,
                    )
                    event = replace(event, answer_id=kept.id if kept else None)
                yield event
        finally:
            events.close()

    def keep(
        self,
        principal: Principal,
        *,
        question: str,
        answer: str,
        sources: list[Source],
        door: str,
        conversation_id: str | None = None,
        turn: int | None = None,
    ) -> AnswerRecord | None:
        """Keep one finished answer; None (logged) when the store fails."""
        try:
            library = principal.workspace_id
            refused = not sources  # nothing found, or the model said its sources do not answer
            collected = refused and self.answer_settings(library).collect_missing
            now = self.clock()
            days = self.retention_days if collected else MARKABLE_DAYS
            record = AnswerRecord(
                library_id=library,
                asker=conversation_owner(principal),
                question=question,
                answer=answer[:MAX_KEPT_ANSWER_CHARS],
                sources=[cited(s) for s in sources[:MAX_KEPT_SOURCES]],
                refused=refused,
                door=door,
                conversation_id=conversation_id,
                turn=turn,
                at=now,
                expires_at=kept_until(now, days),
                collected=collected,
            )
            self.store.add(record)
            self._expire_now_and_then(now)
            return record
        except Exception:
            log.exception("an answer could not be kept for marking")
            return None

    def _expire_now_and_then(self, now: datetime) -> None:
        # retention at most once an hour, beside a write (the audit trail's way)
        if self._expired_at is None or (now - self._expired_at).total_seconds() >= 3600:
            self._expired_at = now
            self.store.expire(now)

    # -- marking ---------------------------------------------------------------------------
    def mark(
        self, principal: Principal, answer_id: str, *, mark: str, comment: str | None = None
    ) -> AnswerRecord:
        """Its asker marks an answer (again: the new mark replaces the last). Another
        person's, or another library's, answer is not found (404)."""
        if mark not in MARKS:
            raise ValidationError("mark: up or down")
        comment = (comment or "").strip() or None
        if comment is not None and len(comment) > MAX_COMMENT_CHARS:
            raise ValidationError(f"comment: at most {MAX_COMMENT_CHARS} characters")
        library = principal.workspace_id
        record = self.store.get(library, answer_id)
        if record is None or record.asker != conversation_owner(principal):
            raise NotFoundError(f"answer {answer_id} not found")
        now = self.clock()
        down: Mark = "down"
        by = principal.user_id or conversation_owner(principal)
        marked = self.store.set_mark(
            library,
            answer_id,
            AnswerMark(mark, comment, by, now),  # type: ignore[arg-type]
            collected=mark == down and self.answer_settings(library).collect_missing,
            expires_at=kept_until(now, self.retention_days),
        )
        if marked is None:  # expired or deleted between the two reads
            raise NotFoundError(f"answer {answer_id} not found")
        return marked

    def marked(
        self, principal: Principal, *, limit: int = 50, offset: int = 0
    ) -> tuple[list[AnswerRecord], int]:
        """The library's marked answers, last marked first (owners only)."""
        require_owner(principal)
        if not 1 <= limit <= MAX_PAGE:
            raise ValidationError(f"limit: 1 to {MAX_PAGE}")
        return self.store.marked(principal.workspace_id, limit=limit, offset=offset)
