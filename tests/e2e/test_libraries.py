"""Shared libraries over a real server (issue 32, point 1): an admin creates a library and adds
a viewer and an editor; the viewer searches and chats over the editor's upload but cannot
upload or delete; a non-member sees none of it through REST, MCP, /v1 or a direct link; an
API key made in the library answers MCP search_text from it; a folder mapped to the library
lands in it; the admins' default library holds what the drop folder brings."""

from __future__ import annotations

import json
from urllib.parse import quote

import openai
import pytest

from tests.e2e.chat_harness import ask
from tests.e2e.mcp_harness import http_client, mcp_error_in, ok, payload
from tests.e2e.rest_harness import assert_error, serve, wait_until_done, watching
from tests.waiting import wait_for

HANDBOOK = "Team Handbook"
POLICY = b"Travel policy. The meal allowance outside Europe is 60 euros a day."


@pytest.fixture(scope="module")
def team(rest):
    """An admin's library with a viewer and an editor; the editor's upload in it."""
    admin, viewer, editor, outsider = (
        rest.admin(),
        rest.new_user(),
        rest.new_user(),
        rest.new_user(),
    )
    created = admin.client.post("/libraries", json={"name": HANDBOOK})
    assert created.status_code == 201, created.text
    library = created.json()
    assert (library["role"], library["personal"]) == ("owner", False)
    for user, role in ((viewer, "viewer"), (editor, "editor")):
        added = admin.client.put(
            f"/libraries/{library['id']}/members", json={"username": user.username, "role": role}
        )
        assert added.status_code == 200 and added.json()["role"] == role, added.text
    for user in (admin, viewer, editor, outsider):
        user.client.headers["X-Bunko-Library"] = HANDBOOK  # by name, as a person types it
    uploaded = editor.client.post("/upload", files={"file": ("travel.txt", POLICY, "text/plain")})
    assert uploaded.status_code == 201, uploaded.text
    assert wait_until_done(editor.client, uploaded.json()["id"])["status"] == "completed"
    return {"library": library, "admin": admin, "viewer": viewer, "editor": editor,
            "outsider": outsider, "file_id": uploaded.json()["id"]}  # fmt: skip


def test_a_viewer_searches_and_chats_but_cannot_change_anything(team):
    viewer, file_id = team["viewer"].client, team["file_id"]
    assert [f["name"] for f in viewer.get("/knowledge-bases").json()] == ["travel.txt"]
    hits = viewer.get("/search", params={"q": "meal allowance"}).json()["items"]
    assert [h["document_id"] for h in hits] == [file_id]
    answer = ask(viewer, "What is the meal allowance outside Europe?")
    assert "60 euros" in answer.text and answer.sources[0]["fileName"] == "travel.txt"
    assert viewer.get(f"/knowledge-bases/{file_id}/original-link").status_code == 200

    refused = viewer.post("/upload", files={"file": ("mine.txt", b"viewer text", "text/plain")})
    assert "kb:write" in assert_error(refused, 403)["message"]
    assert_error(viewer.delete(f"/knowledge-bases/{file_id}"), 403)
    assert_error(viewer.delete("/knowledge-bases/clear"), 403)
    assert [f["id"] for f in viewer.get("/knowledge-bases").json()] == [file_id]


def test_without_the_header_each_user_is_in_their_own_library(rest, team):
    viewer = rest.client(team["viewer"].token)
    assert viewer.get("/knowledge-bases").json() == []
    assert_error(viewer.get(f"/knowledge-bases/{team['file_id']}"), 404)


def test_a_non_member_sees_nothing_through_any_door(rest, team):
    outsider, file_id = team["outsider"], team["file_id"]
    body = assert_error(outsider.client.get("/knowledge-bases"), 404)
    assert HANDBOOK in body["message"]  # the name they sent, nothing more
    assert_error(outsider.client.get(f"/libraries/{team['library']['id']}/members"), 404)
    direct = rest.client(outsider.token)  # their own library, the file's id
    for path in (f"/knowledge-bases/{file_id}", f"/knowledge-bases/{file_id}/original-link",
                 f"/knowledge-bases/{file_id}/chunks"):  # fmt: skip
        assert_error(direct.get(path), 404)
    assert direct.get("/search", params={"q": "meal allowance"}).json()["items"] == []
    assert [lib["name"] for lib in direct.get("/libraries").json()] == [outsider.username]
    # a library id that exists but is not theirs answers like one that does not
    by_id = rest.client(outsider.token)
    by_id.headers["X-Bunko-Library"] = team["library"]["id"]
    missing = rest.client(outsider.token)
    missing.headers["X-Bunko-Library"] = "no such library"
    assert (
        by_id.get("/knowledge-bases").status_code
        == missing.get("/knowledge-bases").status_code
        == 404
    )


@pytest.mark.anyio
async def test_a_key_made_in_the_library_works_there_and_only_there(rest, team):
    viewer, editor = team["viewer"].client, team["editor"].client
    assert_error(viewer.post("/api-keys", json={"scopes": ["kb:write"]}), 403)  # not a viewer's
    read_key = viewer.post("/api-keys", json={"name": "reader", "scopes": ["kb:read"]}).json()[
        "key"
    ]
    write_key = editor.post("/api-keys", json={"name": "w", "scopes": ["kb:read", "kb:write"]})
    async with http_client(rest.url, read_key) as client:
        found = ok(await client.call_tool("search_text", {"content": "meal allowance"}))
        assert [h["document_id"] for h in found["items"]] == [team["file_id"]]
        with pytest.raises(BaseException) as refused:
            await client.call_tool("add_item_text", {"content": "x", "path": "x.md"})
        assert "kb:write" in str(mcp_error_in(refused.value))
    async with http_client(rest.url, write_key.json()["key"]) as client:
        ok(await client.call_tool("add_item_text", {"content": "Hotel nights: 150 euros.",
                                                    "path": "hotels.md"}))  # fmt: skip
    names = {f["name"] for f in viewer.get("/knowledge-bases").json()}
    assert names == {"travel.txt", "hotels.md"}
    door = openai.OpenAI(base_url=rest.url + "/v1", api_key=read_key, max_retries=0)
    completion = door.chat.completions.create(
        model="bunko-extractive",
        messages=[{"role": "user", "content": "What is the meal allowance outside Europe?"}],
    )
    assert "60 euros" in completion.choices[0].message.content
    # The key is bound: naming another library with it is refused.
    elsewhere = rest.client(read_key)
    elsewhere.headers["X-Bunko-Library"] = "default"
    assert (
        "library it was made in" in assert_error(elsewhere.get("/knowledge-bases"), 403)["message"]
    )
    outsider_key = rest.services.apikeys.create(
        workspace_id=rest.services.identity.authenticate(team["outsider"].token).workspace_id,
        scopes=("kb:read",),
    )[1]
    async with http_client(rest.url, outsider_key) as client:
        result = await client.call_tool("search_text", {"content": "meal allowance"})
        assert payload(result)["items"] == []


def test_members_roles_and_leaving(rest, team):
    admin, editor, viewer = team["admin"].client, team["editor"], team["viewer"]
    library_id = team["library"]["id"]
    members = {
        m["username"]: m["role"]
        for m in viewer.client.get(f"/libraries/{library_id}/members").json()
    }
    assert members == {"admin": "owner", viewer.username: "viewer", editor.username: "editor"}
    # only owners manage members; the last owner stays
    denied = editor.client.put(f"/libraries/{library_id}/members",
                               json={"username": viewer.username, "role": "editor"})  # fmt: skip
    assert_error(denied, 403)
    admin_id = rest.services.identity.authenticate(team["admin"].token).user_id
    assert_error(admin.delete(f"/libraries/{library_id}/members/{admin_id}"), 409)
    assert_error(admin.put(f"/libraries/{library_id}/members",
                           json={"username": "admin", "role": "viewer"}), 409)  # fmt: skip
    assert_error(admin.put(f"/libraries/{library_id}/members",
                           json={"username": "nobody-here", "role": "viewer"}), 404)  # fmt: skip
    assert_error(admin.put(f"/libraries/{library_id}/members",
                           json={"username": viewer.username, "role": "boss"}), 400)  # fmt: skip
    assert_error(admin.post("/libraries", json={"name": "team  HANDBOOK"}), 409)


def test_a_non_ascii_name_goes_percent_encoded(rest):
    admin = rest.client(rest.admin().token)
    assert admin.post("/libraries", json={"name": "社内規程"}).status_code == 201
    admin.headers["X-Bunko-Library"] = quote("社内規程")
    uploaded = admin.post(
        "/upload", files={"file": ("規程.txt", "出張の日当は三千円。".encode(), "text/plain")}
    )
    assert uploaded.status_code == 201, uploaded.text
    assert [f["name"] for f in admin.get("/knowledge-bases").json()] == ["規程.txt"]


def test_a_mapped_folder_and_the_drop_folder_land_in_their_libraries(rest, tmp_path):
    (tmp_path / "drop").mkdir()
    runbooks = tmp_path / "runbooks"
    runbooks.mkdir()
    with watching(rest, tmp_path / "drop"):
        admin = rest.client(rest.admin().token)
        assert admin.post("/libraries", json={"name": "Runbooks"}).status_code == 201
        admin.headers["X-Bunko-Library"] = "Runbooks"
        saved = admin.post("/settings", json={"monitor_paths": [str(runbooks)]})
        assert saved.status_code == 200, saved.text
        (runbooks / "restart.md").write_text(
            "Restart the pump with the red switch.", encoding="utf-8"
        )
        (tmp_path / "drop" / "dropped.txt").write_text("Dropped for everyone.", encoding="utf-8")

        def names(library: str) -> set[str]:
            admin.headers["X-Bunko-Library"] = library
            return {
                f["originalName"]
                for f in admin.get("/knowledge-bases").json()
                if f["status"] == "completed"
            }

        assert wait_for(lambda: "restart.md" in names("Runbooks"))
        assert wait_for(lambda: "dropped.txt" in names("default"))  # the admins' library
        listed = {
            lib["name"]: lib["role"]
            for lib in rest.client(rest.admin().token).get("/libraries").json()
        }
        assert listed["default"] == "owner" and listed["Runbooks"] == "owner"


def test_deleting_a_library_takes_its_files_and_a_user_leaves_their_libraries(rest):
    owner, member = rest.new_user(), rest.new_user()
    library = owner.client.post("/libraries", json={"name": "Scratch"}).json()
    owner.client.put(
        f"/libraries/{library['id']}/members", json={"username": member.username, "role": "editor"}
    )
    owner.client.headers["X-Bunko-Library"] = library["id"]
    uploaded = owner.client.post("/upload", files={"file": ("tmp.txt", b"temporary", "text/plain")})
    wait_until_done(owner.client, uploaded.json()["id"])
    member.client.headers["X-Bunko-Library"] = library["id"]
    kept = member.client.post("/conversations", json={"title": "member's notes"}).json()["id"]
    assert member.client.get(f"/conversations/{kept}").status_code == 200
    assert rest.client(rest.admin().token).delete(f"/users/{member.id}").status_code == 200
    # their conversations in the shared library went with them
    assert rest.services.conversations.store.count(library["id"], member.id) == 0
    assert [
        m["username"] for m in owner.client.get(f"/libraries/{library['id']}/members").json()
    ] == [owner.username]
    assert owner.client.delete(f"/libraries/{library['id']}").status_code == 200
    assert list(rest.services.metadata.iter_documents(library["id"])) == []
    del owner.client.headers["X-Bunko-Library"]
    assert [lib["name"] for lib in owner.client.get("/libraries").json()] == [owner.username]


@pytest.mark.slow  # real `bunko ingest` and `bunko search` processes
def test_bunko_ingest_and_search_take_a_library_by_name(tmp_path):
    from tests.e2e.cli_harness import run

    data = tmp_path / "data"
    with serve(data, embedder="none") as rest:
        admin = rest.client(rest.admin().token)
        assert admin.post("/libraries", json={"name": "Field Notes"}).status_code == 201
    note = tmp_path / "heron.txt"
    note.write_text("The grey heron nests in the reeds by the mill pond.", encoding="utf-8")
    ingested = run(["ingest", str(note), "--library", "field notes"], data)
    assert "1 indexed" in ingested.stdout
    found = json.loads(
        run(["search", "heron reeds", "--library", "Field Notes", "--json"], data).stdout
    )
    assert [i["name"] for i in found["items"]] == ["heron.txt"]
    elsewhere = json.loads(run(["search", "heron reeds", "--json"], data).stdout)
    assert elsewhere["items"] == []  # the default library holds none of it
    unknown = run(["search", "heron", "--library", "Nowhere"], data, check=False)
    assert unknown.returncode == 2 and "no library or user named 'Nowhere'" in unknown.stderr
    with serve(data, embedder="none") as rest:
        admin = rest.client(rest.admin().token)
        admin.headers["X-Bunko-Library"] = "Field Notes"
        assert [f["originalName"] for f in admin.get("/knowledge-bases").json()] == ["heron.txt"]
