"""API keys: created once, stored hashed, scoped to a workspace, revocable."""

from __future__ import annotations

import sqlite3

import pytest

from bunko.adapters.local.sqlite.apikeys import SqliteApiKeyStore
from bunko.adapters.local.sqlite.store import SqliteMetadataStore
from bunko.domain import DEFAULT_WORKSPACE_ID, Workspace
from bunko.errors import NotFoundError, ValidationError
from bunko.services.accounts.apikeys import ApiKeyService, ApiKeyVerifier, hash_key, parse_scopes
from bunko.services.accounts.identity import Identity

OTHER_WS = "22222222-2222-4222-8222-222222222222"


@pytest.fixture
def keys(db) -> ApiKeyService:
    metadata = SqliteMetadataStore(db)
    metadata.ensure_workspace(Workspace(id=DEFAULT_WORKSPACE_ID, name="default"))
    return ApiKeyService(store=SqliteApiKeyStore(db), metadata=metadata)


def test_a_new_key_authenticates_as_its_workspace_and_scopes(keys):
    key, secret = keys.create(workspace_id=DEFAULT_WORKSPACE_ID, scopes="kb:read,kb:write")
    principal = keys.principal_for(secret)
    assert principal is not None
    assert principal.workspace_id == DEFAULT_WORKSPACE_ID
    assert principal.scopes == frozenset({"kb:read", "kb:write"})
    assert principal.api_key_id == key.id
    assert principal.has("kb:read") and not principal.has("admin")


def test_only_the_hash_is_stored(keys, db):
    _, secret = keys.create(workspace_id=DEFAULT_WORKSPACE_ID, scopes=["kb:read"])
    rows = db.connect().execute("SELECT * FROM api_keys").fetchall()
    stored = " ".join(str(v) for row in rows for v in tuple(row))
    assert secret not in stored
    assert hash_key(secret) in stored
    assert len(secret) >= 40  # 256 random bits, base64url


def test_wrong_tampered_foreign_and_revoked_keys_are_refused(keys):
    key, secret = keys.create(workspace_id=DEFAULT_WORKSPACE_ID, scopes="kb:read")
    assert keys.principal_for(secret[:-1] + ("A" if secret[-1] != "A" else "B")) is None
    assert keys.principal_for("not-a-bunko-key") is None
    assert keys.principal_for("") is None
    keys.revoke(key.id)
    assert keys.principal_for(secret) is None
    with pytest.raises(NotFoundError):
        keys.revoke(key.id)  # already revoked


def test_a_new_workspace_is_created_for_its_first_key(keys):
    key, secret = keys.create(workspace_id=OTHER_WS, scopes="kb:read", name="robot")
    assert keys.metadata.get_workspace(OTHER_WS) is not None
    assert keys.principal_for(secret).workspace_id == OTHER_WS
    assert [k.id for k in keys.list_keys(OTHER_WS)] == [key.id]
    assert keys.list_keys(DEFAULT_WORKSPACE_ID) == []


@pytest.mark.parametrize(
    ("scopes", "workspace"),
    [("", DEFAULT_WORKSPACE_ID), ("kb:read,root", DEFAULT_WORKSPACE_ID), ("kb:read", "ws-1")],
)
def test_bad_scopes_or_workspace_are_refused_and_nothing_is_stored(keys, scopes, workspace):
    with pytest.raises(ValidationError):
        keys.create(workspace_id=workspace, scopes=scopes)
    assert keys.list_keys() == []


def test_scopes_parse_from_commas_and_spaces():
    assert parse_scopes("kb:read, kb:write admin") == {"kb:read", "kb:write", "admin"}


def test_identity_uses_the_verifier_and_keeps_auth_off_local(keys):
    _, secret = keys.create(workspace_id=OTHER_WS, scopes="kb:read")
    identity = Identity([ApiKeyVerifier(keys)])
    assert identity.authenticate(secret).workspace_id == OTHER_WS
    assert Identity([ApiKeyVerifier(keys)], auth_enabled=False).authenticate(None).is_admin


def test_hashes_are_unique_in_the_store(keys, db):
    key, _ = keys.create(workspace_id=DEFAULT_WORKSPACE_ID, scopes="kb:read")
    with pytest.raises(sqlite3.IntegrityError):
        db.connect().execute(
            "INSERT INTO api_keys (id, workspace_id, scopes, key_hash, prefix, created_at) "
            "VALUES ('x', ?, 'kb:read', ?, 'bk_', '2024-01-01')",
            (DEFAULT_WORKSPACE_ID, key.key_hash),
        )
