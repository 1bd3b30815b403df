"""The conversation store contract, on SQLite and on DynamoDB (moto): per owner and workspace,
most recently active first, appends all-or-none within the limit (also when two race), the
first question's title kept, expiry hiding records before they are removed, deletes."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from bunko.adapters.local.sqlite.conversations import SqliteConversationStore
from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.domain import utcnow
from bunko.domain.conversations import (
    MAX_MESSAGE_BYTES,
    Conversation,
    ConversationFullError,
    Message,
    fit_message,
    message_bytes,
)
from bunko.errors import ConflictError
from tests.contract.params import MOTO_MISSING

WS, OTHER_WS = str(uuid.uuid4()), str(uuid.uuid4())
ME, YOU = str(uuid.uuid4()), "workspace:" + WS


def _sqlite(tmp_path: Path) -> Iterator[SqliteConversationStore]:
    db = SqliteDatabase(tmp_path / "bunko.db")
    yield SqliteConversationStore(db)
    db.close()


def _dynamodb(tmp_path: Path) -> Iterator:
    from bunko.adapters.aws.dynamodb.conversations import DynamoDBConversationStore
    from bunko.adapters.aws.dynamodb.table import Table
    from tests.aws.stand_ins import TABLE, moto_aws
    from tests.contract.aws_params import _OneRequestAtATime

    with moto_aws() as aws:
        # one request at a time: moto applies a transaction's items without a lock
        yield DynamoDBConversationStore(Table(_OneRequestAtATime(aws.dynamodb), TABLE))


FACTORIES = {"sqlite": _sqlite, "dynamodb": _dynamodb}
PARAMS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "dynamodb",
        id="dynamodb",
        marks=[pytest.mark.aws]
        + ([pytest.mark.skip(reason=f"dynamodb: {MOTO_MISSING}")] if MOTO_MISSING else []),
    ),
]


@pytest.fixture(params=PARAMS)
def conversation_store(request: pytest.FixtureRequest, tmp_path: Path):
    yield from FACTORIES[request.param](tmp_path)


def _new(
    conversation_store, *, ws: str = WS, owner: str = ME, title: str | None = None, **kw
) -> Conversation:
    now = kw.pop("when", None) or utcnow()
    conversation = Conversation(
        id=str(uuid.uuid4()), workspace_id=ws, owner=owner, title=title,
        created_at=now, updated_at=now, **kw,
    )  # fmt: skip
    conversation_store.add(conversation)
    return conversation


def _turn(question: str, answer: str, sources=(), **kw) -> list[Message]:
    now = kw.pop("when", None) or utcnow()
    return [
        Message("user", question, [], now, **kw),
        Message("assistant", answer, list(sources), now + timedelta(microseconds=5), **kw),
    ]


SOURCE = {"fileName": "灯台.txt", "content": "灯台は1872年に建てられた。", "score": 0.83,
          "chunkIndex": 0, "documentId": str(uuid.uuid4())}  # fmt: skip


def test_conversations_are_per_owner_and_workspace(conversation_store):
    mine = _new(conversation_store, title="Lighthouse")
    _new(conversation_store, owner=YOU)
    _new(conversation_store, ws=OTHER_WS)
    assert conversation_store.get(WS, ME, mine.id) == mine
    assert conversation_store.get(WS, YOU, mine.id) is None
    assert conversation_store.get(OTHER_WS, ME, mine.id) is None
    assert [c.id for c in conversation_store.list_conversations(WS, ME, limit=10)] == [mine.id]
    assert conversation_store.count(WS, ME) == 1 and conversation_store.count(WS, YOU) == 1
    assert conversation_store.rename(WS, YOU, mine.id, "stolen") is None
    assert conversation_store.append(WS, YOU, mine.id, _turn("q", "a"), max_messages=10) is None
    assert conversation_store.delete(WS, YOU, mine.id) is False
    assert conversation_store.delete(OTHER_WS, ME, mine.id) is False
    assert conversation_store.get(WS, ME, mine.id) == mine
    with pytest.raises(ConflictError):
        conversation_store.add(mine)


def test_list_is_most_recently_active_first_and_pages(conversation_store):
    start = utcnow() - timedelta(hours=1)
    made = [_new(conversation_store, when=start + timedelta(minutes=i)) for i in range(5)]
    assert [c.id for c in conversation_store.list_conversations(WS, ME, limit=10)] == [
        c.id for c in reversed(made)
    ]
    conversation_store.append(WS, ME, made[1].id, _turn("again?", "yes"), max_messages=10)
    order = [c.id for c in conversation_store.list_conversations(WS, ME, limit=10)]
    assert order[0] == made[1].id and len(order) == 5
    assert [
        c.id for c in conversation_store.list_conversations(WS, ME, limit=2, offset=1)
    ] == order[1:3]
    assert conversation_store.list_conversations(WS, ME, limit=2, offset=5) == []
    assert all(c.messages == [] for c in conversation_store.list_conversations(WS, ME, limit=10))


def test_append_keeps_order_sources_and_the_first_title(conversation_store):
    c = _new(conversation_store)
    first = _turn("いつ建てられましたか？", "1872年です [1]。", [SOURCE])
    saved = conversation_store.append(
        WS, ME, c.id, first, max_messages=10, title="いつ建てられましたか？"
    )
    assert saved.title == "いつ建てられましたか？" and saved.message_count == 2
    assert saved.updated_at == first[-1].created_at
    second = _turn("And now?", "A museum [1].", [SOURCE], truncated=True)
    saved = conversation_store.append(WS, ME, c.id, second, max_messages=10, title="And now?")
    assert saved.title == "いつ建てられましたか？"  # named once, by the first question
    got = conversation_store.get(WS, ME, c.id)
    assert got.messages == first + second
    assert got.messages[1].sources == [SOURCE]
    assert conversation_store.get(WS, ME, c.id, messages=False).messages == []
    named = _new(conversation_store, title="Mine")
    assert (
        conversation_store.append(WS, ME, named.id, first, max_messages=10, title="other").title
        == "Mine"
    )
    renamed = conversation_store.rename(WS, ME, c.id, "Kessock")
    assert renamed.title == "Kessock" and renamed.message_count == 4


def test_a_full_conversation_takes_nothing(conversation_store):
    c = _new(conversation_store)
    conversation_store.append(WS, ME, c.id, _turn("1", "one"), max_messages=3)
    with pytest.raises(ConversationFullError, match="limit of 3 messages"):
        conversation_store.append(WS, ME, c.id, _turn("2", "two"), max_messages=3)
    got = conversation_store.get(WS, ME, c.id)
    assert got.message_count == 2 and [m.content for m in got.messages] == ["1", "one"]


def test_answers_saved_at_once_never_share_a_place(conversation_store):
    c = _new(conversation_store)
    errors: list[Exception] = []

    def save(n: int) -> None:
        try:
            conversation_store.append(WS, ME, c.id, _turn(f"q{n}", f"a{n}"), max_messages=12)
        except ConversationFullError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = conversation_store.get(WS, ME, c.id)
    assert len(errors) == 2 and got.message_count == 12 and len(got.messages) == 12
    pairs = [
        (q.content[1:], a.content[1:])
        for q, a in zip(got.messages[::2], got.messages[1::2], strict=True)
    ]
    assert all(q == a for q, a in pairs)  # each question right before its own answer


def test_expired_records_are_gone_for_every_read(conversation_store):
    past, future = utcnow() - timedelta(seconds=1), utcnow() + timedelta(days=1)
    gone = _new(conversation_store, expires_at=past)
    kept = _new(conversation_store, expires_at=future)
    assert conversation_store.get(WS, ME, gone.id) is None
    assert [c.id for c in conversation_store.list_conversations(WS, ME, limit=10)] == [kept.id]
    assert conversation_store.count(WS, ME) == 1
    assert conversation_store.rename(WS, ME, gone.id, "x") is None
    assert conversation_store.append(WS, ME, gone.id, _turn("q", "a"), max_messages=10) is None
    old = _turn("old", "old answer", expires_at=past)
    new = _turn("new", "new answer", expires_at=future)
    conversation_store.append(WS, ME, kept.id, old, max_messages=10)
    saved = conversation_store.append(WS, ME, kept.id, new, max_messages=10, expires_at=future)
    assert saved.expires_at == future
    assert (
        conversation_store.get(WS, ME, kept.id).messages == new
    )  # the old turn expired on its own
    conversation_store.prune(utcnow())
    assert conversation_store.get(WS, ME, gone.id) is None
    assert conversation_store.get(WS, ME, kept.id).messages == new


def test_a_message_at_the_size_limit_is_kept_whole(conversation_store):
    c = _new(conversation_store)
    passage = "灯台守は毎晩ランプの芯を切りそろえる。" * 400  # 3 bytes a character
    sources = [{**SOURCE, "content": passage, "chunkIndex": i} for i in range(10)]
    answer, kept, truncated = fit_message("答え [1]。" * 200, sources)
    assert truncated and MAX_MESSAGE_BYTES - 2000 < message_bytes(answer, kept) <= MAX_MESSAGE_BYTES
    turn = _turn("長い質問" * 600, answer, kept)
    conversation_store.append(WS, ME, c.id, turn + _turn("二つ目", answer, kept), max_messages=10)
    assert conversation_store.get(WS, ME, c.id).messages[1].sources == kept


def test_deletes_take_the_messages_and_stay_in_their_scope(conversation_store):
    a, b = _new(conversation_store), _new(conversation_store)
    yours, elsewhere = _new(conversation_store, owner=YOU), _new(conversation_store, ws=OTHER_WS)
    conversation_store.append(WS, ME, a.id, _turn("q", "a"), max_messages=10)
    assert conversation_store.delete(WS, ME, a.id) is True
    assert (
        conversation_store.get(WS, ME, a.id) is None
        and conversation_store.delete(WS, ME, a.id) is False
    )
    assert conversation_store.delete_owner(WS, ME) == 1
    assert (
        conversation_store.get(WS, ME, b.id) is None
        and conversation_store.get(WS, YOU, yours.id) is not None
    )
    _new(conversation_store)
    assert conversation_store.delete_workspace(WS) == 2
    assert conversation_store.count(WS, ME) == 0 and conversation_store.count(WS, YOU) == 0
    assert conversation_store.get(OTHER_WS, ME, elsewhere.id) is not None
