"""The drop folder, watched for real (watchfiles): add, change, delete, categories, catch-up."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.domain import DocumentStatus
from bunko.drops.folder_watcher import DropFolderWatcher, WatchedFolder
from bunko.ports import SearchFilter
from bunko.services.ingest import Upload
from tests.waiting import wait_for


@pytest.fixture
def watched_drop(services, tmp_path):
    folder = tmp_path / "drop"
    watcher = DropFolderWatcher(services.ingest, WS, [WatchedFolder(folder)])
    yield folder, watcher
    watcher.stop()


def doc_at(services, path):
    return services.metadata.get_document_by_path(WS, path)


def completed(services, path, revision=1):
    doc = doc_at(services, path)
    return (
        doc if doc and doc.status is DocumentStatus.COMPLETED and doc.revision == revision else None
    )


def test_add_change_delete(services, watched_drop):
    folder, watcher = watched_drop
    watcher.start()
    (folder / "notes.txt").write_text("The first version mentions lighthouses.", encoding="utf-8")
    doc = wait_for(lambda: completed(services, "notes.txt"))
    assert doc.source == "drop" and doc.category is None

    (folder / "notes.txt").write_text("The second version mentions windmills.", encoding="utf-8")
    doc = wait_for(lambda: completed(services, "notes.txt", revision=2))
    assert "windmills" in services.metadata.get_chunks(WS, doc.id)[0].content

    (folder / "notes.txt").unlink()
    wait_for(lambda: doc_at(services, "notes.txt") is None)
    assert services.index.count(WS) == 0


def test_subfolder_is_the_category_and_hidden_files_are_ignored(services, watched_drop):
    folder, watcher = watched_drop
    watcher.start()
    (folder / "manuals").mkdir()
    (folder / "manuals" / "guide.md").write_text(
        "# Guide\n\nTurn it off and on again.", encoding="utf-8"
    )
    (folder / ".hidden.txt").write_text("secret", encoding="utf-8")
    (folder / "download.part").write_text("partial", encoding="utf-8")
    doc = wait_for(lambda: completed(services, "manuals/guide.md"))
    assert doc.category == "manuals"
    time.sleep(1)
    assert doc_at(services, ".hidden.txt") is None
    assert doc_at(services, "download.part") is None


def test_deleting_a_subfolder_removes_its_documents(services, watched_drop):
    folder, watcher = watched_drop
    (folder / "old").mkdir(parents=True)
    for i in range(3):
        (folder / "old" / f"{i}.txt").write_text(f"old file {i}", encoding="utf-8")
    watcher.start()
    wait_for(lambda: all(completed(services, f"old/{i}.txt") for i in range(3)))
    for f in (folder / "old").iterdir():
        f.unlink()
    (folder / "old").rmdir()
    wait_for(lambda: services.metadata.count_documents(WS) == 0)


def test_catch_up_on_start(services, watched_drop, tmp_path):
    folder, watcher = watched_drop
    folder.mkdir(exist_ok=True)
    (folder / "kept.txt").write_text("kept while stopped", encoding="utf-8")
    (folder / "gone.txt").write_text("removed while stopped", encoding="utf-8")
    watcher.sync()
    assert services.queue.join(timeout=60)
    (folder / "gone.txt").unlink()
    watcher.start()  # starts with a catch-up pass
    assert services.queue.join(timeout=60)
    assert completed(services, "kept.txt")
    assert doc_at(services, "gone.txt") is None


def test_uploaded_documents_are_never_removed_by_the_watcher(services, watched_drop):
    _folder, watcher = watched_drop
    services.ingest.submit(Upload(WS, b"from the API", path="uploaded.txt", source="upload"))
    watcher.start()
    assert services.queue.join(timeout=60)
    time.sleep(0.5)
    assert doc_at(services, "uploaded.txt") is not None


def test_unreadable_dropped_file_fails_without_stopping_the_watcher(services, watched_drop):
    folder, watcher = watched_drop
    watcher.start()
    Path(folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    doc = wait_for(
        lambda: (d := doc_at(services, "broken.pdf")) and d.status is DocumentStatus.FAILED and d
    )
    assert "pdf" in doc.error.lower()
    (folder / "fine.txt").write_text("still watching", encoding="utf-8")
    wait_for(lambda: completed(services, "fine.txt"))


def test_a_symlink_out_of_the_drop_folder_is_not_followed(services, watched_drop, tmp_path):
    """Issue 33: a link in the drop folder to a file or folder outside it indexes nothing,
    whether the catch-up at start or the live watch sees it."""
    folder, watcher = watched_drop
    outside = tmp_path / "outside"
    (outside / "private").mkdir(parents=True)
    (outside / "secret.txt").write_text("the payroll password is hunter2", encoding="utf-8")
    (outside / "private" / "keys.txt").write_text("ssh private key material", encoding="utf-8")
    folder.mkdir(exist_ok=True)
    (folder / "linked-secret.txt").symlink_to(outside / "secret.txt")
    (folder / "linked-dir").symlink_to(outside / "private", target_is_directory=True)
    watcher.start()  # the catch-up sees the first two links
    (folder / "late-secret.txt").symlink_to(outside / "secret.txt")  # the live watch, this one
    (folder / "own.txt").write_text("A harbour note about lighthouses.", encoding="utf-8")
    # Written after the links, so it is seen after them (in their batch, or a later one).
    wait_for(lambda: completed(services, "own.txt"))
    paths = {d.path for d in services.metadata.iter_documents(WS)}
    assert paths == {"own.txt"}
    for words in ("hunter2", "ssh private key"):
        assert not services.index.keyword_search(words, SearchFilter(WS), 5)


def test_a_name_written_in_nfd_is_one_document_across_catch_ups(services, watched_drop):
    """macOS writes names decomposed (NFD); the document's path is NFC. A catch-up must match
    them, not delete the document and add it again."""
    folder, watcher = watched_drop
    folder.mkdir(parents=True, exist_ok=True)
    nfd = "Cafe\u0301 notes.txt"  # é as e + combining acute
    (folder / nfd).write_text("Notes on the café by the harbour.", encoding="utf-8")
    watcher.start()
    doc = wait_for(lambda: completed(services, "Caf\u00e9 notes.txt"))
    watcher.sync()  # a catch-up, as at the next start
    again = doc_at(services, "Caf\u00e9 notes.txt")
    assert (again.id, again.revision) == (doc.id, doc.revision)
    (folder / nfd).unlink()
    wait_for(lambda: doc_at(services, "Caf\u00e9 notes.txt") is None)


def test_a_file_renamed_in_the_folder_keeps_its_document_and_history(services, watched_drop):
    """Issue 48: a rename is a delete and an add in one batch of the watch; the bytes at the
    new path are the gone file's, so its document (id, revisions, metadata) follows it."""
    folder, watcher = watched_drop
    watcher.start()
    (folder / "plan.txt").write_text("Plan, first draft: harbours.", encoding="utf-8")
    first = wait_for(lambda: completed(services, "plan.txt"))
    (folder / "plan.txt").write_text("Plan, second draft: harbours.", encoding="utf-8")
    wait_for(lambda: completed(services, "plan.txt", revision=2))
    services.ingest.set_metadata(WS, first.id, {"owner": "ada"})
    (folder / "final").mkdir()
    (folder / "plan.txt").rename(folder / "final" / "plan.txt")
    # the mirror moves the document first; the file's take then gives it its sub-folder's
    # category (the sub-folder it now sits in): wait for both
    moved = wait_for(
        lambda: (
            (d := completed(services, "final/plan.txt", revision=2)) and d.category == "final" and d
        )
    )
    assert moved.id == first.id and moved.metadata == {"owner": "ada"}
    assert doc_at(services, "plan.txt") is None
    revisions = services.metadata.list_revisions(WS, first.id)
    assert [r.revision for r in revisions] == [1, 2]


def test_a_file_renamed_while_stopped_keeps_its_document(services, watched_drop):
    folder, watcher = watched_drop
    folder.mkdir(exist_ok=True)
    (folder / "a.txt").write_text("Moved while nobody watched.", encoding="utf-8")
    watcher.sync()
    assert services.queue.join(timeout=60)
    doc = completed(services, "a.txt")
    (folder / "a.txt").rename(folder / "b.txt")
    watcher.start()  # its catch-up mirrors before it takes the files
    assert services.queue.join(timeout=60)
    moved = completed(services, "b.txt")
    assert moved is not None and moved.id == doc.id
    assert doc_at(services, "a.txt") is None


def test_a_file_uploaded_by_hand_survives_the_folders_deletes(services, watched_drop):
    """A hand upload in the folder's library, at a path the folder also drops to, and in a
    sub-folder that is then deleted: the folder's deletes take only what it dropped."""
    folder, watcher = watched_drop
    hand = services.ingest.submit(
        Upload(WS, b"Typed by hand about ferries.", path="team/hand.txt", source="upload")
    )
    watcher.start()
    (folder / "team").mkdir()
    (folder / "team" / "hand.txt").write_text("A dropped copy about ferries.", encoding="utf-8")
    (folder / "team" / "dropped.txt").write_text("Dropped about tides.", encoding="utf-8")
    wait_for(lambda: completed(services, "team/dropped.txt"))
    wait_for(lambda: completed(services, "team/hand.txt", revision=2))
    for f in (folder / "team").iterdir():
        f.unlink()
    (folder / "team").rmdir()
    wait_for(lambda: doc_at(services, "team/dropped.txt") is None)
    watcher.sync()  # and the next start's catch-up
    kept = doc_at(services, "team/hand.txt")
    assert kept is not None and (kept.id, kept.source) == (hand.id, "upload")


def test_a_renamed_sub_folder_keeps_its_files_documents(services, watched_drop):
    folder, watcher = watched_drop
    (folder / "drafts").mkdir(parents=True)
    for i in range(3):
        (folder / "drafts" / f"{i}.txt").write_text(f"Draft {i} about canals.", encoding="utf-8")
    watcher.start()
    before = {i: wait_for(lambda i=i: completed(services, f"drafts/{i}.txt")).id for i in range(3)}
    (folder / "drafts").rename(folder / "final")
    after = {i: wait_for(lambda i=i: completed(services, f"final/{i}.txt")).id for i in range(3)}
    assert after == before
    assert services.metadata.count_documents(WS) == 3
