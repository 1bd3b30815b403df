"""Issue 46, finding 1: an API key keeps no right its maker has lost. Each test makes a key
over REST on a real server, takes the maker's right away (demotion, deletion, removal from the
library, a smaller role, the library deleted) and replays what the key did before: it is
refused at once, over REST and over an open MCP session. And the keys of a library are
managed by its owners (all of them) and by each member (their own)."""

from __future__ import annotations

import pytest
from mcp import Client

from bunko.services.accounts.tokens import principal_for
from tests.conftest import make_services
from tests.e2e.mcp_harness import http_client, ok
from tests.e2e.mcp_stdio_harness import bunko_mcp
from tests.e2e.rest_harness import Rest, User, assert_error


def _key(user: User, *scopes: str) -> dict:
    made = user.client.post("/api-keys", json={"name": "agent", "scopes": list(scopes)})
    assert made.status_code == 201, made.text
    return made.json()


def _library(rest: Rest, **members: str) -> tuple[User, dict[str, User], str]:
    """A new library: its owner, members by role name, and its id; every client names it."""
    owner = rest.new_user()
    created = owner.client.post("/libraries", json={"name": f"lib-{owner.username}"})
    assert created.status_code == 201, created.text
    library_id = created.json()["id"]
    people = {}
    for label, role in members.items():
        person = rest.new_user()
        added = owner.client.put(
            f"/libraries/{library_id}/members", json={"username": person.username, "role": role}
        )
        assert added.status_code == 200, added.text
        person.client.headers["X-Bunko-Library"] = library_id
        people[label] = person
    owner.client.headers["X-Bunko-Library"] = library_id
    return owner, people, library_id


def _upload(client, name: str = "note.txt"):
    return client.post("/upload", files={"file": (name, b"meal allowance 60 euros", "text/plain")})


def test_an_admin_key_loses_admin_when_its_maker_is_demoted_and_everything_when_deleted(rest):
    admin = rest.admin()
    made = admin.client.post("/users", json={"username": f"ops-{admin.token[-6:]}",
                                             "password": "another good password",
                                             "isAdmin": True})  # fmt: skip
    assert made.status_code == 201, made.text
    ops = rest.login(made.json()["username"], "another good password")
    key = _key(ops, "admin", "kb:read", "kb:write")
    with rest.client(key["key"]) as agent:
        assert agent.get("/users").status_code == 200
        assert admin.client.patch(f"/users/{ops.id}", json={"isAdmin": False}).status_code == 200
        # the attack: list users, make an admin, watch a server folder
        assert_error(agent.get("/users"), 403)
        new_admin = {"username": "planted", "password": "planted password", "isAdmin": True}
        assert_error(agent.post("/users", json=new_admin), 403)
        watch = agent.post("/settings", json={"monitor_paths": ["/etc"]})
        assert watch.status_code == 403, watch.text
        assert agent.get("/knowledge-bases").status_code == 200  # still a user's key
        assert admin.client.delete(f"/users/{ops.id}").status_code == 200
        assert_error(agent.get("/knowledge-bases"), 401)
        assert_error(agent.get("/users"), 401)
    assert "planted" not in {u["username"] for u in admin.client.get("/users").json()}


def test_a_removed_viewer_and_a_demoted_editor_keep_nothing(rest):
    owner, people, library_id = _library(rest, viewer="viewer", editor="editor")
    read_key = _key(people["viewer"], "kb:read")["key"]
    write_key = _key(people["editor"], "kb:read", "kb:write")["key"]
    with rest.client(read_key) as reader, rest.client(write_key) as writer:
        assert reader.get("/search", params={"q": "meal"}).status_code == 200
        assert _upload(writer).status_code == 201
        removed = owner.client.delete(f"/libraries/{library_id}/members/{people['viewer'].id}")
        assert removed.status_code == 200, removed.text
        assert_error(reader.get("/search", params={"q": "meal"}), 401)
        demoted = owner.client.put(f"/libraries/{library_id}/members",
                                   json={"username": people["editor"].username, "role": "viewer"})  # fmt: skip
        assert demoted.status_code == 200, demoted.text
        assert "kb:write" in assert_error(_upload(writer, "later.txt"), 403)["message"]
        assert writer.get("/search", params={"q": "meal"}).status_code == 200  # a viewer reads
    names = [f["name"] for f in owner.client.get("/knowledge-bases").json()]
    assert names == ["note.txt"]


def test_a_deleted_library_takes_its_keys_with_it(rest):
    owner, people, library_id = _library(rest, editor="editor")
    keys = [_key(owner, "kb:read", "kb:write"), _key(people["editor"], "kb:read", "kb:write")]
    assert owner.client.delete(f"/libraries/{library_id}").status_code == 200
    for key in keys:
        with rest.client(key["key"]) as agent:
            assert_error(_upload(agent), 401)
            assert_error(agent.get("/search", params={"q": "meal"}), 401)
    stored = {k.id: k for k in rest.services.apikeys.list_keys(library_id)}
    assert all(stored[k["id"]].revoked_at is not None for k in keys)


@pytest.mark.anyio
async def test_an_open_mcp_session_loses_the_library_with_its_maker(rest):
    owner, people, library_id = _library(rest, viewer="viewer")
    key = _key(people["viewer"], "kb:read")["key"]
    async with http_client(rest.url, key) as client:
        ok(await client.call_tool("search_text", {"content": "meal allowance"}))
        owner.client.delete(f"/libraries/{library_id}/members/{people['viewer'].id}")
        with pytest.raises(BaseException) as refused:
            await client.call_tool("search_text", {"content": "meal allowance"})
        assert "401" in repr(refused.value) or "unauthorized" in repr(refused.value).lower()


def test_owners_manage_every_key_members_their_own(rest):
    owner, people, _ = _library(rest, viewer="viewer", editor="editor")
    owners_key = _key(owner, "kb:read", "kb:write")
    viewers_key = _key(people["viewer"], "kb:read")
    editors_key = _key(people["editor"], "kb:read")
    # a viewer lists and revokes their own key (they could make one, not see it)
    viewer = people["viewer"].client
    assert [k["id"] for k in viewer.get("/api-keys").json()] == [viewers_key["id"]]
    # an editor cannot see nor revoke the owner's key
    editor = people["editor"].client
    assert [k["id"] for k in editor.get("/api-keys").json()] == [editors_key["id"]]
    assert_error(editor.delete(f"/api-keys/{owners_key['id']}"), 404)
    with rest.client(owners_key["key"]) as agent:
        assert agent.get("/knowledge-bases").status_code == 200
    assert viewer.delete(f"/api-keys/{viewers_key['id']}").status_code == 200
    # the owner sees every key and revokes the editor's
    listed = {k["id"] for k in owner.client.get("/api-keys").json()}
    assert listed == {owners_key["id"], viewers_key["id"], editors_key["id"]}
    assert owner.client.delete(f"/api-keys/{editors_key['id']}").status_code == 200
    with rest.client(editors_key["key"]) as agent:
        assert_error(agent.get("/knowledge-bases"), 401)


def test_a_key_made_before_makers_were_recorded_is_refused(rest):
    """An older key in a shared library has no known maker (the SQLite migration gives the
    keys of a personal library to its user): nobody vouches for it, so it is refused."""
    _, _, library_id = _library(rest)
    _, secret = rest.services.apikeys.create(
        workspace_id=library_id, scopes="kb:read", created_by=None
    )
    with rest.client(secret) as agent:
        assert_error(agent.get("/knowledge-bases"), 401)


@pytest.mark.anyio
@pytest.mark.slow  # a real `bunko mcp` process
async def test_a_stdio_session_checks_the_key_at_every_call(tmp_path):
    """`bunko mcp --api-key`: the key was checked once at start; now at every tool call."""
    data = tmp_path / "data"
    services = make_services(data, embedder="none")
    try:
        users = services.accounts.users
        owner = users.create_user("owner-stdio", "a good long password")
        viewer = users.create_user("viewer-stdio", "a good long password")
        library = services.accounts.libraries.create(principal_for(owner), "Stdio Team")
        services.accounts.libraries.set_member(
            principal_for(owner), library.id, viewer.username, "viewer"
        )
        _, key = services.apikeys.create(
            workspace_id=library.id, scopes="kb:read", created_by=viewer.id
        )
    finally:
        services.close()
    async with Client(bunko_mcp(data, "--api-key", key)) as client:
        assert ok(await client.call_tool("get_document_count", {})) == {"count": 0}
        services = make_services(data, embedder="none")  # the owner, meanwhile, elsewhere
        try:
            services.accounts.libraries.remove_member(principal_for(owner), library.id, viewer.id)
        finally:
            services.close()
        refused = await client.call_tool("get_document_count", {})
        assert refused.is_error and "not authenticated" in refused.content[0].text
