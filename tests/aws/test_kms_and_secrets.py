"""The account stores on DynamoDB (moto): users and the last-admin rule, login attempts,
model configs, settings, API keys; and the KMS cipher and the JWT secret."""

from __future__ import annotations

import base64
import threading
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from bunko.adapters.aws.dynamodb_model_configs import DynamoDBModelConfigStore
from bunko.adapters.aws.dynamodb_settings import DynamoDBApiKeyStore, DynamoDBSettingsStore
from bunko.adapters.aws.dynamodb_table import Table
from bunko.adapters.aws.dynamodb_users import DynamoDBLoginAttemptStore, DynamoDBUserStore
from bunko.adapters.aws.kms_cipher import KmsCipher, load_secret
from bunko.domain.accounts import ApiKey, LoginAttempts, ModelConfig, User
from bunko.errors import ConflictError, NotFoundError
from tests.aws.stand_ins import REGION, TABLE


@pytest.fixture
def table(aws) -> Table:
    return Table(aws.dynamodb, TABLE)


def user(name: str, *, admin: bool = False) -> User:
    return User(
        id=f"id-{name}", username=name, password_hash="h", workspace_id=f"ws-{name}", is_admin=admin
    )


def test_usernames_are_unique_by_their_normal_form(table):
    users = DynamoDBUserStore(table)
    bob = user("bob")
    users.add_user(bob)
    with pytest.raises(ConflictError):
        users.add_user(User(id="other", username="Ｂｏｂ", password_hash="h", workspace_id="w"))
    assert users.get_user_by_username("BOB").id == "id-bob"
    assert users.get_user("id-bob") == bob
    assert users.get_user_by_username("nobody") is None


def test_rename_moves_the_claim(table):
    users = DynamoDBUserStore(table)
    users.add_user(user("alice"))
    users.add_user(user("carol"))
    renamed = user("alice")
    renamed.username = "alicia"
    users.save_user(renamed)
    assert users.get_user_by_username("alice") is None
    assert users.get_user_by_username("alicia").id == "id-alice"
    renamed.username = "carol"
    with pytest.raises(ConflictError):
        users.save_user(renamed)
    with pytest.raises(NotFoundError):
        users.save_user(user("ghost"))


def test_list_users_oldest_first(table):
    users = DynamoDBUserStore(table)
    base = datetime(2025, 1, 1, tzinfo=UTC)
    for i, name in enumerate(["c", "a", "b"]):
        u = user(name)
        u.created_at = base + timedelta(minutes=i)
        users.add_user(u)
    assert [u.username for u in users.list_users()] == ["c", "a", "b"]


def test_the_last_admin_cannot_be_deleted_or_demoted(table):
    users = DynamoDBUserStore(table)
    for u in (user("root", admin=True), user("second", admin=True), user("plain")):
        users.add_user(u)
    assert users.count_admins() == 2
    assert users.delete_user("id-second")
    with pytest.raises(ConflictError):
        users.delete_user("id-root")
    demoted = user("root")
    with pytest.raises(ConflictError):
        users.save_user(demoted)
    assert users.delete_user("id-plain")
    assert not users.delete_user("id-plain")
    assert [u.username for u in users.list_users()] == ["root"]
    assert users.count_admins() == 1


def test_concurrent_admin_deletes_leave_one(table):
    users = DynamoDBUserStore(table)
    names = [f"admin{i}" for i in range(5)]
    for name in names:
        users.add_user(user(name, admin=True))
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


def test_login_attempts(table):
    attempts = DynamoDBLoginAttemptStore(table)
    assert attempts.get_attempts("bob") is None
    locked = datetime(2025, 1, 1, 12, tzinfo=UTC)
    attempts.save_attempts(LoginAttempts("bob", failures=3, locked_until=locked))
    got = attempts.get_attempts("bob")
    assert (got.failures, got.locked_until, got.last_failure) == (3, locked, None)
    attempts.clear_attempts("bob")
    assert attempts.get_attempts("bob") is None


def config(name: str, ws: str = "ws", **kw) -> ModelConfig:
    return ModelConfig(
        id=f"cfg-{name}",
        workspace_id=ws,
        name=name,
        provider="bedrock",
        model_id="amazon.nova-lite-v1:0",
        type="llm",
        **kw,
    )


def test_model_configs(table):
    configs = DynamoDBModelConfigStore(table)
    configs.add_model_config(config("chat", api_key_encrypted="sealed"))
    configs.add_model_config(config("embed"))
    configs.add_model_config(config("chat", ws="other"))
    with pytest.raises(ConflictError):
        configs.add_model_config(
            ModelConfig(
                id="x", workspace_id="ws", name="chat", provider="openai", model_id="m", type="llm"
            )
        )
    assert configs.get_model_config("ws", "cfg-chat").api_key_encrypted == "sealed"
    assert configs.get_model_config("other-ws", "cfg-chat") is None
    renamed = configs.get_model_config("ws", "cfg-chat")
    renamed.name = "chat2"
    configs.save_model_config(renamed)
    assert [c.name for c in configs.list_model_configs("ws")] == ["chat2", "embed"]
    fresh = config("chat")
    fresh.id = "cfg-new"
    configs.add_model_config(fresh)  # the old name is free again
    clash = configs.get_model_config("ws", "cfg-chat")
    clash.name = "embed"
    with pytest.raises(ConflictError):
        configs.save_model_config(clash)
    assert configs.delete_model_config("ws", "cfg-embed")
    assert not configs.delete_model_config("ws", "cfg-embed")
    assert configs.delete_workspace_model_configs("ws") == 2
    assert configs.list_model_configs("ws") == []
    assert len(configs.list_model_configs("other")) == 1


def test_settings_scopes_do_not_mix(table):
    settings = DynamoDBSettingsStore(table)
    settings.put_settings("user", "u1", {"theme": "ダーク"})
    settings.put_settings("user", "u0", {"theme": "light"})
    settings.put_settings("workspace", "u1", {"min_score": 0.5})
    assert settings.get_settings("user", "u1") == {"theme": "ダーク"}
    assert settings.list_settings("user") == [
        ("u0", {"theme": "light"}),
        ("u1", {"theme": "ダーク"}),
    ]
    settings.delete_settings("user", "u1")
    assert settings.get_settings("user", "u1") is None
    assert settings.get_settings("workspace", "u1") == {"min_score": 0.5}


def test_api_keys_by_hash(table):
    keys = DynamoDBApiKeyStore(table)
    key = ApiKey(
        id="k1",
        workspace_id="ws",
        scopes=frozenset({"kb:read", "kb:write"}),
        key_hash="abc",
        prefix="bk_abc",
        name="agent",
    )
    keys.add(key)
    keys.add(
        ApiKey(
            id="k2",
            workspace_id="other",
            scopes=frozenset({"kb:read"}),
            key_hash="def",
            prefix="bk_def",
        )
    )
    with pytest.raises(ConflictError):
        keys.add(
            ApiKey(
                id="k3",
                workspace_id="ws",
                scopes=frozenset({"kb:read"}),
                key_hash="abc",
                prefix="bk_abc",
            )
        )
    assert keys.find_by_hash("abc") == key
    assert keys.get("k1") == key
    assert [k.id for k in keys.list_keys("ws")] == ["k1"]
    assert {k.id for k in keys.list_keys()} == {"k1", "k2"}
    when = datetime(2025, 2, 1, tzinfo=UTC)
    assert keys.revoke("k1", when)
    assert not keys.revoke("k1", when)
    assert not keys.revoke("missing", when)
    assert keys.find_by_hash("abc").revoked_at == when


def test_kms_cipher_round_trip_and_foreign_tokens(aws):
    kms = boto3.client("kms", region_name=REGION)
    key_id = kms.create_key()["KeyMetadata"]["KeyId"]
    cipher = KmsCipher(kms, key_id=key_id)
    token = cipher.encrypt("sk-秘密")
    assert "sk-" not in token
    assert cipher.decrypt(token) == "sk-秘密"
    # Sealed by the same key for another purpose: the encryption context does not match.
    other = kms.encrypt(KeyId=key_id, Plaintext=b"sk-x", EncryptionContext={"app": "other"})
    with pytest.raises(ValueError, match="ciphertext"):
        cipher.decrypt(base64.b64encode(other["CiphertextBlob"]).decode())
    with pytest.raises(ValueError, match="ciphertext"):
        cipher.decrypt("not base64 at all!")


def test_jwt_secret_from_secrets_manager(aws):
    client = boto3.client("secretsmanager", region_name=REGION)
    arn = client.create_secret(Name="jwt", SecretString="s3cr3t-value")["ARN"]
    assert load_secret(client, arn) == "s3cr3t-value"
