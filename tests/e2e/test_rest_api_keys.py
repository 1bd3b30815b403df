"""/api-keys and POST /auth/logout over a real server: a key is shown once and works at
once, in the caller's workspace only, never with more scopes than its creator; revoking it
stops it; keys cannot mint keys; signing out stops every token of the user."""

from __future__ import annotations

from tests.e2e.rest_harness import assert_error


def test_create_list_use_and_revoke(rest):
    user = rest.new_user()
    response = user.client.post("/api-keys", json={"name": "claude", "scopes": ["kb:read"]})
    assert response.status_code == 201, response.text
    created = response.json()
    secret = created["key"]
    assert secret.startswith("bk_") and created["prefix"] == secret[:10]
    assert created["scopes"] == ["kb:read"] and created["revokedAt"] is None
    listed = user.client.get("/api-keys").json()
    assert [k["id"] for k in listed] == [created["id"]]
    assert "key" not in listed[0] and secret not in user.client.get("/api-keys").text
    with rest.client(secret) as agent:
        assert agent.get("/knowledge-bases").status_code == 200
        # the key's workspace is the user's
        assert agent.get("/search", params={"q": "anything"}).status_code == 200
        # read-only: writing is refused
        assert_error(agent.delete("/knowledge-bases/clear"), 403)
        revoked = user.client.delete(f"/api-keys/{created['id']}")
        assert revoked.status_code == 200 and revoked.json()["revokedAt"] is not None
        assert_error(agent.get("/knowledge-bases"), 401)
    assert_error(user.client.delete(f"/api-keys/{created['id']}"), 404)


def test_keys_stay_in_their_workspace(rest):
    alice, bob = rest.new_user(), rest.new_user()
    key = alice.client.post("/api-keys", json={"scopes": ["kb:read", "kb:write"]}).json()
    assert bob.client.get("/api-keys").json() == []
    assert_error(bob.client.delete(f"/api-keys/{key['id']}"), 404)
    with rest.client(key["key"]) as agent:
        assert agent.get("/knowledge-bases").status_code == 200
        upload = agent.post("/upload", files={"file": ("a.txt", b"alpha beta gamma", "text/plain")})
        assert upload.status_code == 201, upload.text
    assert [f["id"] for f in alice.client.get("/knowledge-bases").json()] == [upload.json()["id"]]
    assert bob.client.get("/knowledge-bases").json() == []


def test_bad_requests_change_nothing(rest):
    user = rest.new_user()
    assert "scopes" in str(assert_error(user.client.post("/api-keys", json={}), 400)["message"])
    body = assert_error(user.client.post("/api-keys", json={"scopes": ["kb:everything"]}), 400)
    assert "unknown scope" in body["message"]
    assert_error(user.client.post("/api-keys", json={"scopes": []}), 400)
    long_name = {"name": "x" * 101, "scopes": ["kb:read"]}
    assert_error(user.client.post("/api-keys", json=long_name), 400)
    # a user is no admin: an admin key would be more than they hold
    body = assert_error(user.client.post("/api-keys", json={"scopes": ["admin"]}), 403)
    assert "admin" in body["message"]
    assert user.client.get("/api-keys").json() == []
    assert_error(rest.client().get("/api-keys"), 401)
    assert_error(rest.client("bk_not-a-key").post("/api-keys", json={"scopes": ["kb:read"]}), 401)


def test_a_key_cannot_manage_keys(rest):
    user = rest.new_user()
    key = user.client.post("/api-keys", json={"scopes": ["kb:read", "kb:write"]}).json()
    with rest.client(key["key"]) as agent:
        assert_error(agent.get("/api-keys"), 403)
        assert_error(agent.post("/api-keys", json={"scopes": ["kb:read"]}), 403)
        assert_error(agent.delete(f"/api-keys/{key['id']}"), 403)
        assert_error(agent.post("/auth/logout"), 403)
    assert len(user.client.get("/api-keys").json()) == 1


def test_an_admin_may_create_an_admin_key(rest):
    admin = rest.admin()
    response = admin.client.post("/api-keys", json={"name": "ops", "scopes": ["admin"]})
    assert response.status_code == 201, response.text
    with rest.client(response.json()["key"]) as agent:
        assert agent.get("/users").status_code == 200


def test_logout_stops_every_token_of_the_user(rest):
    user = rest.new_user()
    other_session = rest.login(user.username, user.password)
    key = user.client.post("/api-keys", json={"scopes": ["kb:read"]}).json()["key"]
    response = user.client.post("/auth/logout")
    assert response.status_code == 200 and response.json() == {"message": "Signed out"}
    assert_error(user.client.get("/knowledge-bases"), 401)
    assert_error(other_session.client.get("/knowledge-bases"), 401)
    assert_error(user.client.post("/auth/logout"), 401)
    # agents' keys are not sessions: they live until revoked
    with rest.client(key) as agent:
        assert agent.get("/knowledge-bases").status_code == 200
    again = rest.login(user.username, user.password)
    assert again.client.get("/knowledge-bases").status_code == 200
