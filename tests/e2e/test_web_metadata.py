"""Document metadata in the web app, in a real headless Chromium against a real Bunko server:
files uploaded through the page with metadata (numbers as numbers, a comma-separated list as
a list) show it as chips; "Edit metadata" replaces one file's metadata, and a refusal shows
the server's own message beside the form; the filter bar built from the library's keys
(equals, one of, between, has; all or any) narrows the listing and its count, its chips
remove conditions and Clear filter ends it; the same bar narrows a search to hits from
matching files and a chat question to sources from matching files (the filter is in the
request the page sends); a file's page shows its metadata."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.e2e.browser import DESKTOP, PHONE, SCREENSHOTS, enter, needs_chromium, tab
from tests.e2e.rest_harness import wait_until_done

pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect

TEXTS = {
    "contract.txt": "The lease contract renews each spring; the tenant pays the harbour fee.",
    "memo.txt": "A memo on the harbour fee, for the tenant council; no contract signed yet.",
    "handbook.txt": "The harbour handbook explains the fee for each berth and the tenant rules.",
    "notes.txt": "Harbour notes about the fee and the tenant, with no metadata at all.",
}
QUESTION = "What is the harbour fee for the tenant?"


def write(folder, *names: str) -> list[str]:
    folder.mkdir(exist_ok=True)
    for name in names:
        (folder / name).write_text(TEXTS[name], encoding="utf-8")
    return [str(folder / name) for name in names]


def row_of(page, name: str):
    return page.locator(".files-table tbody tr").filter(has=page.get_by_role("link", name=name))


def listed_names(page) -> list[str]:
    return sorted(page.locator(".files-table tbody td.name a").all_inner_texts())


def shoot_screen(page, name: str) -> None:
    """The screen as it is seen, not the whole page (whose screenshot stretches the page past a
    dialog's backdrop, and puts the chat's pinned message box mid-page), on a desktop and on a
    360 px phone."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for label, size in (("desktop", DESKTOP), ("360px", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=SCREENSHOTS / f"{name}-{label}.png")
    page.set_viewport_size(DESKTOP)


def calm(page) -> None:
    """No toast on screen and no finished upload row left (for a clean screenshot)."""
    expect(page.locator("#toast")).not_to_have_class(re.compile(r"\bshow\b"), timeout=10_000)
    expect(page.locator(".queue li")).to_have_count(0)


def add_condition(page, key: str, op: str, fields: dict[str, str] | None = None) -> None:
    """Opens the filter bar's builder, picks key and operator, fills the value fields (by
    their labels), adds the condition."""
    bar = page.get_by_role("group", name="Metadata filter")
    bar.get_by_role("button", name="Add condition").click()
    builder = bar.get_by_role("group", name="Add condition")
    builder.get_by_label("Key").select_option(key)
    builder.get_by_label("Condition").select_option(label=op)
    for label, value in (fields or {}).items():
        builder.get_by_label(label, exact=True).fill(value)
    builder.get_by_role("button", name="Add", exact=True).click()
    expect(builder).to_be_hidden()


def test_upload_with_metadata_edit_it_and_filter_the_library(rest, chromium, tmp_path):
    user = rest.new_user()
    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, user.username, user.password)
        files = page.locator("input[type=file]")
        summary = page.locator(".upload-summary")

        # two files with team, year (a number) and tags (a comma-separated list)
        files.set_input_files(write(tmp_path, "contract.txt", "memo.txt"))
        page.get_by_text("Metadata for these files (optional)").click()
        editor = page.locator(".upload-meta")
        editor.get_by_label("Key 1").fill("team")
        editor.get_by_label("Value 1").fill("legal")
        editor.get_by_role("button", name="Add a row").click()
        expect(editor.get_by_label("Key 2")).to_be_focused()
        page.keyboard.type("year")
        page.keyboard.press("Tab")
        page.keyboard.type("2021")
        editor.get_by_role("button", name="Add a row").click()
        editor.get_by_label("Key 3").fill("tags")
        editor.get_by_label("Value 3").fill("lease, harbour")
        editor.get_by_label("List: row 3 holds comma-separated values").check()
        t.shoot("metadata_upload")
        page.get_by_role("button", name="Upload").click()
        expect(summary).to_have_text("2 uploaded", timeout=60_000)

        # the rows empty after each upload (issue 49): one more for ops, one with no metadata
        expect(editor.get_by_label("Key 1")).to_have_value("")
        expect(editor.get_by_label("Key 2")).to_have_count(0)
        files.set_input_files(write(tmp_path, "handbook.txt"))
        page.get_by_text("Metadata for these files (optional)").click()
        editor.get_by_label("Key 1").fill("team")
        editor.get_by_label("Value 1").fill("ops")
        editor.get_by_role("button", name="Add a row").click()
        editor.get_by_label("Key 2").fill("year")
        editor.get_by_label("Value 2").fill("2023")
        editor.get_by_role("button", name="Remove row 2").click()
        editor.get_by_role("button", name="Remove row 1").click()
        expect(editor.get_by_role("button", name="Add a row")).to_be_focused()  # none left
        editor.get_by_role("button", name="Add a row").click()
        editor.get_by_label("Key 1").fill("team")
        editor.get_by_label("Value 1").fill("ops")
        editor.get_by_role("button", name="Add a row").click()
        editor.get_by_label("Key 2").fill("year")
        editor.get_by_label("Value 2").fill("2023")
        page.get_by_role("button", name="Upload").click()
        expect(summary).to_have_text("1 uploaded", timeout=60_000)
        files.set_input_files(write(tmp_path, "notes.txt"))
        expect(editor.get_by_label("Key 1")).to_have_value("")
        page.get_by_role("button", name="Upload").click()
        expect(summary).to_have_text("1 uploaded", timeout=60_000)
        for name in TEXTS:
            expect(row_of(page, name).get_by_text("completed")).to_be_visible(timeout=60_000)

        records = {f["name"]: f for f in user.client.get("/knowledge-bases").json()}
        assert records["contract.txt"]["metadata"] == {
            "team": "legal", "year": 2021, "tags": ["lease", "harbour"],
        }  # fmt: skip
        assert records["memo.txt"]["metadata"] == records["contract.txt"]["metadata"]
        assert records["handbook.txt"]["metadata"] == {"team": "ops", "year": 2023}
        assert records["notes.txt"]["metadata"] == {}

        chips = row_of(page, "contract.txt").get_by_role("list", name="Metadata of contract.txt")
        expect(chips.get_by_role("listitem")).to_have_text(
            ["team: legal", "year: 2021", "tags: lease, harbour"]
        )
        expect(row_of(page, "notes.txt").locator(".meta-chips")).to_have_count(0)
        calm(page)
        t.shoot("metadata_library")

        # Edit metadata: change a value, drop the list, add a date; saved as the rows say
        row_of(page, "memo.txt").get_by_role("button", name="Edit metadata of memo.txt").click()
        dialog = page.get_by_role("dialog", name="Metadata of “memo.txt”")
        expect(dialog.get_by_label("Key 1")).to_be_focused()
        expect(dialog.get_by_label("Value 3")).to_have_value("lease, harbour")
        expect(dialog.get_by_label("List: row 3 holds comma-separated values")).to_be_checked()
        dialog.get_by_label("Value 2").fill("2024")
        dialog.get_by_role("button", name="Remove row 3").click()
        dialog.get_by_role("button", name="Add a row").click()
        dialog.get_by_label("Key 3").fill("reviewed")
        dialog.get_by_label("Value 3").fill("2024-05-01")
        shoot_screen(page, "metadata_edit")
        dialog.get_by_role("button", name="Save").click()
        expect(dialog).to_be_hidden()
        expect(row_of(page, "memo.txt").locator(".meta-chips li")).to_have_text(
            ["team: legal", "year: 2024", "reviewed: 2024-05-01"]
        )
        expect(page.get_by_role("button", name="Edit metadata of memo.txt")).to_be_focused()
        memo = user.client.get(f"/knowledge-bases/{records['memo.txt']['id']}").json()
        assert memo["metadata"] == {"team": "legal", "year": 2024, "reviewed": "2024-05-01"}

        # a refused edit: the server's message beside the form, nothing saved, the form open
        row_of(page, "notes.txt").get_by_role("button", name="Edit metadata of notes.txt").click()
        dialog = page.get_by_role("dialog", name="Metadata of “notes.txt”")
        calm(page)
        dialog.get_by_label("Key 1").fill("category")
        dialog.get_by_label("Value 1").fill("memos")
        with page.expect_response(re.compile(r"/metadata$")) as refused:
            dialog.get_by_role("button", name="Save").click()
        assert refused.value.status == 400
        said = refused.value.json()["message"]
        said = "; ".join(said) if isinstance(said, list) else said
        assert "category" in said
        expect(dialog.get_by_role("alert")).to_have_text(said)
        shoot_screen(page, "metadata_edit_refused")
        dialog.get_by_role("button", name="Cancel").click()
        expect(dialog).to_be_hidden()
        notes = user.client.get(f"/knowledge-bases/{records['notes.txt']['id']}").json()
        assert notes["metadata"] == {}

        # the filter bar: team equals legal → the two legal files, counted
        listing = re.compile(r"/knowledge-bases\?.*filter=")
        with page.expect_response(listing) as asked:
            add_condition(page, "team", "equals", {"Value": "legal"})
        sent = json.loads(parse_qs(urlsplit(asked.value.url).query)["filter"][0])
        assert sent == {"equals": {"key": "team", "value": "legal"}}
        expect(page.get_by_text("1–2 of 2")).to_be_visible()
        assert listed_names(page) == ["contract.txt", "memo.txt"]
        # and year between 2022 and 2025 (numbers): memo alone
        add_condition(page, "year", "between", {"From": "2022", "To": "2025"})
        expect(page.get_by_text("1–1 of 1")).to_be_visible()
        assert listed_names(page) == ["memo.txt"]
        active = page.get_by_role("list", name="Active filter conditions").get_by_role("listitem")
        expect(active).to_have_text(["team = legal×", "year 2022 – 2025×"])
        page.get_by_role("button", name="Add condition").click()  # the builder, for the picture
        calm(page)
        t.shoot("metadata_filter")
        page.keyboard.press("Escape")
        # any condition: legal, or a year in range (handbook, 2023)
        page.get_by_role("combobox", name="Match").select_option(label="any condition")
        expect(page.get_by_text("1–3 of 3")).to_be_visible()
        assert listed_names(page) == ["contract.txt", "handbook.txt", "memo.txt"]
        # × on a chip removes that condition; the filter is kept while the person moves on
        page.get_by_role("button", name="Remove condition: team = legal").click()
        expect(page.get_by_text("1–2 of 2")).to_be_visible()
        assert listed_names(page) == ["handbook.txt", "memo.txt"]
        page.get_by_role("link", name="Search").click()
        page.get_by_role("link", name="Library").click()
        expect(page.get_by_text("1–2 of 2")).to_be_visible()
        # one of, has
        page.get_by_role("button", name="Clear filter").click()
        expect(page.get_by_text("1–4 of 4")).to_be_visible()
        expect(page.get_by_role("button", name="Clear filter")).to_be_hidden()
        add_condition(page, "team", "one of", {"Values (comma-separated)": "ops, hr"})
        expect(page.get_by_text("1–1 of 1")).to_be_visible()
        assert listed_names(page) == ["handbook.txt"]
        page.get_by_role("button", name="Clear filter").click()
        add_condition(page, "reviewed", "has (any value)")
        expect(page.get_by_text("1–1 of 1")).to_be_visible()
        assert listed_names(page) == ["memo.txt"]
        page.get_by_role("button", name="Clear filter").click()
        expect(page.get_by_text("1–4 of 4")).to_be_visible()
        assert t.unexpected_errors(r"status of 400") == []


@pytest.fixture(scope="module")
def seeded(rest):
    """A user whose four files carry metadata (set through the API: the page's upload is the
    test above's)."""
    user = rest.new_user()
    metadata = {
        "contract.txt": {"team": "legal", "year": 2021},
        "memo.txt": {"team": "legal", "year": 2024},
        "handbook.txt": {"team": "ops", "year": 2023},
        "notes.txt": None,
    }
    for name, given in metadata.items():
        form = {"metadata": json.dumps(given)} if given else {}
        sent = user.client.post(
            "/upload", files={"file": (name, TEXTS[name].encode(), "text/plain")}, data=form
        )
        assert sent.status_code == 201, sent.text
        assert wait_until_done(user.client, sent.json()["id"])["status"] == "completed"
    return user


def test_a_search_with_a_filter_finds_only_matching_files(rest, chromium, seeded):
    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, seeded.username, seeded.password)
        page.get_by_role("link", name="Search").click()
        box = page.get_by_role("searchbox", name="Search")
        box.fill("harbour fee tenant")
        box.press("Enter")
        hits = page.locator(".hit")
        expect(hits).to_have_count(4)  # every file holds the words
        with page.expect_request(re.compile(r"/search\?.*filter=")) as asked:
            add_condition(page, "team", "equals", {"Value": "legal"})  # runs the search again
        assert "team" in asked.value.url
        expect(hits).to_have_count(2)
        names = sorted(hits.locator(".row a").all_inner_texts())
        assert names == ["contract.txt", "memo.txt"]
        expect(hits.first.locator(".meta-chips")).to_contain_text("legal")
        t.shoot("metadata_search")
        page.get_by_role("button", name="Remove condition: team = legal").click()
        expect(hits).to_have_count(4)
        # a hit opens its file, whose page shows the metadata too
        page.locator(".hit").get_by_role("link", name="contract.txt").click()
        shown = page.get_by_role("list", name="Metadata of contract.txt").get_by_role("listitem")
        expect(shown).to_have_text(["team: legal", "year: 2021"])
        assert t.errors == []


def test_a_chat_question_with_a_filter_cites_only_matching_files(rest, chromium, seeded):
    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, seeded.username, seeded.password)
        page.get_by_role("link", name="Chat").click()
        expect(page.get_by_role("heading", name="Chat")).to_be_visible()
        add_condition(page, "team", "equals", {"Value": "ops"})
        active = page.get_by_role("list", name="Active filter conditions")
        expect(active.get_by_role("listitem")).to_have_text(["team = ops×"])
        page.get_by_role("textbox", name="Message").fill(QUESTION)
        with page.expect_request(re.compile(r"/chat/stream$")) as asked:
            page.get_by_role("button", name="Send").click()
        assert asked.value.post_data_json["filter"] == {"equals": {"key": "team", "value": "ops"}}
        answer = page.locator(".msg.assistant").last
        sources = answer.get_by_role("region", name="Sources")
        expect(sources).to_contain_text("handbook.txt", timeout=60_000)
        expect(page.get_by_role("button", name="Send")).to_be_enabled()
        cited = sources.locator(".source-name").all_inner_texts()
        assert cited == ["handbook.txt"], cited
        expect(page.locator(".msg.user").last).to_contain_text("Filter: team = ops")
        t.shoot("metadata_chat")
        shoot_screen(page, "metadata_chat_screen")

        # without the filter the same question cites the other files too
        page.get_by_role("button", name="Remove condition: team = ops").click()
        expect(active).to_be_hidden()
        page.get_by_role("textbox", name="Message").fill(QUESTION)
        with page.expect_request(re.compile(r"/chat/stream$")) as asked:
            page.get_by_role("button", name="Send").click()
        assert "filter" not in asked.value.post_data_json
        answer = page.locator(".msg.assistant").last
        expect(answer.get_by_role("region", name="Sources")).to_contain_text(
            "contract.txt", timeout=60_000
        )
        expect(page.get_by_role("button", name="Send")).to_be_enabled()
        assert t.errors == []
