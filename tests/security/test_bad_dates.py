"""Issue 46, finding 9: a date past year 9999 in UTC (9999-12-31T23:00-05:00) raised
OverflowError: in a dropped file's sidecar or front matter it killed the drop-folder watcher
(and again at every start), at every metadata and filter route it was a 500; an original
link whose expiry is a Unicode digit (`²`) was a 500 too. Replayed on a real server and a
real watched folder: each is now a 400, or a warning naming the file, and the watch goes on."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.domain import DocumentStatus
from bunko.drops.folder_monitor import FolderMonitor
from tests.e2e.rest_harness import assert_error, wait_until_done
from tests.waiting import wait_for

# In year 10000 once in UTC, and year 0 once in UTC: both out of every store's range.
PAST_9999 = "9999-12-31T23:00:00-05:00"
BEFORE_1 = "0001-01-01T00:30:00+01:00"


@pytest.fixture(scope="module")
def dated_user(rest):
    return rest.new_user()


def monitor(services, folder: Path) -> FolderMonitor:
    watching = FolderMonitor(
        services.ingest,
        services.accounts.workspace_settings,
        drop_dir=folder,
        drop_workspace_id=WS,
    )
    watching.start()
    return watching


def completed(services, path: str):
    doc = services.metadata.get_document_by_path(WS, path)
    return doc if doc and doc.status is DocumentStatus.COMPLETED else None


def test_a_dropped_date_past_9999_never_stops_the_watcher(rest, tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="bunko.drops")
    services, folder = rest.services, tmp_path / "drop"
    folder.mkdir()
    watching = monitor(services, folder)
    try:
        sidecar = {"metadataAttributes": {"signed": PAST_9999}}
        (folder / "lease.txt.metadata.json").write_text(json.dumps(sidecar), encoding="utf-8")
        (folder / "lease.txt").write_text("The lease of the old mill.", encoding="utf-8")
        front = f"---\nupdated: {BEFORE_1}\n---\n# Mill notes\n\nThe mill wheel turns.\n"
        (folder / "mill.md").write_text(front, encoding="utf-8")
        # Both files are taken without the date, each refusal naming its file...
        assert wait_for(lambda: completed(services, "lease.txt")).metadata == {}
        assert wait_for(lambda: completed(services, "mill.md")).metadata == {}
        messages = [r.getMessage() for r in caplog.records]
        assert any("lease.txt" in m and "9999" in m for m in messages), messages
        # ...and the watch goes on: a later drop is ingested.
        (folder / "later.txt").write_text("Dropped after the bad dates.", encoding="utf-8")
        wait_for(lambda: completed(services, "later.txt"))
    finally:
        watching.stop()
    # A new start catches up over the same files and still watches.
    watching = monitor(services, folder)
    try:
        (folder / "after-restart.txt").write_text("Dropped after a restart.", encoding="utf-8")
        wait_for(lambda: completed(services, "after-restart.txt"))
    finally:
        watching.stop()


@pytest.mark.parametrize("moment", [PAST_9999, BEFORE_1])
def test_a_date_out_of_range_is_a_400_at_every_metadata_and_filter_route(rest, dated_user, moment):
    sent = dated_user.client.post(
        "/upload",
        files={"file": ("dated.txt", b"A dated harbour note.", "text/plain")},
        data={"metadata": json.dumps({"signed": "2024-01-01"})},
    )
    assert sent.status_code == 201, sent.text
    file_id = sent.json()["id"]
    wait_until_done(dated_user.client, file_id)

    bad = json.dumps({"signed": moment})
    refused = dated_user.client.post(
        "/upload",
        files={"file": ("other.txt", b"Another note.", "text/plain")},
        data={"metadata": bad},
    )
    assert "1 to 9999" in assert_error(refused, 400)["message"]
    edit = dated_user.client.put(
        f"/knowledge-bases/{file_id}/metadata", json={"metadata": {"s": moment}}
    )
    assert_error(edit, 400)
    for flt in (
        {"equals": {"key": "signed", "value": moment}},
        {"range": {"key": "signed", "gte": moment}},
        {"in": {"key": "signed", "values": [moment]}},
    ):
        text = json.dumps(flt)
        assert_error(dated_user.client.get("/knowledge-bases", params={"filter": text}), 400)
        assert_error(dated_user.client.get("/search", params={"q": "harbour", "filter": text}), 400)
    assert dated_user.client.get(f"/knowledge-bases/{file_id}").json()["metadata"] == {
        "signed": "2024-01-01"
    }


@pytest.mark.parametrize("expiry", ["²", "١٢", "9²"])
def test_an_original_link_with_a_unicode_digit_expiry_is_a_400(rest, dated_user, expiry):
    sent = dated_user.client.post(
        "/upload", files={"file": ("kept.txt", b"An original to link to.", "text/plain")}
    )
    file_id = sent.json()["id"]
    wait_until_done(dated_user.client, file_id)
    url = dated_user.client.get(f"/knowledge-bases/{file_id}/original-link").json()["url"]
    query = parse_qs(urlsplit(url).query)
    mac = query["link"][0].partition(".")[2]
    with httpx.Client(base_url=rest.url) as browser_tab:
        assert browser_tab.get(url).status_code == 200
        forged = browser_tab.get(
            f"/knowledge-bases/{file_id}/original",
            params={"workspace": query["workspace"][0], "link": f"{expiry}.{mac}"},
        )
        assert_error(forged, 400)


def test_a_filter_value_longer_than_any_stored_value_is_a_400(rest, dated_user):
    """Finding 10: filter values had no length bound (a stored value has at most 256)."""
    for value in ("x" * 257, "2024-01-01" + " note" * 60):
        text = json.dumps({"equals": {"key": "signed", "value": value}})
        body = assert_error(dated_user.client.get("/knowledge-bases", params={"filter": text}), 400)
        assert "256" in body["message"]
    fits = json.dumps({"equals": {"key": "signed", "value": "x" * 256}})
    assert dated_user.client.get("/knowledge-bases", params={"filter": fits}).status_code == 200
