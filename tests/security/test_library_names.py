"""Issue 46, findings 4, 5 and the library half of 6: names that cannot deceive.

4. Personal libraries are not in the library store, so a lookup by id fell through to a
   lookup by name, and names could be UUIDs: an owner named a library with a victim's
   personal id (it appears in original links), added the victim, and the victim's upload with
   `X-Bunko-Library: <own id>` landed in the attacker's library.
5. Names with Cyrillic lookalikes, zero-width or blank characters were accepted, and a library
   could take an existing username, so `bunko ingest --library <username>` put a file in
   another person's library.
6. Nothing bounded how many libraries one user made (120 in 1.8 s).

Replayed over a real server and the real `bunko` command."""

from __future__ import annotations

import uuid
from urllib.parse import parse_qs, urlsplit

import pytest

from bunko.domain.libraries import Library
from tests.e2e.rest_harness import assert_error, serve, wait_until_done

# The settings of the module's live server (the `rest` fixture, tests/conftest.py).
REST_SETTINGS = {"libraries_per_user": 5}


def personal_id(user) -> str:
    """The user's personal library id, as an original link shows it to anyone it is sent to."""
    sent = user.client.post("/upload", files={"file": ("a.txt", b"A note.", "text/plain")})
    wait_until_done(user.client, sent.json()["id"])
    url = user.client.get(f"/knowledge-bases/{sent.json()['id']}/original-link").json()["url"]
    return parse_qs(urlsplit(url).query)["workspace"][0]


def test_a_library_named_with_a_victims_id_never_takes_their_uploads(rest):
    attacker, victim = rest.new_user(), rest.new_user()
    victims_id = personal_id(victim)
    for shaped in (
        victims_id,
        victims_id.upper(),
        victims_id.replace("-", ""),
        f"{{{victims_id}}}",
    ):
        body = assert_error(attacker.client.post("/libraries", json={"name": shaped}), 400)
        assert "UUID" in body["message"]
    # The victim names their own library by id: the upload is theirs, wherever names point.
    victim.client.headers["X-Bunko-Library"] = victims_id
    sent = victim.client.post(
        "/upload", files={"file": ("diary.txt", b"Dear diary.", "text/plain")}
    )
    assert sent.status_code == 201, sent.text
    del victim.client.headers["X-Bunko-Library"]
    assert "diary.txt" in {f["name"] for f in victim.client.get("/knowledge-bases").json()}


def test_a_uuid_is_only_ever_an_id(rest):
    """A library already named with a victim's id (kept from before the rule, so put in the
    store directly) still never takes the victim's uploads, nor is found by that name."""
    attacker, victim = rest.new_user(), rest.new_user()
    victims_id = personal_id(victim)
    squatter = Library(id=str(uuid.uuid4()), name=victims_id, created_by=attacker.id)
    rest.services.accounts.libraries.store.add_library(squatter, owner=attacker.id)
    added = attacker.client.put(
        f"/libraries/{squatter.id}/members", json={"username": victim.username, "role": "editor"}
    )
    assert added.status_code == 200, added.text
    victim.client.headers["X-Bunko-Library"] = victims_id
    sent = victim.client.post("/upload", files={"file": ("plans.txt", b"My plans.", "text/plain")})
    assert sent.status_code == 201, sent.text
    del victim.client.headers["X-Bunko-Library"]
    assert "plans.txt" in {f["name"] for f in victim.client.get("/knowledge-bases").json()}
    attacker.client.headers["X-Bunko-Library"] = squatter.id
    assert "plans.txt" not in {f["name"] for f in attacker.client.get("/knowledge-bases").json()}
    attacker.client.headers["X-Bunko-Library"] = victims_id  # the name, which is a UUID
    assert_error(attacker.client.get("/knowledge-bases"), 404)
    del attacker.client.headers["X-Bunko-Library"]


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("Te\u200bam", "U+200B"),  # zero-width space
        ("Te\u2060am", "U+2060"),  # word joiner
        ("Team\u00ad", "U+00AD"),  # soft hyphen
        ("\u2800", "blank"),  # Braille blank: shows as nothing
        ("Team\u3164", "not allowed"),  # Hangul filler
        ("Te\u202eam", "bidi"),
    ],
)
def test_invisible_and_blank_characters_are_refused(rest, name, reason):
    owner = rest.new_user()
    body = assert_error(owner.client.post("/libraries", json={"name": name}), 400)
    assert reason in body["message"], body


def test_lookalike_names_are_one_name(rest):
    owner, other = rest.new_user(), rest.new_user()
    made = owner.client.post("/libraries", json={"name": "Team Docs"})
    assert made.status_code == 201, made.text
    for lookalike in ("Теаm Docs", "Team Dосs", "Ｔｅａｍ　Ｄｏｃｓ", "TEAM  docs", "Téam Docs"):
        assert_error(other.client.post("/libraries", json={"name": lookalike}), 409)
    # Names are kept in their PRECIS form: fullwidth letters and odd spaces normalised.
    kept = owner.client.post("/libraries", json={"name": "  Ｆｉｅｌｄ\u3000Notes "}).json()
    assert kept["name"] == "Field Notes"
    assert owner.client.post("/libraries", json={"name": "社内規程"}).status_code == 201


def test_a_library_may_not_take_a_username(rest, tmp_path):
    owner, person = rest.new_user(), rest.new_user()
    assert_error(owner.client.post("/libraries", json={"name": person.username}), 409)
    assert_error(owner.client.post("/libraries", json={"name": person.username.upper()}), 409)
    lookalike = person.username.replace("e", "е")  # a Cyrillic е
    assert_error(owner.client.post("/libraries", json={"name": lookalike}), 409)


@pytest.mark.slow  # a real `bunko ingest` process
def test_bunko_ingest_with_a_username_goes_to_that_persons_library(tmp_path):
    from tests.e2e.cli_harness import run

    data = tmp_path / "data"
    with serve(data) as rest:
        attacker, victim = rest.new_user(), rest.new_user()
        taken = attacker.client.post("/libraries", json={"name": victim.username})
        assert taken.status_code == 409, taken.text
        victim_token = victim.token
    note = tmp_path / "memo.txt"
    note.write_text("A memo for the victim's own library.", encoding="utf-8")
    run(["ingest", str(note), "--library", victim.username], data)
    with serve(data) as rest:
        client = rest.client(victim_token)
        assert [f["originalName"] for f in client.get("/knowledge-bases").json()] == ["memo.txt"]


def test_libraries_per_user_are_bounded(rest):
    owner = rest.new_user()
    for i in range(5):
        assert owner.client.post("/libraries", json={"name": f"shelf {i}"}).status_code == 201
    refused = owner.client.post("/libraries", json={"name": "shelf 5"})
    body = assert_error(refused, 429)
    assert refused.headers["retry-after"] and "5 libraries" in body["message"]
    # Another user is not held by it.
    assert rest.new_user().client.post("/libraries", json={"name": "shelf x"}).status_code == 201


def test_a_members_token_reads_an_original_in_the_library_the_header_names(rest):
    """Finding 10: the token path of /original ignored X-Bunko-Library (a viewer got 404)."""
    owner, viewer, outsider = rest.new_user(), rest.new_user(), rest.new_user()
    shelf = owner.client.post("/libraries", json={"name": "Originals shelf"}).json()["id"]
    added = owner.client.put(
        f"/libraries/{shelf}/members", json={"username": viewer.username, "role": "viewer"}
    )
    assert added.status_code == 200, added.text
    header = {"X-Bunko-Library": shelf}
    sent = owner.client.post(
        "/upload",
        files={"file": ("map.txt", b"The old harbour map.", "text/plain")},
        headers=header,
    )
    file_id = sent.json()["id"]
    owner.client.headers["X-Bunko-Library"] = shelf
    wait_until_done(owner.client, file_id)
    del owner.client.headers["X-Bunko-Library"]
    original = viewer.client.get(f"/knowledge-bases/{file_id}/original", headers=header)
    assert original.status_code == 200 and original.content == b"The old harbour map."
    assert_error(outsider.client.get(f"/knowledge-bases/{file_id}/original", headers=header), 404)
    assert_error(viewer.client.get(f"/knowledge-bases/{file_id}/original"), 404)  # own library


def test_a_new_username_may_not_take_a_librarys_name(rest):
    owner = rest.new_user()
    name = f"lighthouse{uuid.uuid4().hex[:6]}"
    assert owner.client.post("/libraries", json={"name": name}).status_code == 201
    with rest.client() as anonymous:
        body = {"username": name.upper(), "password": "correct horse battery"}
        assert_error(anonymous.post("/auth/register", json=body), 409)
