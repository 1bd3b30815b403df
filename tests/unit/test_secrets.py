"""Local secrets and their settings: persisted secrets, Fernet, placeholder refusal (the account
stores themselves are under tests/contract/test_account_contract.py)."""

from __future__ import annotations

import stat

import pytest
from pydantic import ValidationError as SettingsError

from bunko.adapters.fernet_cipher import FernetCipher, new_fernet_key
from bunko.adapters.local.secret_files import load_or_create_secret
from bunko.config import Settings


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
