"""What an archive carries beyond each document's current state (docs/owners.md, "Moving a
library"): every document's earlier revisions, the answers people marked and the missing
list (with `--conversations`), and the passages' vectors (with `--vectors`), which an import
into a library searched by the same model takes instead of embedding again. Real data
folders on both sides, the export and import the CLI runs."""

from __future__ import annotations

import json
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from bunko.bootstrap.moving import moving_parts
from bunko.domain import DocumentStatus
from bunko.services.accounts.tokens import principal_for
from bunko.services.ingest import Upload
from bunko.services.moving import ArchiveError, export_library, import_library
from tests.conftest import make_services
from tests.e2e.library_move import (
    HANDBOOK,
    LEAVE,
    LIBRARY,
    PASSWORD,
    ask,
    history,
    make_library,
    top_hits,
    with_history,
)


def originals(services, workspace: str, path: str) -> list[bytes]:
    doc = services.library.at(workspace, path)
    revisions = sorted(
        services.metadata.list_revisions(workspace, doc.id), key=lambda r: r.revision
    )
    return [services.blobs.get(r.blob_key) for r in revisions]


def test_earlier_revisions_move_with_their_originals_and_twice_adds_none(tmp_path: Path):
    archive = tmp_path / "hb.zip"
    source = make_services(tmp_path / "source", embedder="none")
    try:
        workspace = with_history(source)
        chain, kept = history(source, workspace, LEAVE), originals(source, workspace, LEAVE)
        assert len(chain) == 4  # its first text, the two rewrites, and the text again
        hits = top_hits(source, workspace)
        report = export_library(moving_parts(source), workspace, archive)
    finally:
        source.close()
    assert report.revisions == 3
    with zipfile.ZipFile(archive) as zipped:
        lines = [json.loads(x) for x in zipped.read("documents.jsonl").splitlines()]
        manifest = json.loads(zipped.read("manifest.json"))
    leave = next(r for r in lines if r["path"] == LEAVE)
    assert [r["content_hash"] for r in leave["revisions"]] == chain[:-1]
    assert manifest["revisions"] == 3

    target = make_services(tmp_path / "target", embedder="none")
    try:
        target.accounts.auth.create_user("ada", PASSWORD, is_admin=True)
        moved = import_library(moving_parts(target), archive, wait_seconds=120)
        assert (moved.revisions_added, moved.pending, moved.failed) == (3, [], {})
        landed = target.accounts.libraries.workspace_named(LIBRARY)
        assert history(target, landed, LEAVE) == chain
        assert originals(target, landed, LEAVE) == kept
        leave_here = target.library.at(landed, LEAVE)
        assert leave_here.status is DocumentStatus.COMPLETED and leave_here.revision == 4
        assert top_hits(target, landed) == hits  # the current text is what is searched
        again = import_library(moving_parts(target), archive, wait_seconds=120)
        assert (again.added, again.revisions_added) == (0, 0)
        assert history(target, landed, LEAVE) == chain
    finally:
        target.close()


def test_an_import_stopped_inside_a_history_goes_on_from_where_it_was(tmp_path: Path):
    archive = tmp_path / "hb.zip"
    source = make_services(tmp_path / "source", embedder="none")
    try:
        workspace = with_history(source)
        chain = history(source, workspace, LEAVE)
        export_library(moving_parts(source), workspace, archive)
    finally:
        source.close()
    target = make_services(tmp_path / "target", embedder="none")
    try:
        target.accounts.auth.create_user("ada", PASSWORD, is_admin=True)
        made = target.accounts.libraries.create(
            principal_for(target.accounts.auth.users.get_user_by_username("ada")), LIBRARY
        )
        # what a stopped import left: the first revision only
        first = target.ingest.submit(
            Upload(made.id, HANDBOOK[LEAVE][0].encode(), path=LEAVE, source="upload")
        )
        target.library.wait_until_indexed(made.id, first.id, timeout=60)
        moved = import_library(moving_parts(target), archive, wait_seconds=120)
        assert moved.revisions_added == 2
        assert history(target, made.id, LEAVE) == chain
    finally:
        target.close()


def test_marked_answers_and_the_missing_list_move_with_conversations(tmp_path: Path):
    archive, plain = tmp_path / "hb.zip", tmp_path / "plain.zip"
    source = make_services(tmp_path / "source", embedder="none")
    try:
        workspace = make_library(source)
        grace, up = ask(source, workspace, "grace", "How long is parental leave?", found=True)
        source.answers.mark(grace, up.id, mark="up", comment="clear, thanks")
        ask(source, workspace, "grace", "Where is the bike shed?", found=False)
        lin, down = ask(source, workspace, "lin", "Parental leave for fathers?", found=True)
        source.answers.mark(lin, down.id, mark="down", comment="says nothing about fathers")
        ask(source, workspace, "ada", "A question nobody marked", found=True)  # stays behind
        export_library(moving_parts(source), workspace, plain)
        report = export_library(moving_parts(source), workspace, archive, conversations=True)
    finally:
        source.close()
    assert report.answers == 3
    with zipfile.ZipFile(plain) as zipped:
        assert "answers.jsonl" not in zipped.namelist()  # only with --conversations
    with zipfile.ZipFile(archive) as zipped:
        answers = {
            r["question"]: r for r in map(json.loads, zipped.read("answers.jsonl").splitlines())
        }
        raw = zipped.read("answers.jsonl")
    assert set(answers) == {
        "How long is parental leave?", "Where is the bike shed?", "Parental leave for fathers?",
    }  # fmt: skip
    assert answers["How long is parental leave?"]["asker"] == "grace"
    assert answers["How long is parental leave?"]["sources"][0]["path"] == LEAVE
    assert b"key:" not in raw and b"workspace:" not in raw  # no key or library id leaves

    target = make_services(tmp_path / "target", embedder="none")
    try:
        ada = target.accounts.auth.create_user("ada", PASSWORD, is_admin=True)
        target.accounts.auth.create_user("grace", PASSWORD)  # lin has no account here
        moved = import_library(moving_parts(target), archive, wait_seconds=120)
        assert moved.answers_added == 3
        landed = target.accounts.libraries.workspace_named(LIBRARY)
        owner = replace(principal_for(ada), workspace_id=landed)
        marked, total = target.answers.marked(owner, limit=10)
        assert total == 2
        by_question = {r.question: r for r in marked}
        kept = by_question["How long is parental leave?"]
        assert (kept.mark, kept.comment) == ("up", "clear, thanks")
        grace = target.accounts.auth.users.get_user_by_username("grace")
        assert kept.asker == grace.id and kept.marked_by == grace.id
        assert kept.sources[0]["documentId"] == target.library.at(landed, LEAVE).id
        assert by_question["Parental leave for fathers?"].mark == "down"
        missing = {r.question for r in target.answers.store.collected(landed, limit=10)}
        assert missing == {"Where is the bike shed?", "Parental leave for fathers?"}
        # grace can still mark her answer here: it is hers
        grace_here = replace(principal_for(grace), workspace_id=landed)
        assert target.answers.mark(grace_here, kept.id, mark="down") is not None
        again = import_library(moving_parts(target), archive, wait_seconds=120)
        assert again.answers_added == 0
        assert target.answers.marked(owner, limit=10)[1] == 2
    finally:
        target.close()


def test_a_library_that_does_not_collect_missing_questions_moves_without_them(tmp_path: Path):
    archive = tmp_path / "hb.zip"
    source = make_services(tmp_path / "source", embedder="none")
    try:
        workspace = make_library(source)
        grace, up = ask(source, workspace, "grace", "How long is parental leave?", found=True)
        source.answers.mark(grace, up.id, mark="up")
        ask(source, workspace, "grace", "Where is the bike shed?", found=False)  # collected
        ada = source.accounts.auth.users.get_user_by_username("ada")
        owner = replace(principal_for(ada), workspace_id=workspace)
        source.answers.change_settings(owner, collect_missing=False)  # then turned off
        export_library(moving_parts(source), workspace, archive, conversations=True)
    finally:
        source.close()
    target = make_services(tmp_path / "target", embedder="none")
    try:
        target.accounts.auth.create_user("ada", PASSWORD, is_admin=True)
        target.accounts.auth.create_user("grace", PASSWORD)
        moved = import_library(moving_parts(target), archive, wait_seconds=120)
        landed = target.accounts.libraries.workspace_named(LIBRARY)
        assert target.answers.answer_settings(landed).collect_missing is False
        assert moved.answers_added == 1  # the mark; not the question the library collected
        assert target.answers.store.collected(landed, limit=10) == []
    finally:
        target.close()


def test_a_hostile_answer_or_vector_line_is_refused_with_nothing_written(tmp_path: Path):
    archive = tmp_path / "hb.zip"
    source = make_services(tmp_path / "source", embedder="none")
    try:
        workspace = make_library(source)
        export_library(moving_parts(source), workspace, archive)
    finally:
        source.close()
    bad_lines = {
        "answers.jsonl": {"id": "a", "question": "q", "answer": "a", "mark": "sideways"},
        "vectors.jsonl": {"path": "x", "content": "t", "model": "m", "vector": ["1"]},
    }
    bad_revision = tmp_path / "revision.zip"
    for name, line in [*bad_lines.items(), ("documents.jsonl", None)]:
        hostile = tmp_path / f"hostile-{name}.zip" if line else bad_revision
        with zipfile.ZipFile(archive) as given, zipfile.ZipFile(hostile, "w") as out:
            for info in given.infolist():
                data = given.read(info)
                if line is None and info.filename == "documents.jsonl":
                    first, *rest = data.splitlines()
                    record = json.loads(first)
                    record["revisions"] = [{"content_hash": "0" * 64, "original": "../x"}]
                    data = b"\n".join([json.dumps(record).encode(), *rest])
                out.writestr(info, data)
            if line is not None:
                out.writestr(name, json.dumps(line))
        target = make_services(tmp_path / f"target-{name}", embedder="none")
        try:
            with pytest.raises(ArchiveError):
                import_library(moving_parts(target), hostile)
            assert target.accounts.libraries.store.list_libraries() == []
        finally:
            target.close()


@pytest.mark.slow  # the packaged model, on both sides
def test_vectors_in_an_archive_are_taken_by_the_same_model_and_not_by_another(tmp_path: Path):
    archive = tmp_path / "hb.zip"
    source = make_services(tmp_path / "source", embedder="use")
    try:
        workspace = make_library(source)
        hits = top_hits(source, workspace)
        chunks = source.library.count_chunks(workspace)
        report = export_library(moving_parts(source), workspace, archive, vectors=True)
    finally:
        source.close()
    assert report.vectors == chunks
    target = make_services(tmp_path / "target", embedder="use")
    try:
        target.accounts.auth.create_user("ada", PASSWORD, is_admin=True)
        moved = import_library(moving_parts(target), archive, wait_seconds=300)
        assert (moved.indexed, moved.vectors_reused, moved.vectors_embedded) == (7, chunks, 0)
        assert moved.vectors_unused is None
        landed = target.accounts.libraries.workspace_named(LIBRARY)
        assert top_hits(target, landed) == hits
        assert target.pipeline.known is None  # the pipeline embeds again after the import
    finally:
        target.close()
    other = make_services(tmp_path / "other", embedder="none")
    try:
        moved = import_library(moving_parts(other), archive, wait_seconds=300)
        assert moved.vectors_reused == 0 and "no model here" in (moved.vectors_unused or "")
    finally:
        other.close()


def test_an_archive_of_version_1_still_imports(tmp_path: Path):
    archive, older = tmp_path / "hb.zip", tmp_path / "v1.zip"
    source = make_services(tmp_path / "source", embedder="none")
    try:
        workspace = make_library(source)
        export_library(moving_parts(source), workspace, archive, revisions=False)
    finally:
        source.close()
    with zipfile.ZipFile(archive) as given, zipfile.ZipFile(older, "w") as out:
        for info in given.infolist():
            data = given.read(info)
            if info.filename == "manifest.json":  # as the first format wrote it
                manifest = json.loads(data)
                manifest["version"] = 1
                for key in ("revisions", "answers"):
                    manifest.pop(key)
                data = json.dumps(manifest).encode()
            out.writestr(info, data)
    target = make_services(tmp_path / "target", embedder="none")
    try:
        moved = import_library(moving_parts(target), older, wait_seconds=120)
        assert (moved.added, moved.indexed, moved.revisions_added) == (7, 7, 0)
    finally:
        target.close()
