"""/users over a real server: admins only (403 otherwise), create, list, delete, the last
admin stays; the first admin from settings and from `bunko user create --admin`."""

from __future__ import annotations

import uuid

from typer.testing import CliRunner

from bunko.cli import app as cli
from tests.e2e.rest_harness import PASSWORD, assert_error, serve, wait_until_done


def test_non_admins_get_403(rest):
    user = rest.new_user()
    assert_error(user.client.get("/users"), 403)
    assert_error(user.client.post("/users", json={"username": "x-y-z", "password": PASSWORD}), 403)
    assert_error(user.client.delete(f"/users/{user.id}"), 403)


def test_admin_creates_lists_and_deletes_users(rest):
    admin = rest.admin()
    name = f"made-{uuid.uuid4().hex[:6]}"
    created = admin.client.post(
        "/users", json={"username": name, "password": PASSWORD, "isAdmin": False}
    )
    assert created.status_code == 201
    user = created.json()
    assert user["username"] == name and user["isAdmin"] is False
    assert_error(admin.client.post("/users", json={"username": name, "password": PASSWORD}), 409)
    listed = admin.client.get("/users").json()
    assert {u["username"] for u in listed} >= {"admin", name}
    assert all("password" not in str(u).lower() for u in listed)

    # the new user works, then is deleted with their files; their token stops working
    member = rest.login(name, PASSWORD)
    upload = member.client.post("/upload", files={"file": ("m.txt", b"member notes", "text/plain")})
    wait_until_done(member.client, upload.json()["id"])
    workspace = rest.services.identity.authenticate(member.token).workspace_id
    deleted = admin.client.delete(f"/users/{user['id']}")
    assert deleted.status_code == 200 and deleted.json()["id"] == user["id"]
    assert_error(member.client.get("/knowledge-bases"), 401)
    assert rest.services.metadata.count_documents(workspace) == 0
    assert_error(admin.client.delete(f"/users/{user['id']}"), 404)


def test_created_admins_can_manage_users(rest):
    admin = rest.admin()
    name = f"boss-{uuid.uuid4().hex[:6]}"
    admin.client.post("/users", json={"username": name, "password": PASSWORD, "isAdmin": True})
    boss = rest.login(name, PASSWORD)
    assert boss.client.get("/users").status_code == 200


def test_the_last_admin_cannot_be_deleted(tmp_path):
    with serve(tmp_path / "data") as rest:
        admin = rest.admin()
        body = assert_error(admin.client.delete(f"/users/{admin.id}"), 409)
        assert "last admin" in body["message"]
        # with a second admin, the first may go
        admin.client.post(
            "/users", json={"username": "second", "password": PASSWORD, "isAdmin": True}
        )
        assert admin.client.delete(f"/users/{admin.id}").status_code == 200
        second = rest.login("second", PASSWORD)
        assert_error(second.client.delete(f"/users/{second.id}"), 409)


def test_cli_creates_the_first_admin(tmp_path):
    data = tmp_path / "data"
    runner = CliRunner()
    result = runner.invoke(
        cli,
        ["user", "create", "chief", "--admin", "--data-dir", str(data)],
        input=f"{PASSWORD}\n{PASSWORD}\n",
    )
    assert result.exit_code == 0, result.output
    assert "admin" in result.output
    duplicate = runner.invoke(
        cli, ["user", "create", "chief", "--data-dir", str(data)], input=f"{PASSWORD}\n{PASSWORD}\n"
    )
    assert duplicate.exit_code == 1 and "taken" in duplicate.output
    with serve(data, admin_username=None, admin_password=None) as rest:
        chief = rest.login("chief", PASSWORD)
        assert chief.client.get("/users").status_code == 200
        assert [u["username"] for u in chief.client.get("/users").json()] == ["chief"]
