"""ConversationService's rules over the SQLite store: titles from the first question, messages
trimmed to the stored size, a turn kept only once its answer is complete, retention dating
every record and pruning what expired (at start and on writes), the owner's limit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bunko.adapters.local.sqlite.conversations import SqliteConversationStore
from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.domain.conversations import (
    DEFAULT_TITLE_CHARS,
    MAX_MESSAGE_BYTES,
    TooManyConversationsError,
    default_title,
    fit_message,
    message_bytes,
)
from bunko.domain.evidence import Evidence
from bunko.errors import NotFoundError, ValidationError
from bunko.operations.aurak import ChatSource
from bunko.services.chat.chat import ChatEvent, Source
from bunko.services.chat.conversations import (
    ConversationLimits,
    ConversationService,
    stored_source,
)

WS, ME = "ws", "me"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(microseconds=10)
        return self.now


@pytest.fixture
def sqlite_conversations(tmp_path):
    db = SqliteDatabase(tmp_path / "bunko.db")
    yield SqliteConversationStore(db)
    db.close()


def test_a_title_is_the_first_question_on_one_line_and_short():
    assert default_title("  When was\nthe lighthouse\tbuilt? ") == "When was the lighthouse built?"
    long = "How often does the keeper trim the lamp wick of the old Kessock lighthouse in winter?"
    title = default_title(long)
    assert title.endswith("…") and len(title) <= DEFAULT_TITLE_CHARS + 1
    assert long.startswith(title[:-1]) and not title[:-1].endswith(" ")
    japanese = "灯台" * 50
    assert default_title(japanese) == japanese[:DEFAULT_TITLE_CHARS] + "…"
    assert default_title("a\u202eb\x00c") == "abc"


def test_a_message_over_the_limit_keeps_its_text_and_trims_the_passages():
    sources = [{"fileName": "a.txt", "content": "語" * 20_000, "chunkIndex": i} for i in range(3)]
    text, kept, truncated = fit_message("the answer [1]", sources)
    assert truncated and text == "the answer [1]"
    assert message_bytes(text, kept) <= MAX_MESSAGE_BYTES
    assert all(s["content"].endswith("…") and s["chunkIndex"] == i for i, s in enumerate(kept))
    small = [{"fileName": "a.txt", "content": "short"}]
    assert fit_message("ok", small) == ("ok", small, False)
    huge, none, cut = fit_message("字" * 30_000, [])
    assert cut and huge.endswith("…") and message_bytes(huge, none) <= MAX_MESSAGE_BYTES


def _answer(*events: ChatEvent):
    def answer(*, cancelled):
        yield from events

    return answer


SOURCE = Source("a.txt", "The keeper trims the lamp.", 0.9, 0, "doc-1")


def test_a_turn_is_saved_when_its_answer_completes(sqlite_conversations):
    service = ConversationService(sqlite_conversations)
    made = service.create(WS, ME)
    events = list(service.recorded(
        _answer(ChatEvent("progress", "Searching..."), ChatEvent("content", "The keeper "),
                ChatEvent("content", "[1]."), ChatEvent("sources", [SOURCE])),
        workspace_id=WS, owner=ME, conversation_id=made.id, question="Who trims it?",
    ))  # fmt: skip
    assert [e.type for e in events] == ["progress", "content", "content", "sources"]
    kept = service.get(WS, ME, made.id)
    assert kept.title == "Who trims it?"
    assert [(m.role, m.content) for m in kept.messages] == [
        ("user", "Who trims it?"), ("assistant", "The keeper [1].")
    ]  # fmt: skip
    assert kept.messages[1].sources == [stored_source(SOURCE)]
    assert kept.messages[0].created_at < kept.messages[1].created_at


def test_a_failed_or_stopped_answer_is_not_kept_and_a_lost_save_says_so(sqlite_conversations):
    service = ConversationService(sqlite_conversations)
    made = service.create(WS, ME)
    failed = _answer(ChatEvent("content", "half"), ChatEvent("error", "provider: down"))
    list(service.recorded(failed, workspace_id=WS, owner=ME, conversation_id=made.id,
                          question="q"))  # fmt: skip
    stopped = service.recorded(
        _answer(ChatEvent("content", "half"), ChatEvent("sources", [])),
        workspace_id=WS,
        owner=ME,
        conversation_id=made.id,
        question="q",
    )
    next(stopped)
    stopped.close()  # the client went away before the answer completed
    assert service.get(WS, ME, made.id).messages == []
    service.delete(WS, ME, made.id)
    lost = list(service.recorded(
        _answer(ChatEvent("content", "done"), ChatEvent("sources", [])),
        workspace_id=WS, owner=ME, conversation_id=made.id, question="q",
    ))  # fmt: skip
    assert lost[-1].type == "error" and "not saved" in lost[-1].data


def test_retention_dates_records_and_prunes_at_start_and_on_writes(sqlite_conversations):
    clock = Clock()
    service = ConversationService(
        sqlite_conversations, ConversationLimits(retention_days=2), clock=clock
    )
    old = service.create(WS, ME)
    assert old.expires_at == old.created_at + timedelta(days=2)
    clock.now += timedelta(days=1)
    service.record_turn(WS, ME, old.id, question="q", answer="a", sources=[])
    kept = service.get(WS, ME, old.id)
    assert kept.expires_at == kept.messages[-1].created_at + timedelta(days=2)
    clock.now += timedelta(days=3)
    assert ConversationService(sqlite_conversations, clock=clock).list(WS, ME, limit=10) == []
    with pytest.raises(NotFoundError):
        service.get(WS, ME, old.id)
    row = (
        sqlite_conversations.db.connect()
        .execute("SELECT COUNT(*) FROM conversation_messages")
        .fetchone()
    )
    assert row[0] == 0  # the new service pruned at start


def test_the_owners_limit_and_titles_are_checked(sqlite_conversations):
    service = ConversationService(sqlite_conversations, ConversationLimits(max_conversations=2))
    service.create(WS, ME, "one")
    service.create(WS, ME, "   ")  # blank: untitled
    with pytest.raises(TooManyConversationsError, match="2 conversations"):
        service.create(WS, ME)
    assert service.create(WS, "someone else").owner == "someone else"
    with pytest.raises(ValidationError, match="title"):
        service.create(WS, "third", "x" * 201)


def test_a_saved_source_reads_back_as_the_chat_stream_sent_it():
    """GET /conversations hands saved turns back: a stored source is aurak's ChatSource."""
    quoted = Source(
        "a.pdf",
        "The keeper trims the lamp. He sleeps.",
        0.75,
        3,
        "doc-2",
        page=2,
        page_end=3,
        quote="He sleeps.",
        quote_start=27,
        quote_end=37,
        quotes=(Evidence("He sleeps.", 27, 37), Evidence("The keeper trims the lamp.", 0, 26)),
    )
    for source in (SOURCE, quoted):
        assert stored_source(source) == ChatSource.of(source).body()
