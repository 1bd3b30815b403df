"""`bunko export` and `bunko import` as real processes between two data folders, with the
packaged multilingual model on both sides: the library arrives whole (documents, members by
username, settings, sources without their secrets, conversations), is searched alike, and a
second import adds nothing. Both leave an event in their side's audit trail."""

from __future__ import annotations

import json
import zipfile

import pytest

from bunko.domain.audit import AuditQuery
from bunko.domain.sources import CLI, DROP_FOLDER
from bunko.services.accounts import LOCAL_PRINCIPAL
from bunko.services.ingest import Upload
from tests.conftest import make_services
from tests.e2e.cli_harness import run
from tests.e2e.library_move import LIBRARY, PASSWORD, documents, make_library, top_hits

pytestmark = pytest.mark.slow  # `bunko` processes that load the model
USE = {"BUNKO_EMBEDDER": "use", "BUNKO_EMBED_THREADS": "1"}
# Sources refuse credentials in a URL (its user part, a query value named like one), so the
# source's settings travel as they are.
LONG = "# History\n\n" + "\n\n".join(
    f"Chapter {n}. In year {1990 + n} the company opened office number {n} and hired "
    f"{n * 3} people to build harbour software for the port authority." * 6
    for n in range(1, 6)
)
WIKI_URL = "http://127.0.0.1:9/handbook/?page=2"


def audit_actions(data) -> list[tuple[str, str, str | None]]:
    services = make_services(data, embedder="none")
    try:
        page = services.audit.read(LOCAL_PRINCIPAL, AuditQuery(limit=1000))
        return [(e.action, e.outcome, e.user_id) for e in page.events if e.door == "cli"]
    finally:
        services.close()


def test_a_library_moves_between_data_folders_and_a_second_import_adds_nothing(tmp_path):
    source, target, archive = tmp_path / "source", tmp_path / "target", tmp_path / "hb.zip"
    services = make_services(source, embedder="use")
    try:
        workspace = make_library(services)
        wiki = services.sources.add(workspace, "web", "wiki", {"url": WIKI_URL}, operator=True)
        page = services.ingest.submit(
            Upload(workspace, b"# Wiki\n\nThe glossary of harbour terms.", path="wiki/terms.md",
                   source=wiki.source)
        )  # fmt: skip
        services.library.wait_until_indexed(workspace, page.id, timeout=60)
        # A long file whose passages were then edited and deleted by hand (TelosDB's items)
        long = services.ingest.submit(Upload(workspace, LONG.encode(), path="handbook/history.md"))
        services.library.wait_until_indexed(workspace, long.id, timeout=60)
        first, second, *_ = services.library.chunks(workspace, long.id)
        services.items.update_item(workspace, first.id, "The founders met on a ferry in 1998.")
        services.items.delete_item(workspace, second.id)
        passages = [c.content for c in services.library.chunks(workspace, long.id)]
        ada = services.accounts.auth.users.get_user_by_username("ada")
        chat = services.conversations.create(workspace, ada.id, "Leave question")
        services.conversations.record_turn(
            workspace, ada.id, chat.id, question="How long is parental leave?",
            answer="Sixteen weeks.", sources=[{"fileName": "leave.md", "documentId":
            services.library.at(workspace, "policies/leave.md").id, "chunkIndex": 0}],
        )  # fmt: skip
        before, hits_before = documents(services, workspace), top_hits(services, workspace)
    finally:
        services.close()

    exported = run(["export", LIBRARY, str(archive), "--conversations"], source, env=USE)
    assert f"exported library {LIBRARY!r}: 9 documents, 1 conversations" in exported.stdout
    with zipfile.ZipFile(archive) as zipped:
        raw = b"".join(zipped.read(name) for name in zipped.namelist())
        manifest = json.loads(zipped.read("manifest.json"))
    assert b"$argon2" not in raw  # never a password hash
    assert manifest["sources"][0]["settings"]["url"] == WIKI_URL
    assert sorted((m["username"], m["role"]) for m in manifest["members"]) == [
        ("ada", "owner"), ("grace", "editor"), ("lin", "viewer"),
    ]  # fmt: skip
    assert (
        manifest["vectors"] is None and "vectors.jsonl" not in zipfile.ZipFile(archive).namelist()
    )

    # The target knows ada and grace, not lin.
    services = make_services(target, embedder="none")
    services.accounts.auth.create_user("ada", PASSWORD, is_admin=True)
    services.accounts.auth.create_user("grace", PASSWORD)
    services.close()
    imported = run(["import", str(archive)], target, env=USE)
    assert "passages edited by hand restored: 1 edited, 1 deleted" in imported.stdout
    assert "member 'lin' has no account here: not added" in imported.stderr
    assert f"imported into library {LIBRARY!r} (made now): 9 added" in imported.stdout
    assert "members added: ada, grace" in imported.stdout
    assert "indexing" in imported.stderr  # the progress bar

    services = make_services(target, embedder="use")
    try:
        moved = services.accounts.libraries.workspace_named(LIBRARY)
        connector = services.sources.list(moved)[0]
        assert (connector.name, connector.settings["url"]) == (
            "wiki", "http://127.0.0.1:9/handbook/?page=2"
        )  # fmt: skip
        # the connector's document is its new record's (the same source by name)
        hashed, *rest, status = before["wiki/terms.md"]
        assert connector.source != wiki.source
        assert documents(services, moved) == {
            **before,
            "wiki/terms.md": (hashed, *rest[:2], connector.source, status),
        }
        assert top_hits(services, moved) == hits_before
        roles = {u.username: r for u, r in services.accounts.libraries.members(
            _principal(services, "ada"), moved)}  # fmt: skip
        assert roles == {"ada": "owner", "grace": "editor"}
        assert services.accounts.workspace_settings.search_defaults(moved) == (7, 0.25)
        ada = services.accounts.auth.users.get_user_by_username("ada")
        [chat] = services.conversations.list(moved, ada.id, limit=10)
        [_question, answer] = services.conversations.get(moved, ada.id, chat.id).messages
        assert (chat.title, answer.content) == ("Leave question", "Sixteen weeks.")
        # the citation follows its document to its new id
        assert answer.sources[0]["documentId"] == services.library.at(moved, "policies/leave.md").id
        history = services.library.at(moved, "handbook/history.md")
        assert [c.content for c in services.library.chunks(moved, history.id)] == passages
        assert history.chunk_count == len(passages)
        documents_after_first = services.library.count_documents(moved)
    finally:
        services.close()

    again = run(["import", str(archive)], target, env=USE)
    assert "0 added, 9 already here" in again.stdout
    services = make_services(target, embedder="none")
    try:
        assert services.library.count_documents(moved) == documents_after_first == 9
        ada = services.accounts.auth.users.get_user_by_username("ada")
        assert len(services.conversations.list(moved, ada.id, limit=10)) == 1
        assert len(services.sources.list(moved)) == 1
    finally:
        services.close()
    assert audit_actions(source) == [("cli:export", "ok", "operator")]
    assert audit_actions(target) == [("cli:import", "ok", "operator")] * 2


def _principal(services, username: str):
    from bunko.services.accounts.tokens import principal_for

    return principal_for(services.accounts.auth.users.get_user_by_username(username))


def test_an_interrupted_import_goes_on_where_it_stopped(tmp_path):
    """An import stopped after some documents (here: the target killed mid-way is stood in
    for by an import of a cut-down archive first) goes on; the documents it wrote stay one."""
    source, target = tmp_path / "source", tmp_path / "target"
    archive, part = tmp_path / "hb.zip", tmp_path / "part.zip"
    services = make_services(source, embedder="none")
    try:
        workspace = make_library(services)
        # a file the exporting machine's drop folder put there
        dropped = Upload(workspace, b"Dropped minutes of the board.", path="drop/minutes.txt",
                         source=DROP_FOLDER)  # fmt: skip
        services.library.wait_until_indexed(
            workspace, services.ingest.submit(dropped).id, timeout=60
        )
    finally:
        services.close()
    run(["export", LIBRARY, str(archive)], source)
    _first_documents(archive, part, keep=3)
    # A target whose people may upload two files at once and one a minute: the operator's
    # import is not theirs, and is not paced so (its documents keep their source, "upload").
    paced = {"BUNKO_UPLOAD_BURST": "2", "BUNKO_UPLOAD_RATE_PER_MINUTE": "1"}
    first = run(["import", str(part)], target, env=paced)
    assert "3 added" in first.stdout
    rest = run(["import", str(archive)], target, env=paced)
    assert "5 added, 3 already here" in rest.stdout and "(made now)" not in rest.stdout
    services = make_services(target, embedder="none")
    try:
        moved = services.accounts.libraries.workspace_named(LIBRARY)
        assert services.library.count_documents(moved) == 8
        assert all(d.revision == 1 for d in services.library.documents(moved))
        # The dropped file is the operator's here: this side's drop folder, which never
        # held it, does not delete it when it looks (as it does at every start).
        assert services.library.at(moved, "drop/minutes.txt").source == CLI
        assert services.ingest.mirror(moved, DROP_FOLDER, []).deleted == []
        assert services.library.count_documents(moved) == 8
    finally:
        services.close()


def _first_documents(archive, out, *, keep: int) -> None:
    """A copy of `archive` holding only its first `keep` documents (a valid archive)."""
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(out, "w") as dst:
        lines = src.read("documents.jsonl").decode().splitlines()[:keep]
        manifest = json.loads(src.read("manifest.json"))
        manifest["documents"] = keep
        kept = {json.loads(line)["original"] for line in lines}
        for name in kept:
            dst.writestr(name, src.read(name))
        dst.writestr("documents.jsonl", "\n".join(lines) + "\n")
        dst.writestr("manifest.json", json.dumps(manifest))
