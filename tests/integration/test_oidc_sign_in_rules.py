"""The relying party's own checks, on the embedded stores, with an issuer that answers what
each case needs (the real issuer's side is tests/integration/test_openid_provider.py and the
end-to-end tests): an ID token must be for this client (`aud`, `azp`) and this sign-in
(`nonce`), name a subject, and list the groups; two first sign-ins of one person make one
user; a deleted user's link goes with them; an ID token is not an MCP access token."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import jwt
import pytest

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.adapters.local.sqlite.store import SqliteMetadataStore
from bunko.bootstrap.local import local_account_stores
from bunko.domain.sign_in import GroupRole
from bunko.errors import AuthenticationError
from bunko.services.accounts import (
    GroupRoles,
    LinkedPeople,
    OidcAccessVerifier,
    OidcSignIn,
    PasswordHasher,
    SignInStates,
    TokenService,
)

ISSUER = "https://login.example.org"
CLIENT = "bunko-web"


class Issuer:
    """An OpenIdProvider whose ID token carries `claims` (its signature is the adapter's
    business, tested against a real issuer elsewhere)."""

    issuer = ISSUER

    def __init__(self) -> None:
        self.claims: dict[str, Any] = {}

    def authorization_url(self, params: dict[str, str]) -> str:
        self.sent = params
        return ISSUER + "/authorize"

    def redeem_code(self, *, code: str, redirect_uri: str, code_verifier: str) -> dict:
        return {"id_token": "an.id.token"}

    def verified_claims(self, token: str) -> dict[str, Any]:
        return dict(self.claims)


@pytest.fixture
def sign_in_rules(tmp_path):
    db = SqliteDatabase(tmp_path / "bunko.db")
    stores = local_account_stores(db)
    metadata = SqliteMetadataStore(db)
    issuer = Issuer()
    people = LinkedPeople(issuer=ISSUER, users=stores.users, links=stores.links,
                          metadata=metadata, hasher=PasswordHasher())  # fmt: skip
    roles = GroupRoles(store=stores.libraries, metadata=metadata, claim="cognito:groups",
                       mapping={"eng": GroupRole("Engineering", "editor")})  # fmt: skip
    states = SignInStates("s" * 40)
    sign_in = OidcSignIn(
        provider=issuer, client_id=CLIENT, scopes="openid", people=people, roles=roles,
        tokens=TokenService(secret="t" * 40, issuer="bunko", lifetime=timedelta(hours=1)),
        states=states, provider_name="Example",
    )  # fmt: skip
    yield {"issuer": issuer, "sign_in": sign_in, "stores": stores, "people": people}
    db.close()


def finish(sign_in_rules, **claims: Any):
    """A whole sign-in whose ID token carries `claims` (the nonce is this sign-in's unless
    given)."""
    started = sign_in_rules["sign_in"].begin("https://bunko.example.org/auth/oidc/callback")
    sent = sign_in_rules["issuer"].sent
    sign_in_rules["issuer"].claims = {"iss": ISSUER, "sub": "ada", "aud": CLIENT, "preferred_username": "ada",
                              "nonce": sent["nonce"]} | claims  # fmt: skip
    return sign_in_rules["sign_in"].finish(
        sealed=started.cookie, state=sent["state"], code="a-code", error=None,
        redirect_uri="https://bunko.example.org/auth/oidc/callback",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("claims", "refusal"),
    [
        ({"aud": "another-app"}, "issued to another client"),
        ({"aud": [CLIENT, "another-app"]}, "issued to another client"),  # no azp
        ({"aud": [CLIENT, "another-app"], "azp": "another-app"}, "issued to another client"),
        ({"nonce": "a-nonce-of-another-sign-in"}, "not issued for this sign-in"),
        ({"sub": ""}, "no valid subject"),
        ({"sub": "x" * 256}, "no valid subject"),
        ({"_claim_names": {"cognito:groups": "src1"}}, "no list of groups"),
    ],
)
def test_an_id_token_not_for_this_sign_in_is_refused_before_anyone_is_created(
    sign_in_rules, claims, refusal
):
    with pytest.raises(AuthenticationError, match=refusal):
        finish(sign_in_rules, **claims)
    assert sign_in_rules["stores"].users.list_users() == []


def test_several_audiences_with_this_client_as_azp_and_one_group_as_a_string(sign_in_rules):
    _, user = finish(sign_in_rules, aud=[CLIENT, "api"], azp=CLIENT, **{"cognito:groups": "eng"})
    library = sign_in_rules["stores"].libraries.get_library_by_name("Engineering")
    assert sign_in_rules["stores"].libraries.role_of(library.id, user.id) == "editor"


def test_two_first_sign_ins_of_one_person_make_one_user(sign_in_rules):
    people, found = sign_in_rules["people"], []
    barrier = threading.Barrier(6)

    def sign_in() -> None:
        barrier.wait()
        found.append(people.person({"sub": "ada", "preferred_username": "ada"}).id)

    threads = [threading.Thread(target=sign_in) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(found)) == 1
    assert [u.id for u in sign_in_rules["stores"].users.list_users()] == found[:1]


def test_a_deleted_users_link_goes_with_them(sign_in_rules):
    _, first = finish(sign_in_rules)
    sign_in_rules["stores"].users.delete_user(first.id)  # as the admin's delete leaves the link
    _, second = finish(sign_in_rules)
    assert second.id != first.id and second.username == "ada"
    assert sign_in_rules["stores"].links.linked_user(ISSUER, "ada") == second.id


def test_an_id_token_is_not_an_access_token(sign_in_rules):
    finish(sign_in_rules)
    issuer = sign_in_rules["issuer"]
    verifier = OidcAccessVerifier(provider=issuer, people=sign_in_rules["people"])
    token = jwt.encode({"iss": ISSUER}, "k" * 32, algorithm="HS256")  # claims come from `issuer`
    resource = "https://bunko.example.org/mcp"
    issuer.claims = {"iss": ISSUER, "sub": "ada", "aud": resource, "nonce": "n"}
    with pytest.raises(AuthenticationError, match="an ID token is not an access token"):
        verifier.verify(token, resource=resource)
    issuer.claims = {"iss": ISSUER, "sub": "ada", "aud": resource, "token_use": "id"}
    with pytest.raises(AuthenticationError, match="an ID token is not an access token"):
        verifier.verify(token, resource=resource)
    issuer.claims = {"iss": ISSUER, "sub": "ada", "aud": resource}
    assert verifier.verify(token, resource=resource).username == "ada"
    # Cognito's access tokens name their client in client_id, and carry no aud
    cognito = OidcAccessVerifier(provider=issuer, people=sign_in_rules["people"],
                                 audience="mcp-client-id", audience_claim="client_id")  # fmt: skip
    issuer.claims = {"iss": ISSUER, "sub": "ada", "client_id": "mcp-client-id",
                     "token_use": "access"}  # fmt: skip
    assert cognito.verify(token, resource=resource).username == "ada"
    # a token another issuer signed is not this verifier's to judge
    assert (
        verifier.verify(jwt.encode({"iss": "https://elsewhere"}, "k" * 32), resource=resource)
        is None
    )
    assert verifier.verify("bk_an-api-key", resource=resource) is None
