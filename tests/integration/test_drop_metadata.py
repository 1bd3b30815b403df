"""Metadata for dropped files (issue 36): `<file>.metadata.json` sidecars in Amazon Bedrock
Knowledge Bases' format and Markdown front matter, through the real folder monitor and
watcher (watchfiles) on a real temp folder and the embedded stores. Each test waits for the
state it expects (or for the warning that says why it will not come), never for a time."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.domain import DocumentStatus
from bunko.domain.metadata import parse_filter
from bunko.drops.folder_monitor import FolderMonitor
from bunko.drops.folder_watcher import DropFolderWatcher, WatchedFolder
from bunko.services.ingest import Upload
from bunko.services.search.search import SearchOptions
from tests.waiting import wait_for

LEGAL = {"team": "legal", "year": 2024, "tags": ["contracts", "leases"]}
CANONICAL_LEGAL = {"team": "legal", "year": 2024.0, "tags": ["contracts", "leases"]}


@pytest.fixture
def drop(services, tmp_path) -> Iterator[Path]:
    """The drop folder as `bunko serve` watches it (the folder monitor), started."""
    folder = tmp_path / "drop"
    folder.mkdir()
    monitor = FolderMonitor(
        services.ingest,
        services.accounts.workspace_settings,
        drop_dir=folder,
        drop_workspace_id=WS,
    )
    monitor.start()
    yield folder
    monitor.stop()


@pytest.fixture
def drop_warnings(caplog) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.WARNING, logger="bunko.drops")
    return caplog


def sidecar(attributes: dict) -> str:
    return json.dumps({"metadataAttributes": attributes})


def doc_at(services, path):
    return services.metadata.get_document_by_path(WS, path)


def completed(services, path):
    doc = doc_at(services, path)
    return doc if doc and doc.status is DocumentStatus.COMPLETED else None


def has_metadata(services, path, expected):
    doc = doc_at(services, path)
    return doc if doc and doc.metadata == expected else None


def paths(services) -> set[str]:
    return {d.path for d in services.metadata.iter_documents(WS)}


def warned(caplog, *words: str):
    """The first warning whose text holds every one of `words`."""
    return next(
        (r for r in caplog.records if all(w in r.getMessage() for w in words)),
        None,
    )


def test_a_sidecar_written_first_is_read_by_its_file(services, drop):
    (drop / "lease.txt.metadata.json").write_text(sidecar(LEGAL), encoding="utf-8")
    (drop / "lease.txt").write_text("The lease runs for ten years.", encoding="utf-8")
    doc = wait_for(lambda: completed(services, "lease.txt"))
    assert doc.metadata == CANONICAL_LEGAL
    assert paths(services) == {"lease.txt"}  # the sidecar is no document


def test_a_sidecar_written_after_its_file_relabels_it_without_reading_it_again(services, drop):
    (drop / "lease.txt").write_text("The lease mentions a lighthouse keeper.", encoding="utf-8")
    first = wait_for(lambda: completed(services, "lease.txt"))
    assert first.metadata == {}
    (drop / "lease.txt.metadata.json").write_text(sidecar(LEGAL), encoding="utf-8")
    doc = wait_for(lambda: has_metadata(services, "lease.txt", CANONICAL_LEGAL))
    # The same revision, never queued again: only its metadata changed.
    assert (doc.id, doc.revision, doc.status) == (first.id, 1, DocumentStatus.COMPLETED)
    assert len(services.metadata.list_revisions(WS, doc.id)) == 1

    # Search filters by it at once.
    def found(team: str) -> list[str]:
        only = parse_filter({"equals": {"key": "team", "value": team}})
        hits = services.search.search(WS, "lighthouse", SearchOptions(min_score=0, metadata=only))
        return [h.document_id for h in hits.items]

    assert found("legal") == [doc.id]
    assert found("sales") == []
    assert paths(services) == {"lease.txt"}


def test_a_changed_sidecar_replaces_the_metadata_and_a_deleted_one_clears_it(services, drop):
    (drop / "memo.txt.metadata.json").write_text(sidecar(LEGAL), encoding="utf-8")
    (drop / "memo.txt").write_text("A memo about the harbour.", encoding="utf-8")
    wait_for(lambda: has_metadata(services, "memo.txt", CANONICAL_LEGAL))

    (drop / "memo.txt.metadata.json").write_text(sidecar({"team": "sales"}), encoding="utf-8")
    doc = wait_for(lambda: has_metadata(services, "memo.txt", {"team": "sales"}))
    assert doc.revision == 1

    (drop / "memo.txt.metadata.json").unlink()
    doc = wait_for(lambda: has_metadata(services, "memo.txt", {}))
    assert doc.revision == 1 and paths(services) == {"memo.txt"}


def test_bedrocks_typed_form_is_read_and_booleans_become_text(services, drop):
    typed = {
        "team": {"value": {"type": "STRING", "stringValue": "legal"}, "includeForEmbedding": True},
        "pages": {"value": {"type": "NUMBER", "numberValue": 12}, "includeForEmbedding": False},
        "signed": {"value": {"type": "BOOLEAN", "booleanValue": True}},
        "parties": {"value": {"type": "STRING_LIST", "stringListValue": ["Ada", "Grace"]}},
        "archived": False,  # the plain form beside it
        "due": "2025-06-30",
    }
    (drop / "deal.txt.metadata.json").write_text(sidecar(typed), encoding="utf-8")
    (drop / "deal.txt").write_text("The deal was signed in June.", encoding="utf-8")
    doc = wait_for(lambda: completed(services, "deal.txt"))
    assert doc.metadata == {
        "team": "legal", "pages": 12.0, "signed": "true", "parties": ["Ada", "Grace"],
        "archived": "false", "due": "2025-06-30",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"metadataAttributes": {"team": "legal"', "not valid JSON"),
        ('{"team": "legal"}', "metadataAttributes"),
        (sidecar({"team name": "legal"}), "team name"),
        (sidecar({"team": {"nested": "object"}}), "metadataAttributes.team"),
        (sidecar({"category": "contracts"}), "category"),
        (sidecar({"notes": "x" * 70_000}), "over 64 KiB"),
    ],
    ids=["bad-json", "no-attributes", "bad-key", "bad-value", "category", "too-big"],
)
def test_a_broken_sidecar_leaves_the_metadata_as_it_was(
    services, drop, drop_warnings, content, reason
):
    (drop / "lease.txt.metadata.json").write_text(sidecar(LEGAL), encoding="utf-8")
    (drop / "lease.txt").write_text("The lease runs for ten years.", encoding="utf-8")
    wait_for(lambda: has_metadata(services, "lease.txt", CANONICAL_LEGAL))

    (drop / "lease.txt.metadata.json").write_text(content, encoding="utf-8")
    record = wait_for(lambda: warned(drop_warnings, "lease.txt.metadata.json", reason))
    assert record.levelno == logging.WARNING
    doc = doc_at(services, "lease.txt")
    assert doc.metadata == CANONICAL_LEGAL and doc.revision == 1


def test_a_file_whose_sidecar_is_broken_is_still_ingested(services, drop, drop_warnings):
    (drop / "notes.txt.metadata.json").write_text("{not json", encoding="utf-8")
    (drop / "notes.txt").write_text("Notes about the granite meadow.", encoding="utf-8")
    doc = wait_for(lambda: completed(services, "notes.txt"))
    assert doc.metadata == {}
    assert warned(drop_warnings, "notes.txt.metadata.json", "not valid JSON")
    assert paths(services) == {"notes.txt"}


FRONT = """---
title: Harbour lights
date: 2024-03-01
updated: 2024-03-01 10:00:00 +01:00
tags: [boats, lights]
pages: 7
draft: false
category: guides
authors: {lead: Ada}
---
# Harbour lights

The lighthouse keeper logs every ship.
"""


def test_front_matter_becomes_metadata_and_stays_in_the_text(services, drop, drop_warnings):
    (drop / "guide.md").write_text(FRONT, encoding="utf-8")
    doc = wait_for(lambda: completed(services, "guide.md"))
    assert doc.metadata == {
        "title": "Harbour lights", "date": "2024-03-01", "updated": "2024-03-01T09:00:00Z",
        "tags": ["boats", "lights"], "pages": 7.0,
    }  # fmt: skip
    # The values it cannot hold are skipped, each with a warning naming the file and the key.
    for key in ("draft", "category", "authors"):
        assert warned(drop_warnings, "guide.md", repr(key))
    assert doc.category is None  # `category` in front matter is not the document's category
    text = " ".join(c.content for c in services.metadata.get_chunks(WS, doc.id))
    assert "Harbour lights" in text and "boats" in text and "lighthouse keeper" in text


def test_the_sidecar_beats_the_front_matter_key_by_key(services, drop):
    (drop / "guide.md").write_text(FRONT, encoding="utf-8")
    wait_for(lambda: completed(services, "guide.md"))
    (drop / "guide.md.metadata.json").write_text(
        sidecar({"title": "From the sidecar", "team": "docs"}), encoding="utf-8"
    )
    doc = wait_for(lambda: (d := doc_at(services, "guide.md")) and "team" in d.metadata and d)
    assert doc.metadata == {
        "title": "From the sidecar", "team": "docs", "date": "2024-03-01",
        "updated": "2024-03-01T09:00:00Z", "tags": ["boats", "lights"], "pages": 7.0,
    }  # fmt: skip
    # Without the sidecar, the front matter alone (read again from the file's head).
    (drop / "guide.md.metadata.json").unlink()
    doc = wait_for(lambda: (d := doc_at(services, "guide.md")) and "team" not in d.metadata and d)
    assert doc.metadata["title"] == "Harbour lights" and doc.revision == 1


def test_a_sidecar_whose_file_never_arrives_creates_nothing(services, drop):
    (drop / "ghost.pdf.metadata.json").write_text(sidecar(LEGAL), encoding="utf-8")
    (drop / "ghost.pdf.metadata.json").write_text(sidecar({"team": "x"}), encoding="utf-8")
    # Written after the sidecar, so seen after it (in its batch, or a later one).
    (drop / "zz-after.txt").write_text("Written after the sidecar.", encoding="utf-8")
    wait_for(lambda: completed(services, "zz-after.txt"))
    assert services.queue.join(timeout=60)
    assert paths(services) == {"zz-after.txt"}
    (drop / "ghost.pdf.metadata.json").unlink()
    (drop / "zz-last.txt").write_text("Written after the delete.", encoding="utf-8")
    wait_for(lambda: completed(services, "zz-last.txt"))
    assert paths(services) == {"zz-after.txt", "zz-last.txt"}


def test_metadata_kept_for_a_file_that_brings_none(services, drop):
    """A file with neither sidecar nor front matter keeps the metadata its document was given
    (over REST, say) when it changes."""
    (drop / "plain.txt").write_text("First words.", encoding="utf-8")
    doc = wait_for(lambda: completed(services, "plain.txt"))
    services.ingest.set_metadata(WS, doc.id, {"owner": "ada"})
    (drop / "plain.txt").write_text("Second words.", encoding="utf-8")
    doc = wait_for(lambda: (d := completed(services, "plain.txt")) and d.revision == 2 and d)
    assert doc.metadata == {"owner": "ada"}


def test_catch_up_reads_sidecars_and_drops_sidecar_documents(services, tmp_path):
    """Files and sidecars written while nothing watched are read on start; a drop document at
    a sidecar's path (from before sidecars were read) is removed, never listed again."""
    folder = tmp_path / "drop"
    (folder / "manuals").mkdir(parents=True)
    (folder / "manuals" / "pump.txt").write_text("Prime the pump first.", encoding="utf-8")
    (folder / "manuals" / "pump.txt.metadata.json").write_text(sidecar(LEGAL), encoding="utf-8")
    # The sidecar, as a watcher that did not know sidecars ingested it.
    old = services.ingest.submit(
        Upload(WS, b'{"metadataAttributes": {}}', path="manuals/pump.txt.metadata.json",
               source="drop")
    )  # fmt: skip
    assert services.queue.join(timeout=60)
    watcher = DropFolderWatcher(services.ingest, WS, [WatchedFolder(folder)])
    watcher.start()  # starts with a catch-up pass
    try:
        assert services.queue.join(timeout=60)
        doc = completed(services, "manuals/pump.txt")
        assert doc.metadata == CANONICAL_LEGAL and doc.category == "manuals"
        assert services.metadata.get_document(WS, old.id) is None
        assert paths(services) == {"manuals/pump.txt"}
    finally:
        watcher.stop()


def test_a_monitored_folder_maps_sidecars_to_its_own_paths(services, tmp_path):
    """A monitored folder's documents carry its path as a prefix; its sidecars find them."""
    folder = tmp_path / "shared"
    folder.mkdir()
    prefix = folder.as_posix().lstrip("/")
    watcher = DropFolderWatcher(services.ingest, WS, [WatchedFolder(folder, prefix=prefix)])
    watcher.start()
    try:
        (folder / "a.txt").write_text("Alpha.", encoding="utf-8")
        wait_for(lambda: completed(services, f"{prefix}/a.txt"))
        (folder / "a.txt.metadata.json").write_text(sidecar({"team": "ops"}), encoding="utf-8")
        wait_for(lambda: has_metadata(services, f"{prefix}/a.txt", {"team": "ops"}))
        assert paths(services) == {f"{prefix}/a.txt"}
    finally:
        watcher.stop()


def test_a_sidecar_linked_from_outside_the_folder_is_not_read(services, drop, tmp_path):
    """As for files (issue 33): a link out of the folder is not followed."""
    outside = tmp_path / "outside.json"
    outside.write_text(sidecar({"secret": "hunter2"}), encoding="utf-8")
    (drop / "linked.txt.metadata.json").symlink_to(outside)
    (drop / "linked.txt").write_text("A file beside a linked sidecar.", encoding="utf-8")
    doc = wait_for(lambda: completed(services, "linked.txt"))
    assert doc.metadata == {}
    assert paths(services) == {"linked.txt"}


def test_past_the_limit_of_keys_the_sidecars_come_first(services, drop, drop_warnings):
    given = {f"s{i:02}": "from the sidecar" for i in range(30)}
    front = "".join(f"f{i}: from the front matter\n" for i in range(4))
    (drop / "many.md.metadata.json").write_text(sidecar(given), encoding="utf-8")
    (drop / "many.md").write_text(f"---\n{front}---\n# Many keys\n", encoding="utf-8")
    doc = wait_for(lambda: completed(services, "many.md"))
    assert doc.metadata == given | {"f0": "from the front matter", "f1": "from the front matter"}
    assert warned(drop_warnings, "many.md", "'f2'", "at most 32 keys")
    assert warned(drop_warnings, "many.md", "'f3'", "at most 32 keys")
