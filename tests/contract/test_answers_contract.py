"""AnswerStore: the same behaviour on SQLite and on DynamoDB (moto): an answer reads back
whole only in its own library; a mark replaces the last and lists the answer, last marked
first, paged with a total; the missing list holds what was collected, newest first; an
answer past its retention is never read; deleting a library takes its answers."""

from __future__ import annotations

from datetime import timedelta

from bunko.domain import utcnow
from bunko.domain.answers import AnswerMark, AnswerRecord
from tests.contract.accounts import AccountStores

NOW = utcnow().replace(microsecond=0)  # expiry is kept in whole seconds
SOURCES = [{"fileName": "leave.md", "documentId": "d1", "chunkIndex": 2, "score": 0.61,
            "page": None, "quote": "Leave is 20 days."}]  # fmt: skip


def _answer(minutes_ago: int, **fields) -> AnswerRecord:
    base = {"library_id": "lib-a", "asker": "u-ada", "question": "How long is leave?",
            "answer": "Leave is 20 days [1].", "sources": SOURCES,
            "expires_at": NOW + timedelta(days=30)}  # fmt: skip
    return AnswerRecord(at=NOW - timedelta(minutes=minutes_ago), **{**base, **fields})


def test_an_answer_reads_back_whole_in_its_own_library_only(accounts: AccountStores):
    store = accounts.answers
    kept = _answer(5, conversation_id="c-1", turn=3, door="mcp")
    store.add(kept)
    assert store.get("lib-a", kept.id) == kept
    assert store.get("lib-b", kept.id) is None
    assert store.get("lib-a", "no-such-answer") is None
    forever = _answer(4, expires_at=None, refused=True, sources=[], collected=True)
    store.add(forever)
    assert store.get("lib-a", forever.id) == forever


def test_marks_replace_and_list_last_marked_first(accounts: AccountStores):
    store = accounts.answers
    first, second, other = _answer(9), _answer(8), _answer(7, library_id="lib-b")
    for record in (first, second, other):
        store.add(record)
    later = NOW + timedelta(days=365)
    up = AnswerMark("up", None, "u-ada", NOW)
    marked = store.set_mark("lib-a", first.id, up, collected=False, expires_at=later)
    assert (marked.mark, marked.marked_by, marked.collected) == ("up", "u-ada", False)
    good = AnswerMark("up", "good", "u-ada", NOW + timedelta(seconds=1))
    store.set_mark("lib-a", second.id, good, collected=False, expires_at=later)
    elsewhere = AnswerMark("down", None, "u-x", NOW)
    assert store.set_mark("lib-b", first.id, elsewhere, collected=True, expires_at=later) is None
    down = AnswerMark("down", "wrong number", "u-ada", NOW + timedelta(seconds=2))
    again = store.set_mark("lib-a", first.id, down, collected=True, expires_at=later)
    assert (again.mark, again.comment, again.collected) == ("down", "wrong number", True)
    page, total = store.marked("lib-a", limit=10)
    assert [r.id for r in page] == [first.id, second.id] and total == 2  # one row per answer
    assert page[0].expires_at is not None and page[0].expires_at > NOW + timedelta(days=300)
    assert page[1].comment == "good" and page[1].sources == SOURCES
    one, total = store.marked("lib-a", limit=1, offset=1)
    assert [r.id for r in one] == [second.id] and total == 2
    assert store.marked("lib-b", limit=10) == ([], 0)
    assert [r.id for r in store.collected("lib-a", limit=10)] == [first.id]


def test_the_missing_list_is_newest_first_and_retention_hides(accounts: AccountStores):
    store = accounts.answers
    old = _answer(30, refused=True, collected=True, question="Where is the VPN guide?")
    new = _answer(10, refused=True, collected=True, question="VPN setup?")
    not_collected = _answer(5, refused=True)
    gone = _answer(1, refused=True, collected=True, expires_at=NOW - timedelta(seconds=1))
    for record in (old, new, not_collected, gone):
        store.add(record)
    assert [r.id for r in store.collected("lib-a", limit=10)] == [new.id, old.id]
    assert [r.id for r in store.collected("lib-a", limit=1)] == [new.id]
    assert store.get("lib-a", gone.id) is None
    up = AnswerMark("up", None, "u-ada", NOW)
    assert store.set_mark("lib-a", gone.id, up, collected=False, expires_at=None) is None
    store.expire(NOW + timedelta(days=1))
    assert store.get("lib-a", old.id) == old


def test_deleting_a_library_takes_its_answers(accounts: AccountStores):
    store = accounts.answers
    mine, theirs = _answer(3, collected=True, refused=True), _answer(2, library_id="lib-b")
    store.add(mine)
    store.add(theirs)
    down = AnswerMark("down", None, "u-ada", NOW)
    store.set_mark("lib-a", mine.id, down, collected=True, expires_at=None)
    assert store.delete_library("lib-a") == 1
    assert store.get("lib-a", mine.id) is None and store.marked("lib-a", limit=5) == ([], 0)
    assert store.collected("lib-a", limit=5) == []
    assert store.get("lib-b", theirs.id) == theirs
