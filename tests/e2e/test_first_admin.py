"""First run and administration (issue 32, point 2), over a real server: the first account
registered on a deployment without an admin becomes its admin (and of many sign-ups at once,
exactly one); an admin promotes, demotes and resets passwords (REST and `bunko user`); the
Users list shows each user's documents and bytes; the last admin stays."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from typer.testing import CliRunner

from bunko.cli import app as cli
from tests.e2e.rest_harness import PASSWORD, assert_error, serve, wait_until_done

pytestmark = pytest.mark.slow  # real `bunko user` processes and many sign-ups

NO_ADMIN = {"admin_username": None, "admin_password": None}


def register(url: str, username: str) -> dict:
    with httpx.Client(base_url=url, timeout=60) as anonymous:
        response = anonymous.post(
            "/auth/register", json={"username": username, "password": PASSWORD}
        )
    assert response.status_code == 201, response.text
    return response.json()


def test_the_first_sign_up_is_the_admin_and_only_the_first(tmp_path):
    with serve(tmp_path / "data", **NO_ADMIN) as fresh_rest:
        names = [f"early-{n}" for n in range(12)]
        with ThreadPoolExecutor(max_workers=12) as pool:
            answers = list(pool.map(lambda name: register(fresh_rest.url, name), names))
        admins = [u for u in fresh_rest.services.accounts.auth.users.list_users() if u.is_admin]
        assert len(admins) == 1  # twelve sign-ups at once: one admin
        # the registration answer says so
        assert [a["user"]["username"] for a in answers if a["user"]["isAdmin"]] == [
            admins[0].username
        ]
        first = fresh_rest.login(admins[0].username, PASSWORD)
        assert first.client.get("/users").status_code == 200
        later = register(fresh_rest.url, "later")
        assert fresh_rest.login("later", PASSWORD).client.get("/users").status_code == 403
        assert later["user"]["isAdmin"] is False


def test_no_first_user_admin_when_switched_off_or_an_admin_exists(tmp_path):
    with serve(tmp_path / "off", **NO_ADMIN, first_user_admin=False) as fresh_rest:
        register(fresh_rest.url, "first")
        assert_error(fresh_rest.login("first", PASSWORD).client.get("/users"), 403)
    with serve(tmp_path / "seeded") as fresh_rest:  # the admin from settings came first
        register(fresh_rest.url, "first")
        assert_error(fresh_rest.login("first", PASSWORD).client.get("/users"), 403)


def test_sign_up_closed_lets_only_the_first_account_in(tmp_path):
    """BUNKO_SIGNUP=closed (the default): a fresh deployment's first account signs up and is
    its admin; then nobody signs up, and the admin adds people (issue 49, point 5)."""
    with serve(tmp_path / "fresh", **NO_ADMIN, signup="closed") as fresh_rest:
        with fresh_rest.client() as anonymous:
            assert anonymous.get("/auth/signup").json() == {"open": True}
        assert register(fresh_rest.url, "founder")["user"]["isAdmin"] is True
        with fresh_rest.client() as anonymous:
            assert anonymous.get("/auth/signup").json() == {"open": False}
            late = anonymous.post("/auth/register", json={"username": "late", "password": PASSWORD})
        assert "ask an admin" in assert_error(late, 403)["message"]
        founder = fresh_rest.login("founder", PASSWORD)
        added = founder.client.post("/users", json={"username": "late", "password": PASSWORD})
        assert added.status_code == 201, added.text
        assert fresh_rest.login("late", PASSWORD).client.get("/libraries").status_code == 200
    with serve(tmp_path / "race", **NO_ADMIN, signup="closed") as fresh_rest:
        # many first sign-ups at once: the one that becomes the admin is the only account
        def attempt(name: str) -> int:
            with httpx.Client(base_url=fresh_rest.url, timeout=60) as anonymous:
                body = {"username": name, "password": PASSWORD}
                return anonymous.post("/auth/register", json=body).status_code

        with ThreadPoolExecutor(max_workers=8) as pool:
            codes = list(pool.map(attempt, [f"early-{n}" for n in range(8)]))
        assert sorted(codes) == [201] + [403] * 7
        assert len(fresh_rest.services.accounts.auth.users.list_users()) == 1
    with serve(tmp_path / "seeded", signup="closed") as fresh_rest:  # the admin from settings
        with fresh_rest.client() as anonymous:
            assert anonymous.get("/auth/signup").json() == {"open": False}
            first = anonymous.post("/auth/register", json={"username": "x1", "password": PASSWORD})
        assert_error(first, 403)
    with serve(tmp_path / "open", signup="open") as fresh_rest:
        assert register(fresh_rest.url, "anyone")["user"]["isAdmin"] is False


def test_an_admin_promotes_demotes_and_resets_a_password(fresh_rest):
    admin, user = fresh_rest.admin(), fresh_rest.new_user()
    assert_error(user.client.patch(f"/users/{admin.id}", json={"isAdmin": False}), 403)
    assert_error(user.client.post(f"/users/{user.id}/password", json={"password": "x" * 12}), 403)

    promoted = admin.client.patch(f"/users/{user.id}", json={"isAdmin": True})
    assert promoted.status_code == 200 and promoted.json()["isAdmin"] is True
    assert user.client.get("/users").status_code == 200  # the same token, the new role
    assert (
        admin.client.patch(f"/users/{user.id}", json={"isAdmin": False}).json()["isAdmin"] is False
    )
    assert_error(user.client.get("/users"), 403)
    assert_error(admin.client.patch(f"/users/{admin.id}", json={"isAdmin": False}), 409)
    assert_error(admin.client.patch("/users/not-a-user", json={"isAdmin": True}), 404)
    assert_error(admin.client.patch(f"/users/{user.id}", json={"isAdmin": "yes please"}), 400)

    fresh = "a new password for you"
    assert_error(admin.client.post(f"/users/{user.id}/password", json={"password": "short"}), 400)
    reset = admin.client.post(f"/users/{user.id}/password", json={"password": fresh})
    assert reset.status_code == 200, reset.text
    assert_error(user.client.get("/knowledge-bases"), 401)  # every session ended
    with fresh_rest.client() as anonymous:
        old = anonymous.post("/auth/login", json={"username": user.username, "password": PASSWORD})
        assert old.status_code == 401
    assert fresh_rest.login(user.username, fresh).client.get("/knowledge-bases").status_code == 200


def test_the_users_list_shows_documents_bytes_and_libraries(fresh_rest):
    admin, user = fresh_rest.admin(), fresh_rest.new_user()
    text = b"The keeper trims the lamp every evening."
    uploaded = user.client.post("/upload", files={"file": ("notes.txt", text, "text/plain")})
    wait_until_done(user.client, uploaded.json()["id"])
    library = admin.client.post("/libraries", json={"name": "Shelf"}).json()["id"]
    admin.client.put(
        f"/libraries/{library}/members", json={"username": user.username, "role": "viewer"}
    )
    listed = {u["username"]: u for u in admin.client.get("/users").json()}
    assert (listed[user.username]["documents"], listed[user.username]["bytes"]) == (1, len(text))
    assert listed[user.username]["libraries"] == [{"name": "Shelf", "role": "viewer"}]
    assert listed["admin"]["libraries"] == [{"name": "Shelf", "role": "owner"}]
    assert (listed["admin"]["documents"], listed["admin"]["bytes"]) == (0, 0)


def test_bunko_user_promote_demote_and_reset_password(tmp_path):
    data = tmp_path / "data"
    runner = CliRunner()

    def bunko(*args: str, input: str | None = None):
        return runner.invoke(cli, [*args, "--data-dir", str(data)], input=input)

    created = bunko("user", "create", "chief", input=f"{PASSWORD}\n{PASSWORD}\n")
    assert created.exit_code == 0 and "created user chief" in created.output
    promoted = bunko("user", "promote", "chief")
    assert promoted.exit_code == 0 and "chief is an admin now" in promoted.output
    last = bunko("user", "demote", "chief")
    assert last.exit_code == 1 and "last admin" in last.output
    missing = bunko("user", "promote", "nobody")
    assert missing.exit_code == 1 and "no user named 'nobody'" in missing.output
    fresh = "the chief's new password"
    reset = bunko("user", "reset-password", "chief", input=f"{fresh}\n{fresh}\n")
    assert reset.exit_code == 0, reset.output
    with serve(data, **NO_ADMIN) as fresh_rest:
        chief = fresh_rest.login("chief", fresh)
        assert chief.client.get("/users").status_code == 200
