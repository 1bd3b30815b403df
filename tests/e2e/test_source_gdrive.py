"""The Google Drive source (issue 48), against a fake Drive API v3 on a local socket
(tests/e2e/fake_gdrive.py, which answers as Google's API reference shows): a folder and its
subfolders listed with files.list (paged), then only the changes API; Google Docs exported
(text, or DOCX), Sheets as CSV, other files downloaded with alt=media; a re-sync with nothing
changed makes one request and downloads nothing; edits, renames, moves, the trash and
deletes for good; a folder moved in listed whole; a rejected page token (the folder listed
again); throttling with Retry-After; an expired credential (the sync fails, nothing
deleted); a hand upload that survives every sync; the outbound guard."""

from __future__ import annotations

import pytest

from bunko.domain.sources import UPLOAD
from bunko.errors import ValidationError
from bunko.services.ingest import Upload
from tests.conftest import library_texts, make_services
from tests.e2e.fake_gdrive import DOC, SHEET, SLIDES, FakeGDrive

WS = "default"


@pytest.fixture
def gd():
    d = FakeGDrive(page_size=2)
    yield d
    d.close()


def _tree(d: FakeGDrive) -> dict[str, str]:
    ids = {"team": d.folder("Team"), "outside": d.folder("Outside")}
    ids["hr"] = d.folder("HR", ids["team"])
    ids["handbook"] = d.add("Handbook", DOC, ids["team"], b"Handbook: we work in the open.\n")
    ids["budget"] = d.add("Budget", SHEET, ids["team"], b"item,cost\nlaptops,900\n")
    ids["leave"] = d.add("leave.md", "text/markdown", ids["team"], b"Leave: twenty days.\n")
    ids["photo"] = d.add("photo.png", "image/png", ids["team"], b"\x89PNG not read")
    ids["hiring"] = d.add("hiring.txt", "text/plain", ids["hr"], b"Hiring: two interviews.\n")
    ids["other"] = d.add("other.md", "text/markdown", ids["outside"], b"Not the folder's.\n")
    return ids


def _add(services, d: FakeGDrive, folder_id: str, name: str = "gd", **more):
    settings = {"url": d.url, "folder_id": folder_id, **more}
    return services.sources.add(WS, "gdrive", name, settings, operator=True, credential=d.token)


def test_a_folder_is_listed_then_only_the_changes_are_asked(services, gd):
    ids = _tree(gd)
    hand = services.ingest.submit(Upload(WS, b"Typed by hand.", path="gd/hand.txt", source=UPLOAD))
    _add(services, gd, ids["team"])

    first = services.sources.sync(WS, "gd")
    assert first.failed is None, first
    assert first.added == ["gd/Budget.csv", "gd/HR/hiring.txt", "gd/Handbook.txt", "gd/leave.md"]
    assert first.fetched == 4 and not first.errors
    asked = [p for p, _ in gd.requests()]
    assert asked[0].startswith("/drive/v3/changes/startPageToken")  # before the listing
    assert sum(p.startswith("/drive/v3/files?") for p in asked) >= 3  # paged, and HR too
    assert any(f"/files/{ids['handbook']}/export?mimeType=text%2Fplain" in p for p in asked)
    assert any(f"/files/{ids['leave']}?alt=media" in p for p in asked)
    texts = library_texts(services, WS)
    assert "work in the open" in texts["gd/Handbook.txt"]
    assert "laptops" in texts["gd/Budget.csv"]
    handbook = services.library.at(WS, "gd/Handbook.txt")  # where a reader opens it in Drive
    assert handbook.metadata == {
        "url": f"https://docs.google.com/document/d/{ids['handbook']}/edit"
    }

    again = services.sources.sync(WS, "gd")
    assert (again.added, again.changed, again.deleted, again.renamed) == ([], [], [], [])
    assert again.fetched == 0 and again.unchanged == 4
    assert [p.split("?")[0] for p, _ in gd.requests()] == ["/drive/v3/changes"]

    leave_doc = services.library.at(WS, "gd/leave.md")
    gd.edit(ids["handbook"], b"Handbook: we work in the open, and write things down.\n")
    gd.rename(ids["leave"], "time-off.md")
    gd.trash(ids["budget"])
    gd.remove(ids["hiring"])
    gd.edit(ids["other"], b"Still not the folder's.\n")  # a change elsewhere in the Drive
    moved_in = gd.folder("Moved in", ids["outside"])
    gd.add("guide.md", "text/markdown", moved_in, b"A guide that was elsewhere.\n")
    gd.move(moved_in, ids["team"])  # the change names the folder, not what it holds
    third = services.sources.sync(WS, "gd")
    assert third.changed == ["gd/Handbook.txt"]
    assert third.renamed == [("gd/leave.md", "gd/time-off.md")]
    assert third.deleted == ["gd/Budget.csv", "gd/HR/hiring.txt"]
    assert third.added == ["gd/Moved in/guide.md"]
    assert third.fetched == 2  # the handbook and the guide: the rename kept its md5
    assert services.library.at(WS, "gd/time-off.md").id == leave_doc.id
    texts = library_texts(services, WS)
    assert "write things down" in texts["gd/Handbook.txt"]
    assert texts["gd/hand.txt"] == "Typed by hand."
    assert services.library.find(WS, hand.id) is not None

    gd.move(ids["leave"], ids["outside"])  # moved out of the folder: gone
    fourth = services.sources.sync(WS, "gd")
    assert fourth.deleted == ["gd/time-off.md"] and fourth.fetched == 0


def test_the_synced_folder_in_the_trash_takes_its_documents(services, gd):
    """Trashing a folder trashes what it holds; the change names the folder."""
    ids = _tree(gd)
    _add(services, gd, ids["team"])
    services.sources.sync(WS, "gd")
    gd.trash(ids["team"])
    report = services.sources.sync(WS, "gd")
    assert len(report.deleted) == 4 and report.failed is None


def test_a_folder_of_a_shared_drive(services, gd):
    """A shared drive's files are listed in its corpus and its changes asked by its id."""
    drive = gd.shared_drive()
    folder = gd.folder("Team handbook", drive)
    gd.add("rules.md", "text/markdown", folder, b"Rules of the team.\n")
    _add(services, gd, folder, shared_drive_id=drive)
    first = services.sources.sync(WS, "gd")
    assert first.added == ["gd/rules.md"], first
    later = gd.add("more.md", "text/markdown", folder, b"More rules.\n")
    second = services.sources.sync(WS, "gd")
    assert second.added == ["gd/more.md"]
    gd.remove(later)
    assert services.sources.sync(WS, "gd").deleted == ["gd/more.md"]


def test_a_google_doc_exported_as_docx(services, gd):
    folder = gd.folder("Docs")
    gd.add("Plan", DOC, folder, b"The plan: ship the connector.\nThen rest.\n")
    _add(services, gd, folder, export="docx")
    report = services.sources.sync(WS, "gd")
    assert report.added == ["gd/Plan.docx"], report
    assert "ship the connector" in library_texts(services, WS)["gd/Plan.docx"]


def test_a_rejected_page_token_lists_the_folder_again(services, gd):
    ids = _tree(gd)
    _add(services, gd, ids["team"])
    services.sources.sync(WS, "gd")
    state = services.sources.states.load(services.sources.get(WS, "gd").id)
    state["cursor"] = "not-a-token"
    services.sources.states.save(services.sources.get(WS, "gd").id, state)
    gd.remove(ids["leave"])
    report = services.sources.sync(WS, "gd")
    assert report.failed is None and report.deleted == ["gd/leave.md"]
    assert report.fetched == 0  # the listing again downloads nothing unchanged


def test_throttling_is_waited_out_as_retry_after_says(services, gd):
    ids = _tree(gd)
    _add(services, gd, ids["team"])
    gd.throttled = 2
    waits: list[float] = []
    services.sources.connectors.sleep = waits.append  # what the sync waited, without waiting
    report = services.sources.sync(WS, "gd")
    assert report.failed is None and len(report.added) == 4
    assert report.throttled == 2 and waits == [1.0, 1.0]  # as Retry-After said
    assert [s for _, s in gd.requests()][:3] == [429, 429, 200]


def test_a_403_for_the_rate_limit_is_waited_out_not_taken_for_a_refusal(services, gd):
    """Drive answers a quota exceeded with 403 userRateLimitExceeded: backed off (1, 2 s:
    no Retry-After), not a failed credential."""
    ids = _tree(gd)
    _add(services, gd, ids["team"])
    gd.throttled, gd.throttle_status = 2, 403
    waits: list[float] = []
    services.sources.connectors.sleep = waits.append
    report = services.sources.sync(WS, "gd")
    assert report.failed is None and len(report.added) == 4, report
    assert report.throttled == 2 and waits == [1.0, 2.0]


def test_a_wait_past_the_bounds_fails_the_listing_or_the_one_file(services, gd):
    """Throttling that asks for longer than a wait may last (120 s): the listing fails and
    deletes nothing (its token kept), or a download is an error on its file alone, tried
    again at the next sync; neither is waited for."""
    ids = _tree(gd)
    _add(services, gd, ids["team"])
    assert services.sources.sync(WS, "gd").failed is None
    waits: list[float] = []
    services.sources.connectors.sleep = waits.append
    gd.remove(ids["hiring"])
    gd.edit(ids["leave"], b"Leave: twenty-five days.\n")
    gd.throttled, gd.retry_after = 1, "3600"
    failed = services.sources.sync(WS, "gd")
    assert failed.failed and "3600 s" in failed.failed and failed.deleted == [], failed
    assert services.library.at(WS, "gd/HR/hiring.txt") is not None

    gd.throttled, gd.throttle_only = 1, f"/files/{ids['leave']}?alt=media"
    one = services.sources.sync(WS, "gd")
    assert one.failed is None and one.deleted == ["gd/HR/hiring.txt"], one
    assert "3600 s" in one.errors["gd/leave.md"] and one.changed == []
    assert waits == []
    again = services.sources.sync(WS, "gd")
    assert again.changed == ["gd/leave.md"] and again.errors == {}, again
    assert "twenty-five" in library_texts(services, WS)["gd/leave.md"]


def test_an_expired_credential_fails_the_sync_and_deletes_nothing(services, gd):
    ids = _tree(gd)
    _add(services, gd, ids["team"])
    services.sources.sync(WS, "gd")
    gd.remove(ids["leave"])
    gd.token = "a-fresh-token"
    report = services.sources.sync(WS, "gd")
    assert report.failed and "credential" in report.failed and "401" in report.failed
    assert report.deleted == [] and services.library.at(WS, "gd/leave.md") is not None
    services.sources.set_credential(WS, "gd", "a-fresh-token")
    healed = services.sources.sync(WS, "gd")
    assert healed.failed is None and healed.deleted == ["gd/leave.md"]


def test_a_folder_the_credential_cannot_see_fails_and_deletes_nothing(services, gd):
    """files.list answers an empty list for a folder out of sight: the folder is asked for
    first, so a lost share fails the sync instead of emptying the library."""
    ids = _tree(gd)
    _add(services, gd, ids["team"])
    services.sources.sync(WS, "gd")
    state = services.sources.states.load(services.sources.get(WS, "gd").id)
    state["cursor"] = "not-a-token"  # the next sync lists everything again
    services.sources.states.save(services.sources.get(WS, "gd").id, state)
    team = gd.files.pop(ids["team"])  # unshared: the folder is not found
    report = services.sources.sync(WS, "gd")
    assert report.failed and "cannot be seen" in report.failed and report.deleted == []
    assert services.library.at(WS, "gd/leave.md") is not None
    gd.files[ids["team"]] = team
    assert services.sources.sync(WS, "gd").failed is None


def test_the_outbound_guard_checks_the_service_root(tmp_path, gd):
    closed = make_services(tmp_path / "data", embedder="none", allow_private_sources=False)
    try:
        with pytest.raises(ValidationError, match="inside the network"):
            _add(closed, gd, "x")
        with pytest.raises(ValidationError, match=r"169\.254\.169\.254"):
            closed.sources.add(
                WS, "gdrive", "meta", {"url": "http://169.254.169.254", "folder_id": "x"},
                operator=True,
            )  # fmt: skip
    finally:
        closed.close()
    assert gd.requests() == []


def test_a_folder_id_is_required(services, gd):
    with pytest.raises(ValidationError, match="folder_id"):
        services.sources.add(WS, "gdrive", "x", {"url": gd.url}, operator=True)


def test_a_service_account_key_gets_a_token_each_sync(services, gd):
    """A credential that lasts: a service account's JSON key, whose RS256-signed JWT is
    exchanged for a token at its token_uri at the start of each sync; a key the endpoint
    does not know fails the sync (nothing deleted)."""
    ids = _tree(gd)
    key = gd.service_account_key()
    services.sources.add(
        WS, "gdrive", "sa", {"url": gd.url, "folder_id": ids["team"]},
        operator=True, credential=key,
    )  # fmt: skip
    first = services.sources.sync(WS, "sa")
    assert first.failed is None and len(first.added) == 4, first
    assert gd.requests()[0] == ("/token", 200)
    gd.token = "the-next-hours-token"
    gd.remove(ids["leave"])
    second = services.sources.sync(WS, "sa")
    assert second.failed is None and second.deleted == ["sa/leave.md"]
    del gd._key  # the key was deleted in the Cloud console
    gd.service_account_key()
    gd.remove(ids["hiring"])
    third = services.sources.sync(WS, "sa")
    assert third.failed and "invalid_grant" in third.failed and third.deleted == []


def test_a_listing_longer_than_a_run_goes_on_from_its_checkpoint(services, gd):
    """A first listing that takes longer than the run's time bound keeps where it was (the
    folders still to list, the next page's token, the items read so far, the change token
    asked before it); the next run goes on from there, and nothing is mirrored until the
    listing is whole, so a partial listing never deletes."""
    team = gd.folder("Team")
    subs = [gd.folder(f"Sub{n}", team) for n in range(3)]
    for n in range(18):
        gd.add(f"f{n:02}.md", "text/markdown", subs[n % 3], f"File number {n}.\n".encode())
    hand = services.ingest.submit(Upload(WS, b"Typed by hand.", path="gd/hand.txt", source=UPLOAD))
    # One second a request: a bound of 4 s lets a run ask about four pages of two files.
    services.sources.connectors.clock = lambda: float(len(gd.log))
    _add(services, gd, team, max_seconds=4)

    runs, asked = [], []
    while not (report := services.sources.sync(WS, "gd")).complete:
        assert report.failed is None and report.deleted == [], report
        runs.append(report)
        asked += [p for p, _ in gd.requests()]
        assert len(runs) < 60
    listing = [r for r in runs if not r.added]
    assert len(listing) >= 2 and all(r.stopped_by == "max_seconds" for r in listing)
    starts = [p for p in asked if p.startswith("/drive/v3/changes/startPageToken")]
    assert len(starts) == 1  # the listing went on; it did not start again
    pages = [p for p in asked if p.startswith("/drive/v3/files?")]
    assert len(pages) == len(set(pages))
    added = sorted(p for r in [*runs, report] for p in r.added)
    assert added == sorted(f"gd/Sub{n % 3}/f{n:02}.md" for n in range(18))
    assert services.library.find(WS, hand.id) is not None

    again = services.sources.sync(WS, "gd")  # then the changes API, from the token kept
    assert again.complete and again.fetched == 0 and again.unchanged == 18
    assert [p for p, _ in gd.requests() if "/files?" in p] == []


def test_a_checkpoint_whose_page_token_expired_lists_the_folder_again(services, gd):
    """A listing's page token kept between runs that Drive no longer takes: the folder is
    listed again from the start (a new start token first), not failed run after run."""
    team = gd.folder("Team")
    for n in range(12):
        gd.add(f"f{n:02}.md", "text/markdown", team, f"File number {n}.\n".encode())
    services.sources.connectors.clock = lambda: float(len(gd.log))
    record = _add(services, gd, team, max_seconds=3)
    first = services.sources.sync(WS, "gd")
    assert (first.complete, first.failed, first.added) == (False, None, [])
    state = services.sources.states.load(record.id)
    assert state["listing"]["token"]  # stopped inside the folder's pages
    state["listing"]["token"] = "expired-token"
    services.sources.states.save(record.id, state)
    gd.requests()
    runs = []
    while not (report := services.sources.sync(WS, "gd")).complete:
        assert report.failed is None, report
        runs.append(report)
        assert len(runs) < 60
    asked = [p for p, _ in gd.requests()]
    assert sum(p.startswith("/drive/v3/changes/startPageToken") for p in asked) == 1
    added = sorted(p for r in [*runs, report] for p in r.added)
    assert added == [f"gd/f{n:02}.md" for n in range(12)]


def test_changes_longer_than_a_run_go_on_from_their_checkpoint(services, gd):
    """A pass of the changes API that takes longer than the run's time bound keeps where it
    was (the next page's token, the items so far, then the folders moved in still to list);
    the next run goes on from there, nothing is mirrored (so nothing deleted) until the
    pass is whole, and the kept change token moves only then."""
    team, outside = gd.folder("Team"), gd.folder("Outside")
    old = [gd.add(f"old{n}.md", "text/markdown", team, f"Old file {n}.\n".encode()) for n in (0, 1)]
    for n in range(6):
        gd.add(f"in{n}.md", "text/markdown", outside, f"Moved in {n}.\n".encode())
    record = _add(services, gd, team)
    first = services.sources.sync(WS, "gd")
    assert first.complete and first.added == ["gd/old0.md", "gd/old1.md"], first
    cursor = services.sources.states.load(record.id)["cursor"]

    for n in range(10):
        gd.add(f"new{n:02}.md", "text/markdown", team, f"New file {n}.\n".encode())
    gd.remove(old[0])
    gd.move(outside, team)  # its six files: listed as the folder moved in
    gd.requests()
    # One second a request: a bound of 2 s lets a run ask two pages of two changes.
    services.sources.connectors.clock = lambda: float(len(gd.log))
    runs, asked, reading, walks = [], [], 0, 0
    while not (report := services.sources.sync(WS, "gd", max_seconds=2)).complete:
        assert report.failed is None and report.stopped_by == "max_seconds", report
        runs.append(report)
        state = services.sources.states.load(record.id)
        if reading == len(runs) - 1:  # the pass's runs, up to the one that ended it
            asked += [p for p, _ in gd.requests()]
        if "changes" in state:  # still reading them: nothing mirrored, the token kept
            reading += 1
            walks += "walk" in state["changes"]  # the pages done, the folder moved in not yet
            assert (report.added, report.deleted, state["cursor"]) == ([], [], cursor)
        assert len(runs) < 60
    runs.append(report)
    assert reading >= 3 and walks >= 1  # the change pages took runs, the folder's listing too
    changes = [p for p in asked if p.startswith("/drive/v3/changes?")]
    assert len(changes) == len(set(changes)) == 6  # each page asked once: it went on
    assert not any(p.startswith("/drive/v3/changes/startPageToken") for p in asked)
    assert [p for r in runs for p in r.deleted] == ["gd/old0.md"]
    assert sorted(p for r in runs for p in r.added) == sorted(
        [f"gd/new{n:02}.md" for n in range(10)] + [f"gd/Outside/in{n}.md" for n in range(6)]
    )
    assert services.sources.states.load(record.id)["cursor"] != cursor

    again = services.sources.sync(WS, "gd")  # from the new token: nothing more
    assert again.complete and again.fetched == 0 and again.added == again.deleted == []


def test_slides_as_text_docs_as_markdown_and_other_google_types_left_out(services, gd):
    """Slides are exported as plain text, Docs as the `export` setting says (Markdown here);
    a form, a drawing and a shortcut are not read (nothing asked about them); a renamed
    Google document is exported again (its version moved) and keeps its document."""
    team = gd.folder("Team")
    guide = gd.add("Guide", DOC, team, b"# Guide\n\nWe write things down.\n")
    deck = gd.add("Deck", SLIDES, team, b"Slide one: the ferry leaves at nine.\n")
    others = [
        gd.add(name, f"application/vnd.google-apps.{kind}", team)
        for name, kind in (("Survey", "form"), ("Map", "drawing"), ("Link", "shortcut"))
    ]
    _add(services, gd, team, export="markdown")
    first = services.sources.sync(WS, "gd")
    assert (first.failed, first.errors, first.added) == (None, {}, ["gd/Deck.txt", "gd/Guide.md"])
    asked = [p for p, _ in gd.requests()]
    assert any(f"/files/{deck}/export?mimeType=text%2Fplain" in p for p in asked)
    assert any(f"/files/{guide}/export?mimeType=text%2Fmarkdown" in p for p in asked)
    assert not any(f"/files/{other}" in p for p in asked for other in others)
    texts = library_texts(services, WS)
    assert "ferry leaves at nine" in texts["gd/Deck.txt"]
    kept = services.library.at(WS, "gd/Guide.md")

    gd.rename(guide, "Manual")
    second = services.sources.sync(WS, "gd")
    assert second.renamed == [("gd/Guide.md", "gd/Manual.md")] and second.fetched == 1, second
    assert any(f"/files/{guide}/export" in p for p, _ in gd.requests())
    assert services.library.at(WS, "gd/Manual.md").id == kept.id


def test_a_file_over_the_upload_limit_is_an_error_not_downloaded_until_it_changes(tmp_path, gd):
    services = make_services(tmp_path / "data", embedder="none", max_file_bytes=1000)
    try:
        team = gd.folder("Team")
        big = gd.add("big.md", "text/markdown", team, b"x" * 2000)
        gd.add("small.md", "text/markdown", team, b"Small and read.\n")
        _add(services, gd, team)
        first = services.sources.sync(WS, "gd")
        assert first.added == ["gd/small.md"] and first.fetched == 1, first
        assert "2,000 bytes; the limit is 1,000 bytes" in first.errors["gd/big.md"]
        assert not any(f"/files/{big}?alt=media" in p for p, _ in gd.requests())

        again = services.sources.sync(WS, "gd")  # unchanged: not tried, nor an error again
        assert (again.errors, again.fetched, again.unchanged) == ({}, 0, 2), again
        gd.rename(big, "large.md")  # its new path told, still not downloaded
        moved = services.sources.sync(WS, "gd")
        assert list(moved.errors) == ["gd/large.md"] and moved.fetched == 0, moved
        gd.edit(big, b"Now small enough.\n")
        last = services.sources.sync(WS, "gd")
        assert last.added == ["gd/large.md"] and last.fetched == 1, last
    finally:
        services.close()
