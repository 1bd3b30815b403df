"""The library page with hundreds of files, in a real headless Chromium against a real server:
500 files dropped at once all land with the default limits (no manual retry, one summary
line); with a tiny burst the queue visibly waits out the server's Retry-After and still lands
every file; a failure that is not about pace shows "N failed — Retry" and Retry works; × takes
out exactly the row it is on; the list pages 25 at a time (also at 360 px), searches by name,
sorts, shows type and date, asks before a Delete, and Download opens the original."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.e2e.browser import PHONE, enter, needs_chromium, tab
from tests.e2e.rest_harness import serve

pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect

MANY = 500
UPLOADS = re.compile(r"/upload$")


def notes(folder, count: int, prefix: str = "note") -> list[str]:
    folder.mkdir(exist_ok=True)
    paths = []
    for n in range(count):
        path = folder / f"{prefix}-{n:03}.txt"
        path.write_text(f"Note {n}: the keeper logs the tide at dusk.", encoding="utf-8")
        paths.append(str(path))
    return paths


def summary(page):
    return page.locator(".upload-summary")


def test_500_files_dropped_at_once_all_land_with_the_default_limits(chromium, tmp_path):
    with serve(tmp_path / "data") as rest:
        user = rest.new_user()
        refused = []
        with tab(chromium, rest.url + "/") as t:
            page = t.page
            page.on("response", lambda r: refused.append(r) if r.status == 429 else None)
            enter(page, user.username, user.password)
            page.locator("input[type=file]").set_input_files(notes(tmp_path / "folder", MANY))
            page.get_by_role("button", name="Upload").click()
            expect(summary(page)).to_contain_text("Uploading")
            t.shoot("20-library-bulk-uploading")
            expect(summary(page)).to_have_text(f"{MANY} uploaded", timeout=240_000)
            assert page.locator(".queue li.failed").count() == 0
            assert refused == []  # the default burst holds a folder of 500
            total = user.client.get("/knowledge-bases", params={"limit": 1})
            assert total.headers["x-total-count"] == str(MANY)
            # the list is a page of 25 with paging, not 500 rows
            expect(page.get_by_text(f"1–25 of {MANY}")).to_be_visible()
            expect(page.locator(".files-table tbody tr")).to_have_count(25)
            t.shoot("21-library-bulk-done")
            page.set_viewport_size(PHONE)
            height = page.evaluate("document.documentElement.scrollHeight")
            assert height < 3600, height  # 25 small cards, not a 5,200 px list
            assert t.unexpected_errors() == []


def test_a_tiny_burst_makes_the_queue_wait_and_still_land_everything(chromium, tmp_path):
    limits = {"upload_burst": 5, "upload_rate_per_minute": 240}  # then one every 0.25 s
    with serve(tmp_path / "data", **limits) as rest:
        user = rest.new_user()
        paced = []
        with tab(chromium, rest.url + "/") as t:
            page = t.page
            page.on("response", lambda r: paced.append(r) if r.status == 429 else None)
            enter(page, user.username, user.password)
            page.locator("input[type=file]").set_input_files(notes(tmp_path / "folder", 40))
            page.get_by_role("button", name="Upload").click()
            expect(summary(page)).to_contain_text("the server asked to slow down")
            expect(page.locator(".queue li.waiting").first).to_be_visible()
            t.shoot("22-library-bulk-waiting")
            expect(summary(page)).to_have_text("40 uploaded", timeout=120_000)
            assert paced and all(r.headers["retry-after"] == "1" for r in paced)
            assert page.locator(".queue li.failed").count() == 0
            assert page.get_by_role("alert").count() == 0  # pace is never shown as a failure
            listed = user.client.get("/knowledge-bases", params={"limit": 1})
            assert listed.headers["x-total-count"] == "40"
            expect(page.get_by_role("button", name="Upload")).to_be_disabled()  # nothing chosen
            # the browser's note of each refused request is the only console error
            assert t.unexpected_errors(r"status of 429") == []


def test_failures_summarised_retry_works_and_x_removes_its_own_row(chromium, tmp_path):
    with serve(tmp_path / "data") as rest:
        user = rest.new_user()
        broken = {"left": 2}

        def flaky(route) -> None:  # the first two uploads meet a server error, no Retry-After
            if broken["left"] > 0:
                broken["left"] -= 1
                route.fulfill(status=500, json={"statusCode": 500, "message": "boom", "error": "x"})
            else:
                route.fallback()

        with tab(chromium, rest.url + "/") as t:
            page = t.page
            enter(page, user.username, user.password)
            page.route(UPLOADS, flaky)
            page.locator("input[type=file]").set_input_files(notes(tmp_path / "a", 5, "first"))
            page.get_by_role("button", name="Upload").click()
            expect(summary(page)).to_have_text("3 uploaded · 2 failed — Retry", timeout=60_000)
            expect(page.get_by_role("button", name="Upload")).to_be_disabled()
            # choose two more, then × one old failed row: the new files stay chosen
            page.locator("input[type=file]").set_input_files(notes(tmp_path / "b", 2, "second"))
            expect(page.get_by_role("button", name="Upload")).to_be_enabled()
            failed = page.locator(".queue li.failed")
            gone = failed.first.locator(".name").inner_text()
            failed.first.get_by_role("button", name=re.compile("Remove")).click()
            expect(page.locator(".queue li").filter(has_text=gone)).to_have_count(0)
            for name in ("second-000.txt", "second-001.txt"):
                expect(page.locator(".queue li").filter(has_text=name)).to_have_count(1)
            expect(summary(page)).to_have_text("3 uploaded · 1 failed — Retry")
            t.shoot("23-library-bulk-failed")
            page.get_by_role("button", name="Retry").click()
            expect(summary(page)).to_have_text("1 uploaded", timeout=60_000)
            page.get_by_role("button", name="Upload").click()
            expect(summary(page)).to_have_text("2 uploaded", timeout=60_000)
            listed = user.client.get("/knowledge-bases", params={"limit": 1})
            assert listed.headers["x-total-count"] == "6"  # 3 + the retried one + 2 new
            assert t.unexpected_errors(r"status of 500") == []


def test_the_list_searches_sorts_pages_confirms_deletes_and_downloads(chromium, tmp_path):
    with serve(tmp_path / "data") as rest:
        user = rest.new_user()
        for n in range(30):
            body = f"Ledger {n}".encode() + b"." * n * 10
            name = f"ledger-{n:02}.txt" if n != 7 else "Harbour Report.md"
            kind = "text/markdown" if n == 7 else "text/plain"
            assert (
                user.client.post("/upload", files={"file": (name, body, kind)}).status_code == 201
            )
        with tab(chromium, rest.url + "/") as t:
            page = t.page
            enter(page, user.username, user.password)
            rows = page.locator(".files-table tbody tr")
            expect(page.get_by_text("1–25 of 30")).to_be_visible()
            expect(rows).to_have_count(25)
            expect(rows.first).to_contain_text("ledger-29.txt")  # newest first
            expect(rows.first.locator("td.type")).to_have_text("TXT")
            expect(rows.first.locator("td.date time")).not_to_be_empty()
            page.get_by_role("button", name="Next").click()
            expect(page.get_by_text("26–30 of 30")).to_be_visible()
            expect(rows).to_have_count(5)
            page.get_by_label("Sort by").select_option(label="Name A–Z")
            expect(page.get_by_text("1–25 of 30")).to_be_visible()  # a new order starts at page 1
            expect(rows.first).to_contain_text("Harbour Report.md")
            page.get_by_label("Sort by").select_option(label="Largest first")
            expect(rows.first).to_contain_text("ledger-29.txt")
            page.get_by_role("searchbox", name="Filter files by name").fill("harbour")
            expect(rows).to_have_count(1)
            expect(rows.first.locator("td.type")).to_have_text("MD")
            expect(page.get_by_text("1–1 of 1")).to_be_visible()
            t.shoot("24-library-search")
            # Download: the original, through a short-lived link, in a new tab
            link = re.compile(r"/original-link$")
            with page.expect_popup() as opened, page.expect_response(link) as linked:
                rows.first.get_by_role("button", name=re.compile("Download")).click()
            url = linked.value.json()["url"]  # opened by the new tab, which needs no token
            assert httpx.get(rest.url + url).content == b"Ledger 7" + b"." * 70
            opened.value.close()
            # Delete asks first: dismissed, the file stays; accepted, it goes
            asked = []
            page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
            rows.first.get_by_role("button", name=re.compile("Delete")).click()
            expect(rows).to_have_count(1)
            assert asked and "Harbour Report.md" in asked[0]
            page.once("dialog", lambda d: d.accept())
            rows.first.get_by_role("button", name=re.compile("Delete")).click()
            expect(page.get_by_text("No file name contains “harbour”.")).to_be_visible()
            listed = user.client.get("/knowledge-bases", params={"limit": 1})
            assert listed.headers["x-total-count"] == "29"
            page.get_by_role("searchbox", name="Filter files by name").fill("")
            expect(page.get_by_text("1–25 of 29")).to_be_visible()
            t.shoot("25-library-paged")
            assert t.unexpected_errors() == []
