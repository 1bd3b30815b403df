"""Issue 46, finding 7, on a real server: a library always has an owner. Deleting its last
owner passes it to its first editor, else to the admin who deletes them; deleted by the
operator with nobody to take it, it goes with its files. Admins list and delete any library;
two owners leaving at once cannot both succeed."""

from __future__ import annotations

import threading

from tests.e2e.rest_harness import User, assert_error


def _library(maker: User, **members: User) -> str:
    created = maker.client.post("/libraries", json={"name": f"lib-{maker.username}"})
    assert created.status_code == 201, created.text
    library_id = created.json()["id"]
    for role, person in members.items():
        added = maker.client.put(f"/libraries/{library_id}/members",
                                 json={"username": person.username, "role": role.rstrip("0123456789")})  # fmt: skip
        assert added.status_code == 200, added.text
    return library_id


def _roles(client, library_id: str) -> dict[str, str]:
    return {m["username"]: m["role"] for m in client.get(f"/libraries/{library_id}/members").json()}


def test_the_last_owners_deletion_passes_the_library_to_an_editor(rest):
    admin, owner, editor, viewer = rest.admin(), rest.new_user(), rest.new_user(), rest.new_user()
    library_id = _library(owner, viewer=viewer, editor=editor)
    assert admin.client.delete(f"/users/{owner.id}").status_code == 200
    assert _roles(editor.client, library_id) == {editor.username: "owner",
                                                 viewer.username: "viewer"}  # fmt: skip
    # the new owner manages it
    changed = editor.client.put(f"/libraries/{library_id}/members",
                                json={"username": viewer.username, "role": "editor"})  # fmt: skip
    assert changed.status_code == 200, changed.text


def test_with_only_viewers_left_the_deleting_admin_takes_it(rest):
    admin, owner, viewer = rest.admin(), rest.new_user(), rest.new_user()
    library_id = _library(owner, viewer=viewer)
    assert admin.client.delete(f"/users/{owner.id}").status_code == 200
    assert _roles(admin.client, library_id) == {viewer.username: "viewer", "admin": "owner"}
    listed = {lib["id"]: lib["role"] for lib in admin.client.get("/libraries").json()}
    assert listed[library_id] == "owner"


def test_deleted_by_the_operator_with_nobody_to_take_it_the_library_goes(rest):
    admin, owner, viewer = rest.admin(), rest.new_user(), rest.new_user()
    library_id = _library(owner, viewer=viewer)
    rest.services.accounts.users.delete_user(owner.id)  # `bunko users delete`: no admin acts
    assert library_id not in {lib["id"] for lib in admin.client.get("/libraries/all").json()}
    assert [lib["personal"] for lib in viewer.client.get("/libraries").json()] == [True]


def test_admins_list_and_delete_any_library(rest):
    admin, owner, stranger = rest.admin(), rest.new_user(), rest.new_user()
    library_id = _library(owner)
    everything = admin.client.get("/libraries/all")
    assert everything.status_code == 200
    assert library_id in {lib["id"] for lib in everything.json()}
    assert_error(stranger.client.get("/libraries/all"), 403)
    assert_error(stranger.client.delete(f"/libraries/{library_id}"), 404)
    assert admin.client.delete(f"/libraries/{library_id}").status_code == 200
    assert [lib["personal"] for lib in owner.client.get("/libraries").json()] == [True]


def test_two_owners_leaving_at_once_cannot_both_succeed(rest):
    for _ in range(3):
        first, second = rest.new_user(), rest.new_user()
        library_id = _library(first, owner=second)
        start, answers = threading.Barrier(2), []

        def leave(person: User, library_id=library_id, start=start, answers=answers) -> None:
            start.wait()
            answers.append(person.client.delete(f"/libraries/{library_id}/members/{person.id}"))

        threads = [threading.Thread(target=leave, args=(p,)) for p in (first, second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(a.status_code for a in answers) == [200, 409]
        members = rest.services.accounts.libraries.store.members(library_id)
        assert [m.role for m in members] == ["owner"]
