"""A source's sync state past one record's bound (issue 48), on SQLite and on DynamoDB
(moto, which refuses an item over 400 KB as DynamoDB does): 5,000 Confluence pages' state
kept in parts and read back whole; a state kept as one record before parts is read, and
the next save writes it in parts; a save replaces the parts; forgetting leaves none."""

from __future__ import annotations

import json

import pytest

from bunko.services.sources.state import PARTS_SCOPE, STATE_SCOPE, SyncStates
from tests.contract.accounts import AccountStores


def _confluence_state(pages: int) -> dict:
    # As services/sources/confluence.py keeps it: id → version, path, content hash (and an
    # attachment's page).
    def entry(n: int, path: str) -> dict:
        return {"version": 3, "path": path, "hash": f"{n:064x}"}

    return {
        "pages": {
            str(100_000 + n): entry(n, f"Space/Section {n // 100}/Page {n}.md")
            for n in range(pages)
        },
        "files": {
            f"att{n}": {
                **entry(n, f"Space/Section {n // 100}/file{n}.pdf"),
                "page": str(100_000 + n),
            }
            for n in range(0, pages, 5)
        },
        "complete": True,
    }


def test_a_state_past_400_kb_is_kept_in_parts(accounts: AccountStores):
    store = accounts.settings
    states = SyncStates(store)
    state = _confluence_state(5_000)
    size = len(json.dumps(state))
    assert size > 2 * 400 * 1024  # more than two of DynamoDB's items
    if type(store).__name__.startswith("DynamoDB"):  # the bound is real on this store
        with pytest.raises(Exception, match=r"(?i)size"):
            store.put_settings(STATE_SCOPE, "one-record", state)

    states.save("src", state)
    assert states.load("src") == state
    parts = store.list_settings(PARTS_SCOPE)
    assert len(parts) >= 3 and all(owner.startswith("src/") for owner, _ in parts)

    state["pages"]["100000"]["version"] = 4
    del state["pages"]["104999"]
    states.save("src", state)  # a new generation; the old one's parts are gone
    assert states.load("src") == state
    assert len({owner.split("/")[1] for owner, _ in store.list_settings(PARTS_SCOPE)}) == 1

    states.save("other", {"cursor": "t"})
    states.forget("src")
    assert states.load("src") == {}
    assert [o.split("/")[0] for o, _ in store.list_settings(PARTS_SCOPE)] == ["other"]
    assert states.load("other") == {"cursor": "t"}


def test_a_state_kept_as_one_record_is_read_then_saved_in_parts(accounts: AccountStores):
    store = accounts.settings
    old = {"pages": {"1": {"v": 2, "path": "Space/Home.md"}}, "complete": True}
    store.put_settings(STATE_SCOPE, "src", old)  # as every sync wrote it before parts
    states = SyncStates(store)
    assert states.load("src") == old
    states.save("src", {**old, "complete": False})
    assert "pages" not in store.get_settings(STATE_SCOPE, "src")  # the head only now
    assert states.load("src") == {**old, "complete": False}
