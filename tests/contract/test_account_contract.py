"""Every backend's account stores behave alike: users (normal forms, renames, the last admin),
login attempts, model configs, settings and API keys, on SQLite and on DynamoDB (moto)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from bunko.domain.accounts import ApiKey, LoginAttempts, ModelConfig, User
from bunko.errors import ConflictError, NotFoundError
from tests.contract.accounts import AccountStores

BASE = datetime(2025, 1, 1, tzinfo=UTC)


def user(name: str, *, admin: bool = False, minute: int = 0) -> User:
    return User(
        id=f"id-{name}",
        username=name,
        password_hash="h",
        workspace_id=f"ws-{name}",
        is_admin=admin,
        created_at=BASE + timedelta(minutes=minute),
        updated_at=BASE + timedelta(minutes=minute),
    )


# -- users -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("taken", "clash"),
    [("bob", "Ｂｏｂ"), ("bob", "BOB"), ("straße", "STRASSE"), ("ｶﾀｶﾅ", "カタカナ")],
)
def test_usernames_are_unique_by_nfkc_casefold(accounts: AccountStores, taken, clash):
    accounts.users.add_user(user(taken))
    with pytest.raises(ConflictError):
        accounts.users.add_user(
            User(id="other", username=clash, password_hash="h", workspace_id="w")
        )
    found = accounts.users.get_user_by_username(clash)
    assert found is not None and found.id == f"id-{taken}" and found.username == taken
    assert [u.id for u in accounts.users.list_users()] == [f"id-{taken}"]


def test_users_round_trip_and_absent_ones_are_none(accounts: AccountStores):
    bob = user("bob", admin=True)
    bob.token_version = 3
    accounts.users.add_user(bob)
    assert accounts.users.get_user("id-bob") == bob
    assert accounts.users.get_user("id-nobody") is None
    assert accounts.users.get_user_by_username("nobody") is None
    with pytest.raises(ConflictError):  # the same id twice
        accounts.users.add_user(
            User(id="id-bob", username="robert", password_hash="h", workspace_id="w")
        )


def test_rename_moves_the_claim(accounts: AccountStores):
    users = accounts.users
    users.add_user(user("alice"))
    users.add_user(user("carol", minute=1))
    renamed = user("alice")
    renamed.username = "alicia"
    users.save_user(renamed)
    assert users.get_user_by_username("alice") is None
    assert users.get_user_by_username("ALICIA").id == "id-alice"
    users.add_user(User(id="new", username="Alice", password_hash="h", workspace_id="w"))
    assert users.get_user_by_username("alice").id == "new"  # the old name is free again


def test_rename_to_a_taken_name_is_refused_and_changes_nothing(accounts: AccountStores):
    users = accounts.users
    users.add_user(user("alice"))
    users.add_user(user("carol", minute=1))
    clash = user("alice")
    clash.username = "Ｃａｒｏｌ"
    with pytest.raises(ConflictError):
        users.save_user(clash)
    assert users.get_user("id-alice").username == "alice"
    assert users.get_user_by_username("carol").id == "id-carol"


def test_a_change_of_case_only_keeps_the_claim(accounts: AccountStores):
    users = accounts.users
    users.add_user(user("alice"))
    renamed = user("alice")
    renamed.username = "Alice"
    users.save_user(renamed)
    assert users.get_user_by_username("alice").username == "Alice"


def test_saving_an_absent_user_is_not_found(accounts: AccountStores):
    with pytest.raises(NotFoundError):
        accounts.users.save_user(user("ghost"))
    assert accounts.users.get_user_by_username("ghost") is None


def test_save_keeps_every_field(accounts: AccountStores):
    accounts.users.add_user(user("bob"))
    changed = user("bob")
    changed.password_hash, changed.token_version = "new-hash", 7
    changed.updated_at = BASE + timedelta(days=1)
    accounts.users.save_user(changed)
    assert accounts.users.get_user("id-bob") == changed


def test_list_users_oldest_first(accounts: AccountStores):
    for minute, name in enumerate(["c", "a", "b"]):
        accounts.users.add_user(user(name, minute=minute))
    assert [u.username for u in accounts.users.list_users()] == ["c", "a", "b"]


def test_the_last_admin_cannot_be_deleted_or_demoted(accounts: AccountStores):
    users = accounts.users
    for u in (user("root", admin=True), user("second", admin=True, minute=1), user("plain")):
        users.add_user(u)
    assert users.count_admins() == 2
    assert users.delete_user("id-second")
    with pytest.raises(ConflictError):
        users.delete_user("id-root")
    with pytest.raises(ConflictError):
        users.save_user(user("root"))  # is_admin=False: a demotion
    assert users.get_user("id-root").is_admin
    assert users.delete_user("id-plain")
    assert not users.delete_user("id-plain")
    assert [u.username for u in users.list_users()] == ["root"]
    assert users.count_admins() == 1


def test_promoting_then_demoting_moves_the_last_admin(accounts: AccountStores):
    users = accounts.users
    users.add_user(user("root", admin=True))
    users.add_user(user("plain", minute=1))
    users.save_user(user("plain", admin=True, minute=1))
    assert users.count_admins() == 2
    users.save_user(user("root"))  # one admin is left: demoting the other is fine
    assert users.count_admins() == 1
    with pytest.raises(ConflictError):
        users.save_user(user("plain", minute=1))
    assert users.delete_user("id-root")  # no longer an admin


def test_concurrent_admin_deletes_leave_one(accounts: AccountStores):
    users = accounts.users
    names = [f"admin{i}" for i in range(5)]
    for minute, name in enumerate(names):
        users.add_user(user(name, admin=True, minute=minute))
    results: list[object] = []

    def delete(name: str) -> None:
        try:
            results.append(users.delete_user(f"id-{name}"))
        except ConflictError as exc:
            results.append(exc)

    threads = [threading.Thread(target=delete, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert users.count_admins() == 1
    assert len(users.list_users()) == 1
    assert sum(r is True for r in results) == 4


def test_of_concurrent_first_sign_ups_one_becomes_the_admin(accounts: AccountStores):
    users = accounts.users
    names = [f"early{i}" for i in range(8)]
    made: dict[str, bool] = {}

    def sign_up(name: str) -> None:
        made[name] = users.add_first_admin(user(name))
        if not made[name]:
            users.add_user(user(name))

    threads = [threading.Thread(target=sign_up, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(made.values()) == 1 and users.count_admins() == 1
    [admin] = [u for u in users.list_users() if u.is_admin]
    assert made[admin.username] is True
    assert len(users.list_users()) == 8
    # once there is an admin, nobody else is made one
    assert users.add_first_admin(user("late")) is False and users.get_user("id-late") is None
    assert users.add_first_admin(user("early0")) is False


def test_a_first_admin_with_a_taken_name_is_a_conflict(accounts: AccountStores):
    users = accounts.users
    users.add_user(user("taken"))
    with pytest.raises(ConflictError):
        users.add_first_admin(user("TAKEN"))
    assert users.count_admins() == 0


def test_no_first_admin_where_an_admin_exists(accounts: AccountStores):
    users = accounts.users
    users.add_user(user("seeded", admin=True))
    assert users.add_first_admin(user("newcomer")) is False
    assert users.count_admins() == 1 and users.get_user("id-newcomer") is None


# -- login attempts ----------------------------------------------------------------------


def test_login_attempts(accounts: AccountStores):
    attempts = accounts.attempts
    assert attempts.get_attempts("bob") is None
    locked = datetime(2025, 1, 1, 12, tzinfo=UTC)
    attempts.save_attempts(LoginAttempts("bob", failures=3, locked_until=locked))
    got = attempts.get_attempts("bob")
    assert (got.key, got.failures, got.locked_until, got.last_failure) == ("bob", 3, locked, None)
    attempts.save_attempts(LoginAttempts("bob", failures=4, last_failure=locked))
    assert attempts.get_attempts("bob") == LoginAttempts("bob", failures=4, last_failure=locked)
    attempts.clear_attempts("bob")
    attempts.clear_attempts("never-seen")
    assert attempts.get_attempts("bob") is None


def add_one(records: list[LoginAttempts]) -> list[LoginAttempts]:
    for record in records:
        record.failures += 1
    return records


def test_parallel_attempt_updates_lose_no_count(accounts: AccountStores):
    """The atomic lockout's store half: 40 logins counted at once are 40."""
    attempts = accounts.attempts
    threads = [
        threading.Thread(target=attempts.update_attempts, args=(["pair", "account"], add_one))
        for _ in range(40)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert attempts.get_attempts("pair").failures == 40
    assert attempts.get_attempts("account").failures == 40


def test_a_write_between_an_attempt_read_and_its_write_is_not_lost(accounts: AccountStores):
    attempts = accounts.attempts
    if "Sqlite" in type(attempts).__name__:
        pytest.skip("SQLite holds the write lock from read to write: nothing comes between")
    interleaved: list[bool] = []

    def outer(records: list[LoginAttempts]) -> list[LoginAttempts]:
        if not interleaved:
            interleaved.append(True)  # another attempt lands after this read
            attempts.update_attempts(["k"], add_one)
        return add_one(records)

    attempts.update_attempts(["k"], outer)
    assert attempts.get_attempts("k").failures == 2


def test_a_refused_attempt_update_writes_nothing(accounts: AccountStores):
    attempts = accounts.attempts
    attempts.update_attempts(["k"], add_one)

    def refuse(records: list[LoginAttempts]) -> list[LoginAttempts]:
        records[0].failures = 99
        raise RuntimeError("locked")

    with pytest.raises(RuntimeError):
        attempts.update_attempts(["k"], refuse)
    assert attempts.get_attempts("k").failures == 1
    attempts.clear_attempts("k")
    attempts.update_attempts(["k"], add_one)  # a cleared count starts again
    assert attempts.get_attempts("k").failures == 1


# -- model configs -----------------------------------------------------------------------


def config(name: str, ws: str = "ws", *, minute: int = 0, **kw) -> ModelConfig:
    when = BASE + timedelta(minutes=minute)
    # Ids are unique across workspaces (SQLite keys configs by id alone, DynamoDB by both).
    config_id = f"cfg-{name}" if ws == "ws" else f"cfg-{ws}-{name}"
    return ModelConfig(
        id=config_id,
        workspace_id=ws,
        name=name,
        provider="bedrock",
        model_id="amazon.nova-lite-v1:0",
        type="llm",
        created_at=when,
        updated_at=when,
        **kw,
    )


def test_model_configs_round_trip_per_workspace(accounts: AccountStores):
    configs = accounts.model_configs
    chat = config("chat", api_key_encrypted="sealed", base_url="http://x", supports_vision=True)
    configs.add_model_config(chat)
    configs.add_model_config(config("embed", minute=1))
    configs.add_model_config(config("chat", ws="other"))  # names are per workspace
    assert configs.get_model_config("ws", "cfg-chat") == chat
    assert configs.get_model_config("other", "cfg-chat") is None  # not in that workspace
    assert [c.name for c in configs.list_model_configs("ws")] == ["chat", "embed"]
    assert configs.list_model_configs("nobody") == []


def test_model_config_names_are_unique_in_a_workspace(accounts: AccountStores):
    configs = accounts.model_configs
    configs.add_model_config(config("chat"))
    configs.add_model_config(config("embed", minute=1))
    with pytest.raises(ConflictError):
        configs.add_model_config(
            ModelConfig(
                id="x", workspace_id="ws", name="chat", provider="openai", model_id="m", type="llm"
            )
        )
    renamed = configs.get_model_config("ws", "cfg-chat")
    renamed.name = "chat2"
    configs.save_model_config(renamed)
    assert [c.name for c in configs.list_model_configs("ws")] == ["chat2", "embed"]
    fresh = config("chat", minute=2)
    fresh.id = "cfg-new"
    configs.add_model_config(fresh)  # the old name is free again
    clash = configs.get_model_config("ws", "cfg-chat")
    clash.name = "embed"
    with pytest.raises(ConflictError):
        configs.save_model_config(clash)
    assert configs.get_model_config("ws", "cfg-chat").name == "chat2"
    with pytest.raises(NotFoundError):
        configs.save_model_config(config("ghost"))


def test_model_config_deletes(accounts: AccountStores):
    configs = accounts.model_configs
    configs.add_model_config(config("chat"))
    configs.add_model_config(config("embed", minute=1))
    configs.add_model_config(config("chat", ws="other"))
    assert configs.delete_model_config("ws", "cfg-embed")
    assert not configs.delete_model_config("ws", "cfg-embed")
    configs.add_model_config(config("embed", minute=2))  # a deleted config frees its name
    assert configs.delete_workspace_model_configs("ws") == 2
    assert configs.list_model_configs("ws") == []
    assert len(configs.list_model_configs("other")) == 1
    configs.add_model_config(config("chat"))


# -- settings ----------------------------------------------------------------------------


def test_settings_scopes_and_owners_do_not_mix(accounts: AccountStores):
    settings = accounts.settings
    settings.put_settings("user", "u1", {"theme": "ダーク", "nested": {"k": [1, 2.5, None]}})
    settings.put_settings("user", "u0", {"theme": "light"})
    settings.put_settings("workspace", "u1", {"min_score": 0.5})
    assert settings.get_settings("user", "u1") == {
        "theme": "ダーク",
        "nested": {"k": [1, 2.5, None]},
    }
    assert settings.list_settings("user") == [
        ("u0", {"theme": "light"}),
        ("u1", {"theme": "ダーク", "nested": {"k": [1, 2.5, None]}}),
    ]
    settings.put_settings("user", "u1", {"theme": "light"})  # a put replaces the document
    assert settings.get_settings("user", "u1") == {"theme": "light"}
    settings.delete_settings("user", "u1")
    settings.delete_settings("user", "never-seen")
    assert settings.get_settings("user", "u1") is None
    assert settings.get_settings("workspace", "u1") == {"min_score": 0.5}
    assert settings.list_settings("nothing") == []


def test_a_lease_has_one_holder_until_it_is_released_or_expires(accounts: AccountStores):
    """Two syncs of one source (two processes, two Lambda invocations) never run at once:
    the second caller is refused while the first holds it; a crashed holder's lease is
    taken over once it expires; a release by a holder whose lease was taken over does not
    free the new holder's."""
    settings = accounts.settings
    assert settings.take_lease("lease", "src1", "a", now=1000.0, until=1100.0)
    assert not settings.take_lease("lease", "src1", "b", now=1050.0, until=1150.0)
    assert settings.take_lease("lease", "src2", "b", now=1050.0, until=1150.0)  # another one
    assert settings.take_lease("lease", "src1", "a", now=1060.0, until=1200.0)  # renewed
    assert not settings.take_lease("lease", "src1", "b", now=1150.0, until=1250.0)
    settings.release_lease("lease", "src1", "b")  # not b's: nothing happens
    assert not settings.take_lease("lease", "src1", "b", now=1150.0, until=1250.0)
    settings.release_lease("lease", "src1", "a")
    assert settings.take_lease("lease", "src1", "b", now=1150.0, until=1250.0)
    # b crashes holding it: once it has expired, c takes it over; b's late release is void.
    assert not settings.take_lease("lease", "src1", "c", now=1249.0, until=1400.0)
    assert settings.take_lease("lease", "src1", "c", now=1250.0, until=1400.0)
    settings.release_lease("lease", "src1", "b")
    assert not settings.take_lease("lease", "src1", "d", now=1300.0, until=1500.0)
    settings.release_lease("lease", "src1", "c")
    assert settings.take_lease("lease", "src1", "d", now=1300.0, until=1500.0)


def test_get_many_settings_reads_one_scope_in_a_batch(accounts: AccountStores):
    # /knowledge-bases reads a page of files' upload options this way, not one read each.
    settings = accounts.settings
    for i in range(130):  # past DynamoDB's 100-key BatchGetItem page
        settings.put_settings("upload", f"doc-{i:03}", {"mode": "precise", "n": i})
    settings.put_settings("user", "doc-001", {"other": "scope"})
    owners = [f"doc-{i:03}" for i in range(130)] + ["missing", "doc-001"]
    found = settings.get_many_settings("upload", owners)
    assert set(found) == {f"doc-{i:03}" for i in range(130)}
    assert found["doc-007"] == {"mode": "precise", "n": 7}
    assert settings.get_many_settings("upload", []) == {}


# -- API keys ----------------------------------------------------------------------------


def api_key(key_id: str, key_hash: str, ws: str = "ws", *, minute: int = 0, **kw) -> ApiKey:
    kw.setdefault("scopes", frozenset({"kb:read"}))
    return ApiKey(
        id=key_id,
        workspace_id=ws,
        key_hash=key_hash,
        prefix=f"bk_{key_hash}",
        created_at=BASE + timedelta(minutes=minute),
        **kw,
    )


def test_api_keys_by_hash_and_id(accounts: AccountStores):
    keys = accounts.api_keys
    agent = api_key("k1", "abc", name="agent", scopes=frozenset({"kb:read", "kb:write"}))
    keys.add(agent)
    keys.add(api_key("k2", "def", ws="other", minute=1))
    keys.add(api_key("k3", "ghi", minute=2))
    assert keys.find_by_hash("abc") == agent
    assert keys.get("k1") == agent
    assert keys.find_by_hash("nope") is None and keys.get("nope") is None
    assert [k.id for k in keys.list_keys("ws")] == ["k1", "k3"]
    assert [k.id for k in keys.list_keys()] == ["k1", "k2", "k3"]


@pytest.mark.parametrize(("key_id", "key_hash"), [("k9", "abc"), ("k1", "zzz")])
def test_a_second_key_with_the_same_hash_or_id_is_refused(
    accounts: AccountStores, key_id, key_hash
):
    accounts.api_keys.add(api_key("k1", "abc"))
    with pytest.raises(ConflictError):
        accounts.api_keys.add(api_key(key_id, key_hash))
    assert [k.id for k in accounts.api_keys.list_keys()] == ["k1"]


def test_key_revocation_is_once_and_kept(accounts: AccountStores):
    keys = accounts.api_keys
    keys.add(api_key("k1", "abc"))
    keys.add(api_key("k2", "def", minute=1))
    when = datetime(2025, 2, 1, tzinfo=UTC)
    assert keys.revoke("k1", when)
    assert not keys.revoke("k1", when + timedelta(days=1))  # the first revocation stands
    assert not keys.revoke("missing", when)
    assert keys.find_by_hash("abc").revoked_at == when
    assert keys.get("k1").revoked_at == when
    assert keys.get("k2").revoked_at is None
    assert [(k.id, k.revoked_at) for k in keys.list_keys("ws")] == [("k1", when), ("k2", None)]
