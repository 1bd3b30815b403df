"""argon2id's two costs (BUNKO_PASSWORD_HASH_COST): what each stores, that a hash made under the
other still signs in and is rehashed, and that the setting reaches the services."""

from __future__ import annotations

import pytest

from bunko.config import Settings
from bunko.services.accounts import PasswordHasher
from tests.conftest import make_services

PASSWORD = "correct horse"


@pytest.mark.parametrize(
    ("cost", "parameters"), [("strong", "m=65536,t=3,p=4"), ("light", "m=19456,t=2,p=1")]
)
def test_each_cost_stores_its_argon2id_parameters(cost, parameters):
    assert PasswordHasher(cost=cost).hash(PASSWORD).startswith(f"$argon2id$v=19${parameters}$")


def test_a_hash_of_the_other_cost_verifies_and_is_rehashed_once():
    strong, light = PasswordHasher(cost="strong"), PasswordHasher(cost="light")
    made_strong = strong.hash(PASSWORD)
    valid, rehashed = light.verify(PASSWORD, made_strong)
    assert valid and rehashed is not None and "m=19456,t=2,p=1" in rehashed
    assert light.verify(PASSWORD, rehashed) == (True, None)
    assert light.verify("wrong horse", made_strong) == (False, None)
    valid, back = strong.verify(PASSWORD, rehashed)
    assert valid and back is not None and "m=65536,t=3,p=4" in back


def test_strong_is_the_default_and_the_setting_reaches_sign_up(tmp_path):
    assert Settings.model_fields["password_hash_cost"].default == "strong"  # the suite sets light
    for cost, parameters in [("strong", "m=65536,t=3,p=4"), ("light", "m=19456,t=2,p=1")]:
        services = make_services(tmp_path / cost, embedder="none", password_hash_cost=cost)
        try:
            user = services.accounts.auth.register(f"ada-{cost}", PASSWORD)
            assert f"${parameters}$" in user.password_hash
        finally:
            services.close()
