"""LibraryStore: the same behaviour on SQLite and on DynamoDB (moto): names unique as they
read, the creator its owner in the same write, roles set and changed, a user's libraries,
and nothing left of a deleted library or a forgotten user."""

from __future__ import annotations

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
