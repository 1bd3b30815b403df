"""Answers moved with a library (`bunko export --conversations`): the answers people marked
and the questions the library collected as missing (docs/answers.md), what its owners read.
An answer nobody marked and the library did not collect is its asker's alone, and expires
within days: it stays behind. Who asked and who marked travel by username; an API key's
answers travel as the library's own (a key never leaves its deployment)."""

from __future__ import annotations

import uuid
from typing import Any

from bunko.domain import utcnow
from bunko.domain.answers import (
    MAX_COLLECTED,
    MAX_COMMENT_CHARS,
    MAX_KEPT_ANSWER_CHARS,
    MAX_KEPT_SOURCES,
    AnswerMark,
    AnswerRecord,
)
from bunko.services.moving.archive import ANSWERS, ArchiveReader, ArchiveWriter
from bunko.services.moving.conversations import moved_conversation_id, when
from bunko.services.moving.parts import MovingParts

_ANSWER_IDS = uuid.UUID("5d0c2b1a-7e43-4f6a-b0d9-3a8e2c61f4b7")
_PAGE = 100


def export_answers(
    parts: MovingParts, writer: ArchiveWriter, workspace_id: str, paths: dict[str, str]
) -> int:
    """The library's marked answers, then the rest of its missing list; how many."""
    if parts.answers is None:
        return 0
    store = parts.answers.store
    users = parts.users.list_users() if parts.users else []
    usernames = {u.id: u.username for u in users}
    seen: set[str] = set()

    def add(record: AnswerRecord) -> None:
        if record.id not in seen:
            seen.add(record.id)
            writer.add_line(ANSWERS, _answer_record(record, usernames, paths))

    offset = 0
    while True:
        page, _ = store.marked(workspace_id, limit=_PAGE, offset=offset)
        for record in page:
            add(record)
        if len(page) < _PAGE:
            break
        offset += _PAGE
    for record in store.collected(workspace_id, limit=MAX_COLLECTED):
        add(record)
    return len(seen)


def _answer_record(
    record: AnswerRecord, usernames: dict[str, str], paths: dict[str, str]
) -> dict[str, Any]:
    return {
        "id": record.id,
        "asker": usernames.get(record.asker),  # None: a key's, or the library's own
        "question": record.question,
        "answer": record.answer,
        "sources": [
            {**s, "path": paths.get(s.get("documentId") or "")}
            for s in record.sources
            if isinstance(s, dict)
        ],
        "refused": record.refused,
        "door": record.door,
        "conversation_id": record.conversation_id,
        "turn": record.turn,
        "at": record.at.isoformat(),
        "expires_at": record.expires_at.isoformat() if record.expires_at else None,
        "collected": record.collected,
        "mark": record.mark,
        "comment": record.comment,
        "marked_by": usernames.get(record.marked_by or ""),
        "marked_at": record.marked_at.isoformat() if record.marked_at else None,
    }


def collects_missing(parts: MovingParts, workspace_id: str) -> bool | None:
    """The library's setting: whether it collects the questions it could not answer."""
    if parts.answers is None:
        return None
    return parts.answers.answer_settings(workspace_id).collect_missing


def import_answers(
    parts: MovingParts,
    reader: ArchiveReader,
    workspace: str,
    paths: dict[str, str],
    collect: bool | None,
) -> int:
    """The archive's answers into the library (its owners' marked list and missing list);
    how many were added. One already here (its id derives from the archive's) is left alone;
    one whose keeping ended since the export is not added. `collect`: the archive library's
    setting; a library that does not collect (off there, or here) takes no question onto
    its missing list, only the marks."""
    if parts.answers is None:
        return 0
    book = parts.answers
    if collect is False:
        book.stop_collecting(workspace)
    collecting = book.answer_settings(workspace).collect_missing
    store, now, added = book.store, utcnow(), 0
    for raw in reader.answers():
        if raw.get("mark") not in ("up", "down") and not collecting:
            continue  # on the missing list only, and this library keeps none
        answer_id = str(uuid.uuid5(_ANSWER_IDS, f"{workspace}:{raw['id']}"))
        expires = when(raw.get("expires_at")) if raw.get("expires_at") else None
        if (expires is not None and expires <= now) or store.get(workspace, answer_id):
            continue
        conversation = raw.get("conversation_id")
        turn = raw.get("turn")
        store.add(
            AnswerRecord(
                id=answer_id,
                library_id=workspace,
                asker=_user_id(parts, raw.get("asker")) or f"workspace:{workspace}",
                question=raw["question"][:MAX_KEPT_ANSWER_CHARS],  # no door takes a longer one
                answer=raw["answer"][:MAX_KEPT_ANSWER_CHARS],  # as much as any answer keeps
                sources=[_source(s, paths) for s in raw.get("sources", []) if isinstance(s, dict)][
                    :MAX_KEPT_SOURCES
                ],
                refused=bool(raw.get("refused")),
                door=str(raw.get("door") or "rest"),
                conversation_id=moved_conversation_id(workspace, conversation)
                if isinstance(conversation, str)
                else None,
                turn=turn if isinstance(turn, int) and not isinstance(turn, bool) else None,
                at=when(raw.get("at")),
                expires_at=expires,
                collected=collecting and bool(raw.get("collected")),
            )
        )
        if raw.get("mark") in ("up", "down"):
            store.set_mark(
                workspace,
                answer_id,
                AnswerMark(
                    mark=raw["mark"],
                    comment=(raw.get("comment") or "")[:MAX_COMMENT_CHARS] or None,
                    marked_by=_user_id(parts, raw.get("marked_by")) or f"workspace:{workspace}",
                    marked_at=when(raw.get("marked_at")),
                ),
                collected=collecting and bool(raw.get("collected")),
                expires_at=expires,
            )
        added += 1
    return added


def _user_id(parts: MovingParts, username: Any) -> str | None:
    if not isinstance(username, str) or parts.users is None:
        return None
    user = parts.users.get_user_by_username(username)
    return user.id if user else None


def _source(raw: dict[str, Any], paths: dict[str, str]) -> dict[str, Any]:
    source = dict(raw)
    path = source.pop("path", None)
    source["documentId"] = paths.get(path or "", source.get("documentId"))
    return source
