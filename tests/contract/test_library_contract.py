"""LibraryStore: the same behaviour on SQLite and on DynamoDB (moto): names unique as they
read, the creator its owner in the same write, roles set and changed, a user's libraries,
and nothing left of a deleted library or a forgotten user."""

from __future__ import annotations

import threading

import pytest

from bunko.domain.libraries import Library, Membership
from bunko.errors import ConflictError
from tests.contract.accounts import AccountStores


def test_a_library_is_stored_with_its_owner_and_its_name_is_unique(accounts: AccountStores):
    store = accounts.libraries
    handbook = Library(id="lib-1", name="Team Handbook", created_by="u-ada")
    store.add_library(handbook, owner="u-ada")
    assert store.get_library("lib-1") == handbook
    assert store.get_library_by_name("team  handbook") == handbook  # reads alike: one name
    assert store.get_library_by_name("ＴＥＡＭ Handbook") == handbook
    assert store.members("lib-1") == [Membership("lib-1", "u-ada", "owner")]
    with pytest.raises(ConflictError):
        store.add_library(Library(id="lib-2", name="team handbook"), owner="u-bob")
    assert store.get_library("lib-2") is None and store.role_of("lib-2", "u-bob") is None
    assert store.get_library("nope") is None and store.get_library_by_name("nope") is None


def test_roles_are_set_changed_and_listed(accounts: AccountStores):
    store = accounts.libraries
    store.add_library(Library(id="lib-b", name="Beta"), owner="u-ada")
    store.add_library(Library(id="lib-a", name="alpha"), owner=None)
    store.set_member("lib-b", "u-bob", "viewer")
    store.set_member("lib-a", "u-bob", "editor")
    assert store.role_of("lib-b", "u-bob") == "viewer"
    store.set_member("lib-b", "u-bob", "editor")
    assert store.role_of("lib-b", "u-bob") == "editor"
    assert [(lib.name, role) for lib, role in store.memberships("u-bob")] == [
        ("alpha", "editor"), ("Beta", "editor"),
    ]  # fmt: skip
    assert {m.user_id: m.role for m in store.members("lib-b")} == {
        "u-ada": "owner", "u-bob": "editor",
    }  # fmt: skip
    assert store.remove_member("lib-b", "u-bob") is True
    assert store.remove_member("lib-b", "u-bob") is False
    assert store.role_of("lib-b", "u-bob") is None


def test_deleting_a_library_or_forgetting_a_user_leaves_nothing(accounts: AccountStores):
    store = accounts.libraries
    store.add_library(Library(id="lib-1", name="Handbook"), owner="u-ada")
    store.add_library(Library(id="lib-2", name="Runbooks"), owner="u-ada")
    store.set_member("lib-1", "u-bob", "viewer")
    store.set_member("lib-2", "u-bob", "viewer")
    assert store.delete_library("lib-1") is True and store.delete_library("lib-1") is False
    assert store.get_library("lib-1") is None and store.get_library_by_name("Handbook") is None
    assert store.role_of("lib-1", "u-bob") is None
    store.add_library(Library(id="lib-3", name="Handbook"), owner="u-bob")  # the name is free
    assert store.forget_user("u-bob") == 2
    assert store.memberships("u-bob") == [] and store.members("lib-3") == []
    assert [lib.name for lib, _ in store.memberships("u-ada")] == ["Runbooks"]


def test_every_library_is_listed_by_name(accounts: AccountStores):
    store = accounts.libraries
    store.add_library(Library(id="lib-b", name="beta"), owner="u-ada")
    store.add_library(Library(id="lib-a", name="Alpha"), owner=None)
    assert [lib.id for lib in store.list_libraries()] == ["lib-a", "lib-b"]


def test_the_last_owner_is_kept_when_asked(accounts: AccountStores):
    store = accounts.libraries
    store.add_library(Library(id="lib-1", name="Handbook"), owner="u-ada")
    store.set_member("lib-1", "u-bob", "editor")
    with pytest.raises(ConflictError):
        store.remove_member("lib-1", "u-ada", keep_an_owner=True)
    with pytest.raises(ConflictError):
        store.set_member("lib-1", "u-ada", "viewer", keep_an_owner=True)
    assert store.role_of("lib-1", "u-ada") == "owner"
    store.set_member("lib-1", "u-bob", "owner", keep_an_owner=True)
    assert store.remove_member("lib-1", "u-ada", keep_an_owner=True) is True
    assert store.remove_member("lib-1", "u-ada", keep_an_owner=True) is False
    assert [m.user_id for m in store.members("lib-1")] == ["u-bob"]


@pytest.mark.parametrize("change", ["leave", "demote"])
def test_two_owners_leaving_at_once_cannot_both_succeed(accounts: AccountStores, change):
    """Issue 46, finding 7: the last-owner check and the write are one atomic step."""
    store = accounts.libraries
    for round_ in range(5):
        library_id = f"lib-{round_}"
        store.add_library(Library(id=library_id, name=f"Handbook {round_}"), owner="u-ada")
        store.set_member(library_id, "u-bob", "owner")
        start, outcomes = threading.Barrier(2), []

        def leave(user_id: str, library_id=library_id, start=start, outcomes=outcomes) -> None:
            start.wait()
            try:
                if change == "leave":
                    store.remove_member(library_id, user_id, keep_an_owner=True)
                else:
                    store.set_member(library_id, user_id, "viewer", keep_an_owner=True)
                outcomes.append("done")
            except ConflictError:
                outcomes.append("refused")

        threads = [threading.Thread(target=leave, args=(u,)) for u in ("u-ada", "u-bob")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(outcomes) == ["done", "refused"]
        owners = [m.user_id for m in store.members(library_id) if m.role == "owner"]
        assert len(owners) == 1
