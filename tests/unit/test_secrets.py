"""The account adapters and secrets: last-admin rule, persisted secrets, Fernet, settings."""

from __future__ import annotations

import stat
import threading

import pytest
from pydantic import ValidationError as SettingsError

from bunko.adapters.fernet_cipher import FernetCipher, new_fernet_key
from bunko.adapters.local.secret_files import load_or_create_secret
from bunko.adapters.local.sqlite_accounts import SqliteUserStore
from bunko.adapters.local.sqlite_db import SqliteDatabase
from bunko.adapters.local.sqlite_settings import SqliteSettingsStore
from bunko.config import Settings
from bunko.domain.accounts import User
from bunko.errors import ConflictError


@pytest.fixture
def db(tmp_path):
    database = SqliteDatabase(tmp_path / "bunko.db")
    yield database
    database.close()


def user(name: str, *, admin: bool) -> User:
    return User(
        id=name, username=name, password_hash="x", workspace_id=f"ws-{name}", is_admin=admin
    )


def test_the_last_admin_cannot_be_deleted(db):
    store = SqliteUserStore(db)
    for u in (user("root", admin=True), user("second", admin=True), user("plain", admin=False)):
        store.add_user(u)
    assert store.delete_user("second")
    with pytest.raises(ConflictError):
        store.delete_user("root")
    assert store.delete_user("plain")
    assert not store.delete_user("plain")
    assert [u.username for u in store.list_users()] == ["root"]


def test_concurrent_deletes_never_remove_every_admin(db):
    store = SqliteUserStore(db)
    names = [f"admin{i}" for i in range(6)]
    for name in names:
        store.add_user(user(name, admin=True))
    results: list[object] = []

    def delete(name: str) -> None:
        try:
            results.append(store.delete_user(name))
        except ConflictError as exc:
            results.append(exc)

    threads = [threading.Thread(target=delete, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.count_admins() == 1
    assert sum(r is True for r in results) == 5


def test_generated_secret_is_kept_private_and_reused(tmp_path):
    path = tmp_path / "secrets" / "jwt_secret"
    first = load_or_create_secret(path, lambda: "generated-once")
    second = load_or_create_secret(path, lambda: "generated-again")
    assert first == second == "generated-once"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_fernet_round_trip_and_wrong_key():
    key = new_fernet_key()
    token = FernetCipher(key).encrypt("sk-secret")
    assert "sk-secret" not in token
    assert FernetCipher(key).decrypt(token) == "sk-secret"
    with pytest.raises(ValueError, match="another key"):
        FernetCipher(new_fernet_key()).decrypt(token)


@pytest.mark.parametrize(
    "values",
    [{"jwt_secret": "changethis"}, {"jwt_secret": "short"}, {"admin_password": "admin"}],
)
def test_settings_refuse_placeholder_secrets(values):
    with pytest.raises(SettingsError):
        Settings(**values)


def test_settings_store_scopes_do_not_mix(db):
    store = SqliteSettingsStore(db)
    store.put_settings("user", "a", {"language": "ja"})
    store.put_settings("workspace", "a", {"limit": 3})
    store.put_settings("user", "a", {"language": "zh"})
    assert store.get_settings("user", "a") == {"language": "zh"}
    assert store.list_settings("workspace") == [("a", {"limit": 3})]
    store.delete_settings("user", "a")
    assert store.get_settings("user", "a") is None
