"""/auth over a real server: register, login, tokens (expiry, invalidation), throttling,
and the seed's JavaScript example (login → list files → upload → list)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import jwt
import pytest

from tests.e2e.rest_harness import JWT_SECRET, PASSWORD, assert_error, wait_until_done

# The settings of the module's live server (the `rest` fixture, tests/conftest.py).
REST_SETTINGS = {"login_max_failures": 3, "password_hash_cost": "strong"}

pytestmark = pytest.mark.slow  # argon2 hashes by the dozen (lockouts, password changes)


def test_register_then_login(rest):
    name = f"alice-{uuid.uuid4().hex[:6]}"
    with rest.client() as client:
        created = client.post("/auth/register", json={"username": name, "password": PASSWORD})
        assert created.status_code == 201
        body = created.json()
        assert body["message"] and set(body["user"]) >= {"id", "username", "isAdmin"}
        assert body["user"]["username"] == name and body["user"]["isAdmin"] is False

        logged = client.post("/auth/login", json={"username": name, "password": PASSWORD})
        assert logged.status_code == 200
        login = logged.json()
        assert login["user"] == {**body["user"], "createdAt": login["user"]["createdAt"]}
        claims = jwt.decode(login["access_token"], JWT_SECRET, algorithms=["HS256"], issuer="bunko")
        assert claims["sub"] == body["user"]["id"] and claims["exp"] > claims["iat"]


def test_register_conflict_and_validation(rest):
    user = rest.new_user()
    with rest.client() as client:
        taken = client.post(
            "/auth/register", json={"username": user.username.upper(), "password": PASSWORD}
        )
        assert_error(taken, 409)
        short = client.post("/auth/register", json={"username": "bob-x", "password": "short"})
        assert "password" in str(assert_error(short, 400)["message"])
        missing = client.post("/auth/register", json={"username": "bob-y"})
        assert "password" in str(assert_error(missing, 400)["message"])
        not_json = client.post(
            "/auth/register", content=b"{", headers={"content-type": "application/json"}
        )
        assert_error(not_json, 400)


def test_bad_credentials_are_401_alike(rest):
    user = rest.new_user()
    with rest.client() as client:
        wrong = client.post(
            "/auth/login", json={"username": user.username, "password": "wrong pw 1"}
        )
        unknown = client.post(
            "/auth/login", json={"username": "nobody-here", "password": "wrong pw 1"}
        )
    assert assert_error(wrong, 401)["message"] == assert_error(unknown, 401)["message"]


@pytest.mark.parametrize("header", [None, "Bearer", "Bearer not-a-token", "Basic dXNlcjpwdw=="])
def test_protected_routes_need_a_valid_token(rest, header):
    headers = {"Authorization": header} if header else {}
    with rest.client() as client:
        for method, path in [
            ("GET", "/knowledge-bases"),
            ("GET", "/model-configs"),
            ("GET", "/user-settings"),
            ("POST", "/auth/change-password"),
            ("GET", "/users"),
        ]:
            response = client.request(method, path, headers=headers, json={})
            assert_error(response, 401)
            assert response.headers["www-authenticate"] == "Bearer"


def test_expired_token_is_refused(rest):
    user = rest.new_user()
    past = datetime.now(UTC) - timedelta(hours=2)
    claims = {
        "iss": "bunko",
        "sub": user.id,
        "ver": 0,
        "iat": past,
        "exp": past + timedelta(hours=1),
    }
    expired = jwt.encode(claims, JWT_SECRET, algorithm="HS256")
    with rest.client(expired) as client:
        assert "expired" in assert_error(client.get("/knowledge-bases"), 401)["message"]
    # the same claims, not yet expired, are accepted: the expiry is what was refused
    claims["exp"] = datetime.now(UTC) + timedelta(hours=1)
    with rest.client(jwt.encode(claims, JWT_SECRET, algorithm="HS256")) as client:
        assert client.get("/knowledge-bases").status_code == 200


def test_change_password_invalidates_older_tokens(rest):
    user = rest.new_user()
    other_session = rest.login(user.username, user.password)
    changed = user.client.post(
        "/auth/change-password",
        json={"currentPassword": user.password, "newPassword": "a brand new password"},
    )
    assert changed.status_code == 200
    fresh = changed.json()["access_token"]
    assert_error(user.client.get("/knowledge-bases"), 401)
    assert_error(other_session.client.get("/knowledge-bases"), 401)
    with rest.client(fresh) as client:
        assert client.get("/knowledge-bases").status_code == 200
    with rest.client() as client:
        old = client.post(
            "/auth/login", json={"username": user.username, "password": user.password}
        )
        assert_error(old, 401)
    assert rest.login(user.username, "a brand new password").token


def test_change_password_rejects_a_wrong_current_password(rest):
    user = rest.new_user()
    wrong = user.client.post(
        "/auth/change-password",
        json={"currentPassword": "not mine!", "newPassword": "whatever-123"},
    )
    assert "currentPassword" in assert_error(wrong, 400)["message"]
    assert user.client.get("/knowledge-bases").status_code == 200  # the token still works


def test_repeated_failed_logins_are_refused_for_a_while(rest):
    user = rest.new_user()
    with rest.client() as client:
        for _ in range(3):
            bad = client.post(
                "/auth/login", json={"username": user.username, "password": "guess-123"}
            )
            assert_error(bad, 401)
        locked = client.post(
            "/auth/login", json={"username": user.username, "password": user.password}
        )
    assert_error(locked, 429)
    assert int(locked.headers["retry-after"]) > 0
    # other accounts are not affected
    other = rest.new_user()
    assert other.client.get("/knowledge-bases").status_code == 200


def test_the_seed_javascript_example(rest):
    """login → list files → upload → list, as the seed's fetch() example does."""
    user = rest.new_user()
    with rest.client() as anonymous:
        login = anonymous.post(
            "/auth/login", json={"username": user.username, "password": user.password}
        )
    access_token = login.json()["access_token"]
    with rest.client(access_token) as client:
        files = client.get("/knowledge-bases")
        assert files.status_code == 200 and files.json() == []
        uploaded = client.post(
            "/upload",
            files={"file": ("hello.txt", "こんにちは、文庫の世界。".encode(), "text/plain")},
            data={"chunkSize": "500", "chunkOverlap": "50", "mode": "fast"},
        )
        assert uploaded.status_code == 201
        record = uploaded.json()
        assert record["status"] == "pending" and record["originalName"] == "hello.txt"
        listed = client.get("/knowledge-bases").json()
        assert [f["id"] for f in listed] == [record["id"]]
        assert set(listed[0]) >= {
            "id",
            "name",
            "originalName",
            "size",
            "mimetype",
            "status",
            "createdAt",
        }
        assert wait_until_done(client, record["id"])["status"] == "completed"
