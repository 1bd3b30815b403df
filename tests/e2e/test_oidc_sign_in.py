"""Sign-in with an identity provider, end to end: a real OpenID Connect issuer
(oidc-provider-mock, tests/oidc_issuer.py) and a real Bunko server, driven as a browser drives
them: Bunko's /auth/oidc/login, the issuer's sign-in form, the callback, the web app's address
with the token in its fragment. The token is then an ordinary Bunko token (GET /libraries).

What it proves: a person lands in the libraries their groups map to with the mapped roles;
a later sign-in follows their groups (a group removed takes the library away, a role changes)
and leaves unmapped libraries alone; a person is linked by (issuer, sub), never to a local
account by a matching name; a refused sign-in (cancelled, a wrong or missing state, a code for
another client, a code used twice, an expired ID token, an unreachable issuer) lands on the
web app with `#oidc_error`, creates no one, and is never a 500.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import httpx
import jwt
import pytest

from bunko.domain.audit import SIGN_IN, AuditQuery
from tests.e2e.rest_harness import PASSWORD, Rest, assert_error, serve
from tests.oidc_issuer import fragment, oidc_issuer, query, submit_login_form

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:authlib")

CLIENT_ID = "bunko-web"
# The provider serves confidential clients only (client_secret_basic or _post): no public
# client. Bunko sends it with HTTP Basic, the default method.
CLIENT = {"oidc_client_id": CLIENT_ID, "oidc_client_secret": "the-web-app-client-secret"}
MAPPING = {
    "eng": {"library": "Engineering", "role": "editor"},
    "eng-leads": {"library": "Engineering", "role": "owner"},
    "handbook-readers": {"library": "Handbook", "role": "viewer"},
}


@pytest.fixture(scope="module")
def oidc_server(issuer, tmp_path_factory):
    data = tmp_path_factory.mktemp("oidc") / "data"
    with serve(data, oidc_issuer=issuer.url, oidc_group_roles=MAPPING, **CLIENT) as rest:
        yield rest


def start(browser: httpx.Client, oidc_server: Rest) -> str:
    """Press the web app's button: Bunko sends the browser to the issuer."""
    login = oidc_server.client().get("/auth/oidc/config").json()["loginUrl"]
    sent = browser.get(login)
    assert sent.status_code == 302, sent.text
    assert sent.headers["cache-control"] == "no-store"
    return sent.headers["location"]


def land(browser: httpx.Client, oidc_server: Rest, callback: str) -> dict[str, str]:
    """Follow the issuer back to Bunko's callback; where Bunko sends the browser: the web app,
    with the outcome in the fragment."""
    assert callback.startswith(oidc_server.url + "/auth/oidc/callback?"), callback
    landed = browser.get(callback)
    assert landed.status_code == 302, landed.text  # never a 500, never an error page
    location = landed.headers["location"]
    assert location.startswith(oidc_server.url + "/#"), location
    assert browser.get(location).status_code == 200  # the web app's page
    return fragment(location)


def sign_in(oidc_server: Rest, sub: str | None) -> dict[str, str]:
    with httpx.Client(timeout=30) as browser:
        return land(
            browser, oidc_server, submit_login_form(browser, start(browser, oidc_server), sub)
        )


def libraries(oidc_server: Rest, token: str) -> dict[str, tuple[str, bool]]:
    listed = oidc_server.client(token).get("/libraries")
    assert listed.status_code == 200, listed.text
    return {lib["name"]: (lib["role"], lib["personal"]) for lib in listed.json()}


def user_id(token: str) -> str:
    return jwt.decode(token, options={"verify_signature": False})["sub"]


def test_the_web_app_learns_where_the_button_goes(oidc_server, issuer):
    config = oidc_server.client().get("/auth/oidc/config").json()
    assert config == {"enabled": True, "loginUrl": oidc_server.url + "/auth/oidc/login",
                      "providerName": "localhost"}  # fmt: skip
    sent = httpx.get(config["loginUrl"], timeout=30)
    authorize = query(sent.headers["location"])
    assert sent.headers["location"].startswith(issuer.metadata()["authorization_endpoint"])
    assert authorize["response_type"] == "code" and authorize["client_id"] == CLIENT_ID
    assert authorize["redirect_uri"] == oidc_server.url + "/auth/oidc/callback"
    assert authorize["scope"] == "openid profile email"
    assert authorize["code_challenge_method"] == "S256" and len(authorize["code_challenge"]) == 43
    assert len(authorize["state"]) >= 43 and len(authorize["nonce"]) >= 43
    cookie = sent.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "path=/auth/oidc" in cookie
    assert authorize["code_challenge"] not in cookie  # the verifier, not the challenge, is kept


def test_a_person_lands_in_their_groups_libraries_and_follows_their_groups(oidc_server, issuer):
    issuer.set_person("ada-sub", preferred_username="ada", email="ada@example.org",
                      groups=["eng", "handbook-readers", "not-mapped"])  # fmt: skip
    token = sign_in(oidc_server, "ada-sub")["oidc_token"]
    assert libraries(oidc_server, token) == {
        "ada": ("owner", True), "Engineering": ("editor", False), "Handbook": ("viewer", False),
    }  # fmt: skip
    ada = user_id(token)
    # what the web app keeps beside the token, as a password sign-in returns it
    me = oidc_server.client(token).get("/auth/me").json()
    assert (me["id"], me["username"], me["isAdmin"]) == (ada, "ada", False)
    assert (
        oidc_server.services.accounts.sign_in.web.people.links.linked_user(issuer.url, "ada-sub")
        == ada
    )
    # the roles are real: a viewer of Handbook cannot upload there, an editor of Engineering can
    handbook = oidc_server.client(token)
    handbook.headers["X-Bunko-Library"] = "Handbook"
    refused = handbook.post("/upload", files={"file": ("a.txt", b"text", "text/plain")})
    assert "kb:write" in assert_error(refused, 403)["message"]
    engineering = oidc_server.client(token)
    engineering.headers["X-Bunko-Library"] = "Engineering"
    uploaded = engineering.post("/upload", files={"file": ("a.txt", b"text", "text/plain")})
    assert uploaded.status_code == 201, uploaded.text

    # libraries the mapping does not name are the owners' to manage, and stay as they are
    assert (
        oidc_server.client(token).post("/libraries", json={"name": "Ada's notes"}).status_code
        == 201
    )
    admin = oidc_server.admin().client
    runbooks = admin.post("/libraries", json={"name": "Runbooks"}).json()
    added = admin.put(f"/libraries/{runbooks['id']}/members",
                      json={"username": "ada", "role": "viewer"})  # fmt: skip
    assert added.status_code == 200, added.text

    # at the issuer: out of handbook-readers, eng became eng-leads
    issuer.set_person("ada-sub", preferred_username="ada", groups=["eng-leads"])
    again = sign_in(oidc_server, "ada-sub")["oidc_token"]
    assert user_id(again) == ada  # the same person: the same user
    assert libraries(oidc_server, again) == {
        "ada": ("owner", True), "Engineering": ("owner", False),
        "Ada's notes": ("owner", False), "Runbooks": ("viewer", False),
    }  # fmt: skip
    gone = oidc_server.client(again)
    gone.headers["X-Bunko-Library"] = "Handbook"
    assert_error(gone.get("/knowledge-bases"), 404)  # as if it did not exist

    issuer.set_person("ada-sub", preferred_username="ada")  # no groups at all
    last = sign_in(oidc_server, "ada-sub")["oidc_token"]
    # Engineering's last owner stays its owner: a sync never leaves a library ownerless
    assert libraries(oidc_server, last) == {
        "ada": ("owner", True), "Engineering": ("owner", False),
        "Ada's notes": ("owner", False), "Runbooks": ("viewer", False),
    }  # fmt: skip
    # once another member owns it, Ada's next sign-in follows her groups
    issuer.set_person("bob-sub", preferred_username="bob", groups=["eng-leads"])
    sign_in(oidc_server, "bob-sub")
    final = sign_in(oidc_server, "ada-sub")["oidc_token"]
    assert set(libraries(oidc_server, final)) == {"ada", "Ada's notes", "Runbooks"}


def test_a_person_is_never_linked_to_a_local_account_by_name(oidc_server, issuer):
    with oidc_server.client() as anonymous:
        registered = anonymous.post("/auth/register",
                                    json={"username": "grace", "password": PASSWORD})  # fmt: skip
    assert registered.status_code == 201, registered.text
    grace = oidc_server.login("grace", PASSWORD)
    issuer.set_person("grace-sub", preferred_username="grace", email="grace@example.org")
    token = sign_in(oidc_server, "grace-sub")["oidc_token"]
    assert user_id(token) != grace.id
    assert libraries(oidc_server, token) == {"grace-2": ("owner", True)}  # a name of its own
    assert libraries(oidc_server, grace.token) == {"grace": ("owner", True)}  # untouched
    # a name that looks like the admin's gets the same treatment (no "admin" lookalike)
    issuer.set_person("mallory-sub", preferred_username="ADMİN", groups=["eng-leads"])
    mallory = sign_in(oidc_server, "mallory-sub")["oidc_token"]
    assert libraries(oidc_server, mallory) == {
        "ADMİN-2": ("owner", True),
        "Engineering": ("owner", False),
    }
    assert oidc_server.client(mallory).get("/users").status_code == 403  # not the admin


def test_a_sign_in_taken_is_one_event_on_the_trail(oidc_server, issuer):
    trail = oidc_server.services.audit.store
    before = trail.events(AuditQuery(limit=1)).total
    issuer.set_person("lin-sub", preferred_username="lin", groups=["eng"])
    token = sign_in(oidc_server, "lin-sub")["oidc_token"]
    lin = user_id(token)
    # exactly one event for the whole sign-in (login, the issuer's form, the callback)
    assert trail.events(AuditQuery(limit=1)).total == before + 1
    [event] = trail.events(AuditQuery(user_id=lin)).events
    workspace = oidc_server.services.accounts.users.users.get_user(lin).workspace_id
    assert (event.action, event.outcome, event.status) == (SIGN_IN, "ok", 302)
    assert (event.library_id, event.client, event.door) == (workspace, "127.0.0.1", "rest")
    assert event.api_key_id is None and event.object_id is None


def test_refused_sign_ins_land_on_the_web_app_and_create_no_one(oidc_server, issuer):
    users = oidc_server.services.accounts.users
    before = {u.id for u in users.list_users()}
    issuer.set_person("eve-sub", preferred_username="eve", groups=["eng-leads"])

    cancelled = sign_in(oidc_server, None)  # "Deny" at the issuer
    assert cancelled == {"oidc_error": "the sign-in was cancelled or refused"}

    with httpx.Client(timeout=30) as browser:  # the state in the callback is not this browser's
        back = submit_login_form(browser, start(browser, oidc_server), "eve-sub")
        forged = back.replace(f"state={query(back)['state']}", "state=someone-elses")
        assert "did not match" in land(browser, oidc_server, forged)["oidc_error"]

    with httpx.Client(timeout=30) as victim, httpx.Client(timeout=30) as attacker:
        # login CSRF: the attacker's callback, opened in another browser (no cookie there)
        back = submit_login_form(attacker, start(attacker, oidc_server), "eve-sub")
        assert "not started in this browser" in land(victim, oidc_server, back)["oidc_error"]

    with httpx.Client(timeout=30) as browser:  # a code issued to another client
        authorize = start(browser, oidc_server).replace(
            f"client_id={CLIENT_ID}", "client_id=another-app"
        )
        back = submit_login_form(browser, authorize, "eve-sub")
        assert (
            "refused the sign-in (invalid_grant)" in land(browser, oidc_server, back)["oidc_error"]
        )

    assert {u.id for u in users.list_users()} == before
    assert (
        oidc_server.services.accounts.sign_in.web.people.links.linked_user(issuer.url, "eve-sub")
        is None
    )

    with httpx.Client(timeout=30) as browser:  # a code used twice
        back = submit_login_form(browser, start(browser, oidc_server), "eve-sub")
        kept = dict(browser.cookies)
        assert "oidc_token" in land(browser, oidc_server, back)
        assert "bunko_oidc" not in browser.cookies  # one sign-in, one use
        browser.cookies.update(kept)  # even with the cookie put back
        assert "invalid_grant" in land(browser, oidc_server, back)["oidc_error"]


def test_an_expired_id_token_is_refused(tmp_path: Path):
    # ID tokens that expired five minutes before they were issued: past any clock skew
    with (
        oidc_issuer(lifetime=timedelta(minutes=-5)) as stale,
        serve(tmp_path / "data", oidc_issuer=stale.url, **CLIENT) as oidc_server,
    ):
        stale.set_person("late-sub", preferred_username="late")
        before = {u.id for u in oidc_server.services.accounts.users.list_users()}
        assert sign_in(oidc_server, "late-sub") == {"oidc_error": "the token has expired"}
        assert {u.id for u in oidc_server.services.accounts.users.list_users()} == before


def test_an_unreachable_issuer_is_said_so(tmp_path: Path):
    with oidc_issuer() as gone:
        url = gone.url
    with serve(tmp_path / "data", oidc_issuer=url, **CLIENT) as oidc_server:
        sent = httpx.get(oidc_server.url + "/auth/oidc/login", timeout=30)
        assert sent.status_code == 302
        assert "could%20not%20be%20reached" in sent.headers["location"]
        assert sent.headers["location"].startswith(oidc_server.url + "/#oidc_error=")


def test_without_an_issuer_there_is_no_button_and_no_route(tmp_path: Path):
    with serve(tmp_path / "data") as oidc_server:
        assert oidc_server.client().get("/auth/oidc/config").json() == {
            "enabled": False, "loginUrl": None, "providerName": None,
        }  # fmt: skip
        assert_error(oidc_server.client().get("/auth/oidc/login"), 404)
        assert_error(oidc_server.client().get("/auth/oidc/callback", params={"code": "x"}), 404)


def test_a_deleted_user_signs_in_again_as_a_new_user(oidc_server, issuer):
    issuer.set_person("ben-sub", preferred_username="ben", groups=["eng"])
    first = user_id(sign_in(oidc_server, "ben-sub")["oidc_token"])
    deleted = oidc_server.admin().client.delete(f"/users/{first}")
    assert deleted.status_code == 200, deleted.text
    links = oidc_server.services.accounts.sign_in.web.people.links
    assert links.linked_user(issuer.url, "ben-sub") is None  # the link went with the user
    token = sign_in(oidc_server, "ben-sub")["oidc_token"]
    assert user_id(token) != first
    assert libraries(oidc_server, token) == {
        "ben": ("owner", True),
        "Engineering": ("editor", False),
    }


def test_signing_out_sends_the_browser_to_end_the_providers_session(oidc_server, issuer):
    """Issue 47, point 9: Bunko's sign-out names the issuer's end_session_endpoint, which
    ends the issuer's session and sends the browser back to the web app; a password account's
    sign-out names nothing."""
    issuer.set_person("max-sub", preferred_username="max")
    token = sign_in(oidc_server, "max-sub")["oidc_token"]
    out = oidc_server.client(token).post("/auth/logout")
    assert out.status_code == 200, out.text
    logout_url = out.json()["logoutUrl"]
    assert logout_url.startswith(issuer.metadata()["end_session_endpoint"] + "?")
    assert query(logout_url) == {
        "client_id": CLIENT_ID,
        "post_logout_redirect_uri": oidc_server.url + "/",
    }
    assert_error(oidc_server.client(token).get("/auth/me"), 401)  # Bunko's own sign-out came first

    with httpx.Client(timeout=30) as browser:  # what the browser does next, at the issuer
        page = browser.get(logout_url)
        assert page.status_code == 200 and "End session" in page.text
        action = page.text.split('<form method="post" action="', 1)[1].split('"', 1)[0]
        ended = browser.post(issuer.url + action, data={"redirect_uri": oidc_server.url + "/"})
        assert ended.status_code == 302 and ended.headers["location"] == oidc_server.url + "/"

    password_user = oidc_server.new_user()
    out = password_user.client.post("/auth/logout")
    assert out.status_code == 200 and out.json() == {"message": "Signed out"}
