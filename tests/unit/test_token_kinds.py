"""services/accounts/tokens: an access token and a web session token are not interchangeable:
a session token (what a new tab trades for an access token) is never a bearer, and an access
token never opens a session."""

from __future__ import annotations

from datetime import timedelta

from bunko.domain.accounts import User
from bunko.services.accounts.tokens import TokenService

TOKENS = TokenService(secret="k" * 40, issuer="bunko-test", lifetime=timedelta(hours=1))
USER = User(id="u1", username="ada", password_hash="-", workspace_id="w1")


def test_each_token_decodes_only_as_its_own_kind():
    access, session = TOKENS.issue(USER), TOKENS.issue_session(USER)
    assert TOKENS.decode(access)["sub"] == "u1"
    assert TOKENS.decode_session(session)["sub"] == "u1"
    assert TOKENS.decode(session) is None  # a session token names an audience
    assert TOKENS.decode_session(access) is None  # an access token names none


def test_another_issuer_or_secret_is_refused():
    other = TokenService(secret="x" * 40, issuer="bunko-test", lifetime=timedelta(hours=1))
    elsewhere = TokenService(secret="k" * 40, issuer="elsewhere", lifetime=timedelta(hours=1))
    for token in (other.issue(USER), elsewhere.issue(USER)):
        assert TOKENS.decode(token) is None
    assert TOKENS.decode("not a token") is None
