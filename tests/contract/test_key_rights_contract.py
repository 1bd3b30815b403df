"""The key-rights contract (issue 46, finding 1), on SQLite and on DynamoDB (moto): an API key
records its maker, and at every use its scopes are capped by what its maker holds at that
moment, read from the stores: their admin flag, their role in the key's library, the library
itself. Demoting, deleting, removing, changing a role and deleting a library take effect on
the next use, and the keys of a deleted user or library are revoked."""

from __future__ import annotations

import uuid

import pytest

from bunko.domain.accounts import OPERATOR, User
from bunko.domain.auth import SCOPE_ADMIN, SCOPE_READ, SCOPE_RESEARCH, SCOPE_WRITE
from bunko.domain.libraries import Library
from bunko.services.accounts import ApiKeyService, LibraryService
from bunko.services.accounts.tokens import principal_for as person
from tests.contract.accounts import AccountStores
from tests.fakes import FakeMetadataStore

ALL = f"{SCOPE_READ} {SCOPE_WRITE} {SCOPE_RESEARCH} {SCOPE_ADMIN}"
LIB = str(uuid.uuid5(uuid.NAMESPACE_URL, "lib-1"))  # workspaces are UUIDs


def ws(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"ws-{name}"))


def _user(name: str, *, admin: bool = False) -> User:
    return User(
        id=f"id-{name}", username=name, password_hash="h", workspace_id=ws(name),
        is_admin=admin,
    )  # fmt: skip


@pytest.fixture
def key_rights(accounts: AccountStores):
    metadata = FakeMetadataStore()
    libraries = LibraryService(
        store=accounts.libraries, users=accounts.users, metadata=metadata,
        clear_workspace=lambda workspace_id: None, api_keys=accounts.api_keys,
    )  # fmt: skip
    keys = ApiKeyService(
        store=accounts.api_keys, metadata=metadata, users=accounts.users,
        role_of=libraries.current_role,
    )  # fmt: skip
    for someone in (_user("ada", admin=True), _user("root", admin=True), _user("bob")):
        accounts.users.add_user(someone)
    accounts.libraries.add_library(Library(id=LIB, name="Handbook"), owner="id-ada")
    accounts.libraries.set_member(LIB, "id-bob", "editor")
    return accounts, libraries, keys


def test_the_maker_is_stored_with_the_key(key_rights):
    accounts, _, keys = key_rights
    record, _ = keys.create(workspace_id=LIB, scopes="kb:read", created_by="id-bob")
    assert accounts.api_keys.get(record.id).created_by == "id-bob"
    assert accounts.api_keys.list_keys(LIB)[0].created_by == "id-bob"
    operator, _ = keys.create(workspace_id=LIB, scopes="kb:read")
    assert accounts.api_keys.get(operator.id).created_by == OPERATOR


def test_an_admin_key_follows_its_makers_admin_flag(key_rights):
    accounts, _, keys = key_rights
    _, secret = keys.create(workspace_id=ws("ada"), scopes=ALL, created_by="id-ada")
    assert keys.principal_for(secret).has(SCOPE_ADMIN)
    ada = accounts.users.get_user("id-ada")
    ada.is_admin = False
    accounts.users.save_user(ada)
    demoted = keys.principal_for(secret)
    assert not demoted.has(SCOPE_ADMIN) and not demoted.is_admin
    assert demoted.has(SCOPE_WRITE)  # still their own library's key
    assert accounts.users.delete_user("id-ada")
    assert keys.principal_for(secret) is None


def test_a_library_key_follows_its_makers_role(key_rights):
    accounts, _, keys = key_rights
    _, secret = keys.create(workspace_id=LIB, scopes="kb:read kb:write", created_by="id-bob")
    editor = keys.principal_for(secret)
    assert editor.role == "editor" and editor.has(SCOPE_WRITE)
    accounts.libraries.set_member(LIB, "id-bob", "viewer")
    viewer = keys.principal_for(secret)
    assert viewer.has(SCOPE_READ) and not viewer.has(SCOPE_WRITE)
    accounts.libraries.remove_member(LIB, "id-bob")
    assert keys.principal_for(secret) is None
    accounts.libraries.set_member(LIB, "id-bob", "editor")  # back: the key works again
    assert keys.principal_for(secret).has(SCOPE_WRITE)


def test_a_deleted_library_and_a_deleted_user_take_their_keys(key_rights):
    accounts, _, keys = key_rights
    _, bob_secret = keys.create(workspace_id=LIB, scopes="kb:read", created_by="id-bob")
    _, own_secret = keys.create(workspace_id=ws("bob"), scopes="kb:read", created_by="id-bob")
    _, ada_secret = keys.create(workspace_id=LIB, scopes="kb:read", created_by="id-ada")
    accounts.libraries.delete_library(LIB)  # gone from the store: refused at once
    assert keys.principal_for(bob_secret) is None and keys.principal_for(ada_secret) is None
    assert keys.principal_for(own_secret) is not None
    accounts.users.delete_user("id-bob")
    assert keys.principal_for(own_secret) is None


def test_the_service_revokes_a_deleted_librarys_keys(key_rights):
    accounts, libraries, keys = key_rights
    record, _ = keys.create(workspace_id=LIB, scopes="kb:read", created_by="id-bob")
    libraries.delete(person(accounts.users.get_user("id-ada")), LIB)
    assert accounts.api_keys.get(record.id).revoked_at is not None


def test_keys_without_a_maker_are_refused_and_the_operators_are_not_capped(key_rights):
    _, _, keys = key_rights
    _, legacy = keys.create(workspace_id=LIB, scopes="kb:read", created_by=None)
    assert keys.principal_for(legacy) is None
    _, operator = keys.create(workspace_id=LIB, scopes="kb:read kb:write")
    assert keys.principal_for(operator).has(SCOPE_WRITE)
