"""The SharePoint/OneDrive source (issue 48), against a fake Microsoft Graph drive on a local
socket (tests/e2e/fake_graph.py, which answers as Graph's API reference shows): a folder of
a drive synced into a real embedded library through the delta query, paged; a re-sync with
nothing changed makes one request and downloads nothing; edits, renames, moves and deletes
between syncs; a folder renamed (its files follow, nothing downloaded); 410 Gone (a full
listing again); throttling with Retry-After; an expired credential (the sync fails, nothing
deleted); a hand upload in the same folder that survives every sync; the outbound guard."""

from __future__ import annotations

import pytest

from bunko.domain.sources import UPLOAD
from bunko.errors import ValidationError
from bunko.services.ingest import Upload
from tests.conftest import library_texts, make_services
from tests.e2e.fake_graph import ROOT, FakeGraph

WS = "default"


@pytest.fixture
def drive():
    d = FakeGraph(page_size=2)
    yield d
    d.close()


def _drive_tree(d: FakeGraph) -> dict[str, str]:
    ids = {"policies": d.folder("Policies"), "elsewhere": d.folder("Elsewhere")}
    ids["hr"] = d.folder("HR", ids["policies"])
    ids["leave"] = d.put("leave.md", b"Leave: twenty days a year.\n", ids["policies"])
    ids["travel"] = d.put("travel.txt", b"Travel: trains under five hours.\n", ids["policies"])
    ids["photo"] = d.put("photo.bin", b"\x00\x01binary", ids["policies"])
    ids["hiring"] = d.put("hiring.md", b"Hiring: two interviews.\n", ids["hr"])
    ids["other"] = d.put("other.md", b"Not in the synced folder.\n", ids["elsewhere"])
    return ids


def _add(services, d: FakeGraph, item_id: str | None, name: str = "sp", **more):
    settings = {"url": d.url, "drive_id": d.drive_id, **more}
    if item_id:
        settings["item_id"] = item_id
    return services.sources.add(WS, "sharepoint", name, settings, operator=True, credential=d.token)


def test_a_folder_syncs_then_only_its_delta_is_asked(services, drive):
    ids = _drive_tree(drive)
    hand = services.ingest.submit(Upload(WS, b"Typed by hand.", path="sp/hand.txt", source=UPLOAD))
    _add(services, drive, ids["policies"])

    first = services.sources.sync(WS, "sp")
    assert first.failed is None, first
    assert first.added == ["sp/HR/hiring.md", "sp/leave.md", "sp/travel.txt"], first
    assert first.fetched == 3 and not first.errors
    asked = drive.requests()
    deltas = [p for p, _ in asked if "/root/delta" in p]
    assert len(deltas) > 2  # paged: nextLink after nextLink, then the deltaLink
    assert drive.auth_on_downloads == 0  # the pre-authenticated URL got no credential
    texts = library_texts(services, WS)
    assert "twenty days" in texts["sp/leave.md"]
    leave = services.library.at(WS, "sp/leave.md")  # where a reader opens it in SharePoint
    assert leave.metadata == {
        "url": "https://contoso.sharepoint.com/Shared%20Documents/Policies/leave.md"
    }

    again = services.sources.sync(WS, "sp")
    assert (again.added, again.changed, again.deleted, again.renamed) == ([], [], [], [])
    assert again.fetched == 0 and again.unchanged == 3
    assert [s for _, s in drive.requests()] == [200]  # the deltaLink alone: nothing changed

    drive.edit(ids["leave"], b"Leave: twenty-five days a year.\n")
    drive.rename(ids["travel"], "trips.txt")
    drive.delete(ids["hiring"])
    drive.put("new.md", b"A new page about onboarding.\n", ids["hr"])
    drive.move(ids["other"], ids["policies"])  # moved into the folder: it appears
    drive.edit(ids["photo"], b"\x00\x02still binary")  # a type Bunko does not read
    travel_doc = services.library.at(WS, "sp/travel.txt")
    third = services.sources.sync(WS, "sp")
    assert third.changed == ["sp/leave.md"]
    assert third.renamed == [("sp/travel.txt", "sp/trips.txt")]
    assert third.deleted == ["sp/HR/hiring.md"]
    assert sorted(third.added) == ["sp/HR/new.md", "sp/other.md"]
    assert third.fetched == 3  # leave, new, other: the renamed file is not downloaded
    trips = services.library.at(WS, "sp/trips.txt")
    assert trips.id == travel_doc.id  # its history kept
    # Its link follows the rename, though its content did not change (nothing downloaded).
    assert trips.metadata == {
        "url": "https://contoso.sharepoint.com/Shared%20Documents/Policies/trips.txt"
    }
    texts = library_texts(services, WS)
    assert "twenty-five" in texts["sp/leave.md"]
    assert texts["sp/hand.txt"] == "Typed by hand."  # another source's: never touched

    drive.rename(ids["hr"], "People")  # the delta names the folder alone
    drive.move(ids["other"], ids["elsewhere"])  # moved out of the folder: gone
    fourth = services.sources.sync(WS, "sp")
    assert fourth.renamed == [("sp/HR/new.md", "sp/People/new.md")]
    assert fourth.deleted == ["sp/other.md"] and fourth.fetched == 0
    moved = services.library.at(WS, "sp/People/new.md")  # a folder renamed: its files' links
    assert moved.metadata["url"].endswith("/Shared%20Documents/Policies/People/new.md")
    assert services.library.find(WS, hand.id) is not None

    assert services.sources.remove(WS, "sp") == 3
    assert [d.path for d in services.library.documents(WS)] == ["sp/hand.txt"]


def test_the_whole_drive_and_a_business_drive_without_ctags(services):
    """OneDrive for Business leaves cTag out of delta answers: the eTag tells a change then
    (a rename costs a download, and the document is kept, its text unchanged)."""
    d = FakeGraph(business=True)
    try:
        a = d.put("a.md", b"Alpha.\n")
        folder = d.folder("Docs")
        b = d.put("b.md", b"Beta.\n", folder)
        _add(services, d, None, name="biz")
        first = services.sources.sync(WS, "biz")
        assert first.added == ["biz/Docs/b.md", "biz/a.md"] and first.fetched == 2
        assert services.ingest.wait_for_queue(timeout=60)
        before = services.library.at(WS, "biz/Docs/b.md")
        d.edit(a, b"Alpha, edited.\n")
        d.rename(b, "beta.md")
        second = services.sources.sync(WS, "biz")
        assert second.changed == ["biz/a.md"]
        assert second.renamed == [("biz/Docs/b.md", "biz/Docs/beta.md")]
        assert services.library.at(WS, "biz/Docs/beta.md").id == before.id
        d.delete(folder)  # deleted items come without a name
        third = services.sources.sync(WS, "biz")
        assert third.deleted == ["biz/Docs/beta.md"]
    finally:
        d.close()


def test_410_gone_lists_the_drive_again_and_deletes_what_it_lacks(services, drive):
    ids = _drive_tree(drive)
    _add(services, drive, ids["policies"])
    services.sources.sync(WS, "sp")
    drive.requests()
    drive.delete(ids["travel"])
    drive.expire_tokens()
    report = services.sources.sync(WS, "sp")
    assert report.failed is None, report
    statuses = [s for p, s in drive.requests() if "/root/delta" in p]
    assert statuses[0] == 410 and statuses[1:] == [200] * (len(statuses) - 1)
    assert report.deleted == ["sp/travel.txt"]
    assert report.fetched == 0  # the full listing's unchanged files are not downloaded
    after = services.sources.sync(WS, "sp")
    assert after.deleted == [] and after.requests == 1  # the fresh deltaLink was kept


def test_throttling_is_waited_out_as_retry_after_says(services, drive):
    ids = _drive_tree(drive)
    _add(services, drive, ids["policies"])
    drive.throttled = 2
    waits: list[float] = []
    services.sources.connectors.sleep = waits.append  # what the sync waited, without waiting
    report = services.sources.sync(WS, "sp")
    assert report.failed is None and len(report.added) == 3
    assert report.throttled == 2 and waits == [1.0, 1.0]  # as Retry-After said
    assert [s for _, s in drive.requests()][:3] == [429, 429, 200]


def test_an_expired_credential_fails_the_sync_and_deletes_nothing(services, drive):
    ids = _drive_tree(drive)
    _add(services, drive, ids["policies"])
    services.sources.sync(WS, "sp")
    drive.delete(ids["leave"])
    drive.token = "the-next-token"  # the kept one has expired
    report = services.sources.sync(WS, "sp")
    assert report.failed and "credential" in report.failed and "401" in report.failed
    assert report.deleted == [] and services.library.at(WS, "sp/leave.md") is not None
    listed = services.sources.get(WS, "sp")
    assert listed.last_sync["failed"] == report.failed
    services.sources.set_credential(WS, "sp", "the-next-token")
    healed = services.sources.sync(WS, "sp")
    assert healed.failed is None and healed.deleted == ["sp/leave.md"]


def test_a_file_that_fails_is_an_error_on_it_and_never_the_syncs(services, drive):
    """An empty file is the file's own error, not asked again until it changes; a download
    that fails is an error on it, tried again at the next sync; the rest syncs."""
    ids = _drive_tree(drive)
    empty = drive.put("empty.md", b"", ids["policies"])
    drive.broken.add(ids["travel"])
    _add(services, drive, ids["policies"])
    first = services.sources.sync(WS, "sp")
    assert first.failed is None and sorted(first.added) == ["sp/HR/hiring.md", "sp/leave.md"]
    assert sorted(first.errors) == ["sp/empty.md", "sp/travel.txt"]
    assert "500" in first.errors["sp/travel.txt"]
    drive.broken.clear()
    second = services.sources.sync(WS, "sp")
    assert second.added == ["sp/travel.txt"] and second.fetched == 1  # not the empty one
    assert second.errors == {}
    drive.edit(empty, b"Now it has words.\n")
    third = services.sources.sync(WS, "sp")
    assert third.added == ["sp/empty.md"]


def test_downloads_are_bounded_and_the_next_sync_goes_on(services, drive):
    ids = _drive_tree(drive)
    _add(services, drive, ids["policies"], max_files=2)
    first = services.sources.sync(WS, "sp")
    assert len(first.added) == 2 and not first.complete and first.stopped_by == "max_files"
    second = services.sources.sync(WS, "sp")
    assert len(second.added) == 1 and second.complete and second.deleted == []


def test_a_link_off_the_services_origin_gets_no_credential(services, drive):
    """The credential goes with every delta request: a nextLink naming another host (a
    tampered or misrouted answer) fails the sync instead of carrying the token there."""
    ids = _drive_tree(drive)
    _add(services, drive, ids["policies"])
    drive.url = drive.url.replace("127.0.0.1", "localhost")  # its links now name another host
    report = services.sources.sync(WS, "sp")
    assert report.failed and "origin" in report.failed and report.added == []
    assert [p for p, _ in drive.requests()] == [f"/v1.0/drives/{drive.drive_id}/root/delta"]


def test_a_synced_folder_out_of_sight_fails_and_keeps_its_documents(services, drive):
    """After a 410 the drive is listed whole; a folder that is not in it (deleted, or hidden
    from a credential that lost its rights) fails the sync rather than emptying the library."""
    ids = _drive_tree(drive)
    _add(services, drive, ids["policies"])
    services.sources.sync(WS, "sp")
    del drive.items[ids["policies"]]  # out of the credential's sight
    drive.expire_tokens()
    report = services.sources.sync(WS, "sp")
    assert report.failed and "not in the drive" in report.failed and report.deleted == []
    assert services.library.at(WS, "sp/leave.md") is not None


def test_the_outbound_guard_checks_the_service_root(tmp_path, drive):
    closed = make_services(tmp_path / "data", embedder="none", allow_private_sources=False)
    try:
        with pytest.raises(ValidationError, match="inside the network"):
            _add(closed, drive, None)
        with pytest.raises(ValidationError, match=r"169\.254\.169\.254"):
            closed.sources.add(
                WS, "sharepoint", "meta",
                {"url": "http://169.254.169.254/v1.0", "drive_id": "x"},
                operator=True,
            )  # fmt: skip
    finally:
        closed.close()
    assert drive.requests() == []


def test_a_drive_id_is_required(services, drive):
    with pytest.raises(ValidationError, match="drive_id"):
        services.sources.add(WS, "sharepoint", "x", {"url": drive.url}, operator=True)
    assert ROOT  # the fake's root id is fixed


def test_an_app_registrations_client_credentials_get_a_token_each_sync(services, drive):
    """A credential that lasts: the app's client id and secret, exchanged for a token at the
    identity platform's token endpoint at the start of each sync; a wrong secret fails the
    sync (nothing deleted)."""
    ids = _drive_tree(drive)
    services.sources.add(
        WS, "sharepoint", "app",
        {"url": drive.url, "drive_id": drive.drive_id, "item_id": ids["policies"]},
        operator=True, credential=drive.client_credentials(),
    )  # fmt: skip
    first = services.sources.sync(WS, "app")
    assert first.failed is None and len(first.added) == 3, first
    asked = drive.requests()
    assert asked[0] == (f"/{drive.tenant}/oauth2/v2.0/token", 200)
    drive.token = "the-next-hours-token"  # the platform hands out a new one
    drive.delete(ids["leave"])
    second = services.sources.sync(WS, "app")
    assert second.failed is None and second.deleted == ["app/leave.md"]
    drive.client_secret = "rotated"
    drive.delete(ids["travel"])
    third = services.sources.sync(WS, "app")
    assert third.failed and "invalid_client" in third.failed and third.deleted == []
    assert services.library.at(WS, "app/travel.txt") is not None


def _until_complete(services, name: str, fake, most: int = 60) -> list:
    """Sync `name` run after run until one completes (each run as one scheduler turn or one
    Lambda invocation would be: a fresh read of the kept state); each run's report gets the
    paths the fake was asked (`asked`)."""
    runs = []
    while not runs or not runs[-1].complete:
        report = services.sources.sync(WS, name)
        assert report.failed is None, report
        report.asked = [p for p, _ in fake.requests()]
        runs.append(report)
        assert len(runs) < most, runs[-1]
    return runs


def test_a_listing_longer_than_a_run_goes_on_from_its_checkpoint(services, drive):
    """A first listing that takes longer than the run's time bound keeps its link and the
    items read so far; the next run goes on from there, and nothing is mirrored (so nothing
    is deleted) until a listing reaches its deltaLink."""
    folder = drive.folder("Docs")
    ids = [drive.put(f"f{n:02}.md", f"File number {n}.\n".encode(), folder) for n in range(20)]
    # One second a request: a bound of 4 s lets a run ask about four pages of two items.
    services.sources.connectors.clock = lambda: float(len(drive.log))
    _add(services, drive, None, name="big", max_seconds=4)

    runs = _until_complete(services, "big", drive)
    listing = [r for r in runs if not r.added and r.unchanged == 0]
    assert len(listing) >= 2  # the listing alone took more than one run
    assert all(r.stopped_by == "max_seconds" for r in listing)
    assert sorted(p for r in runs for p in r.added) == [f"big/Docs/f{n:02}.md" for n in range(20)]
    pages = [p for r in runs[: len(listing) + 1] for p in r.asked if "/root/delta" in p]
    assert len(pages) == len(set(pages)) > len(listing)  # no page asked twice: it went on

    # A 410 starts a full listing again: while it is partial, nothing is deleted.
    drive.delete(ids[0])
    drive.expire_tokens()
    partial = []
    while not (report := services.sources.sync(WS, "big")).complete:
        assert report.failed is None and report.deleted == [], report
        assert len(services.library.documents(WS)) == 20  # a partial listing deletes nothing
        partial.append(report)
        assert len(partial) < 60
    assert len(partial) >= 2
    assert report.deleted == ["big/Docs/f00.md"]
    assert sum(r.fetched for r in [*partial, report]) == 0  # the files it had: not downloaded


def test_a_410_on_a_kept_next_link_starts_again_and_deletes_nothing_until_whole(services, drive):
    """A checkpoint's nextLink that Graph no longer serves (410 Gone, `resyncRequired`), in
    a first listing and in a pass of changes: the listing starts again from the 410's
    `Location`, nothing the drive still holds is deleted while the new listing is partial,
    and the run that completes it deletes only what the drive lacks."""
    folder = drive.folder("Docs")
    ids = [drive.put(f"f{n:02}.md", f"File number {n}.\n".encode(), folder) for n in range(12)]
    # One second a request: a bound of 3 s lets a run ask about three pages of two items.
    services.sources.connectors.clock = lambda: float(len(drive.log))
    record = _add(services, drive, None, name="big", max_seconds=3)

    def stopped_then_expired() -> None:
        report = services.sources.sync(WS, "big")
        assert (report.complete, report.failed, report.deleted) == (False, None, []), report
        assert services.sources.states.load(record.id)["listing"]["link"]  # a nextLink kept
        drive.expire_tokens()
        drive.requests()

    def until_complete() -> tuple[list, list[int]]:
        runs, statuses = [], []
        while not runs or not runs[-1].complete:
            report = services.sources.sync(WS, "big")
            assert report.failed is None, report
            statuses += [s for p, s in drive.requests() if "/root/delta" in p]
            if services.sources.states.load(record.id).get("listing"):  # partial: none go
                assert report.deleted == [] and len(services.library.documents(WS)) == docs
            runs.append(report)
            assert len(runs) < 60
        return runs, statuses

    # A first listing whose nextLink expires between runs: listed again from the start.
    docs = 0
    stopped_then_expired()
    runs, statuses = until_complete()
    assert statuses[0] == 410 and statuses.count(410) == 1
    assert sorted(p for r in runs for p in r.added) == [f"big/Docs/f{n:02}.md" for n in range(12)]

    # A pass of changes (many pages) stopped midway, its nextLink then expired.
    for n in range(1, 12):
        drive.edit(ids[n], f"File number {n}, edited.\n".encode())
    drive.delete(ids[0])
    docs = 12
    stopped_then_expired()
    drive.delete(ids[1])  # gone while the new listing runs
    runs, statuses = until_complete()
    assert statuses[0] == 410 and statuses.count(410) == 1
    assert sorted(p for r in runs for p in r.deleted) == ["big/Docs/f00.md", "big/Docs/f01.md"]
    texts = library_texts(services, WS)
    assert len(texts) == 10 and all("edited" in t for t in texts.values()), texts


def test_a_onenote_notebook_and_an_item_shared_from_another_drive_are_not_taken(services, drive):
    folder = drive.folder("Docs")
    drive.put("plan.md", b"The plan: ship in spring.\n", folder)
    notebook = drive.put("Team Notes.md", b"", folder, facet="package")
    shared = drive.put("shared.md", b"From someone else's drive.\n", folder, facet="remoteItem")
    _add(services, drive, folder)
    report = services.sources.sync(WS, "sp")
    assert (report.failed, report.errors, report.added) == (None, {}, ["sp/plan.md"]), report
    asked = [p for p, _ in drive.requests()]
    assert not any(item in p for p in asked for item in (notebook, shared))
