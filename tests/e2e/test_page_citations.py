"""Citations that point at the evidence (issue 31), over a real server: a source carries the
page (PDF), slide (pptx) or sheet (xlsx) of the sentence the answer quotes, not of where its
chunk starts, with that sentence's offsets in the passage; the same source fields at REST,
MCP `ask` and `/v1`; search hits carry their pages; the original opens by a short-lived link,
for the file's readers only."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import httpx
import openai
import pytest

from bunko.adapters.local.original_links import HmacOriginalLinks
from bunko.domain import Document
from tests.e2e.chat_harness import ask
from tests.e2e.citation_files import REPORT, SHEET, SLIDES
from tests.e2e.mcp_harness import http_client, ok
from tests.e2e.rest_harness import JWT_SECRET, assert_error, wait_until_done

SOURCE_FIELDS = {
    "fileName", "content", "score", "chunkIndex", "documentId",
    "page", "pageEnd", "quote", "quoteStart", "quoteEnd", "quotes",
}  # fmt: skip


@pytest.fixture(scope="module")
def citations_reader(rest):
    reader = rest.new_user()
    files = {
        # One chunk from page 1 to 4: where a chunk starts is not where its evidence is.
        "report.pdf": (REPORT, "application/pdf", {"chunkSize": "1000"}),
        "ferry.pptx": (SLIDES, None, {}),
        "regions.xlsx": (SHEET, None, {}),
    }
    for name, (data, mime, fields) in files.items():
        response = reader.client.post("/upload", files={"file": (name, data, mime)}, data=fields)
        assert response.status_code == 201, response.text
        assert wait_until_done(reader.client, response.json()["id"])["status"] == "completed"
    return reader


def cited(answer, name: str) -> dict:
    assert answer.done and not answer.errors, answer.events
    found = [s for s in answer.sources if s["fileName"] == name]
    assert found, answer.sources
    source = found[0]
    assert set(source) == SOURCE_FIELDS
    return source


def test_a_figure_on_a_later_page_cites_that_page_and_its_sentence(citations_reader):
    answer = ask(citations_reader.client, "How much came from the grant?")
    assert "$120,000" in answer.text
    cited(answer, "report.pdf")
    sources = [s for s in answer.sources if s["fileName"] == "report.pdf"]
    file_id = sources[0]["documentId"]
    chunks = citations_reader.client.get(f"/knowledge-bases/{file_id}/chunks").json()["chunks"]
    starts = {c["index"]: c["page"] for c in chunks}
    # One passage starts on page 1 (title and history), one on page 4: both cite page 4,
    # where the grant sentence is, and mark that sentence.
    assert {starts[s["chunkIndex"]] for s in sources} == {1, 4}
    for source in sources:
        assert source["page"] == 4 and source["pageEnd"] == 5
        assert "$120,000 came from the Maritime Heritage Fund" in source["quote"]
        passage = source["content"][source["quoteStart"] : source["quoteEnd"]]
        assert " ".join(passage.split()) == " ".join(source["quote"].split())


def test_a_slide_and_a_sheet_are_cited_by_their_number(citations_reader):
    slide = cited(
        ask(citations_reader.client, "Which colour was the ferry Aurora repainted?"), "ferry.pptx"
    )
    assert slide["page"] == 3 and "dark green" in slide["quote"]
    sheet = cited(
        ask(citations_reader.client, "Who manages the Tallinn warehouse?"), "regions.xlsx"
    )
    assert sheet["page"] == 2 and "Kadri Tamm" in sheet["quote"]


def test_search_hits_carry_their_pages(citations_reader):
    hits = citations_reader.client.get(
        "/search", params={"q": "Maritime Heritage Fund grant"}
    ).json()
    report = next(h for h in hits["items"] if h["name"] == "report.pdf")
    assert report["page"] == 1 and report["page_end"] >= 4


@pytest.mark.anyio
async def test_mcp_ask_and_v1_give_the_same_source_fields(rest, citations_reader):
    workspace = rest.services.identity.authenticate(citations_reader.token).workspace_id
    _, key = rest.services.apikeys.create(workspace_id=workspace, scopes=("kb:read",))
    question = "How much came from the grant?"
    async with http_client(rest.url, key) as client:
        result = ok(await client.call_tool("ask", {"question": question}))
        found = ok(await client.call_tool("search_text", {"content": "Maritime Heritage grant"}))
    hit = next(h for h in found["items"] if h["name"] == "report.pdf")
    assert hit["page"] == 1 and hit["page_end"] >= 4
    mcp_source = next(s for s in result["sources"] if s["fileName"] == "report.pdf")
    assert set(mcp_source) == SOURCE_FIELDS | {"number"}
    assert mcp_source["page"] == 4

    door = openai.OpenAI(base_url=rest.url + "/v1", api_key=key, max_retries=0)
    completion = door.chat.completions.create(
        model="bunko-extractive", messages=[{"role": "user", "content": question}]
    )
    v1_source = next(s for s in completion.model_extra["sources"] if s["fileName"] == "report.pdf")
    assert set(v1_source) == SOURCE_FIELDS and v1_source["page"] == 4
    # A plain OpenAI client shows the page in the answer's list of sources.
    assert "report.pdf p.4" in completion.choices[0].message.content


def test_the_original_opens_by_a_link_for_its_readers_only(rest, citations_reader):
    file_id = next(
        f["id"]
        for f in citations_reader.client.get("/knowledge-bases").json()
        if f["name"] == "report.pdf"
    )
    link = citations_reader.client.get(f"/knowledge-bases/{file_id}/original-link").json()
    assert link["fileName"] == "report.pdf" and link["mime"] == "application/pdf"
    assert 0 < link["expiresIn"] <= 900
    with httpx.Client(base_url=rest.url) as browser_tab:  # no token, as a new tab sends
        opened = browser_tab.get(link["url"])
        assert opened.status_code == 200 and opened.content == REPORT
        assert opened.headers["content-type"] == "application/pdf"
        assert opened.headers["content-disposition"].startswith('inline; filename="report.pdf"')
        # With the token, the same bytes; without either, 401.
        assert citations_reader.client.get(f"/knowledge-bases/{file_id}/original").content == REPORT
        assert_error(browser_tab.get(f"/knowledge-bases/{file_id}/original"), 401)
        # A forged or altered link is refused.
        forged = link["url"].replace("link=", "link=1") if "link=" in link["url"] else None
        assert forged and browser_tab.get(forged).status_code == 403

    stranger = rest.new_user()
    assert_error(stranger.client.get(f"/knowledge-bases/{file_id}/original-link"), 404)
    assert_error(stranger.client.get(f"/knowledge-bases/{file_id}/original"), 404)
    # Another workspace's link does not open this file (the workspace is signed).
    other = stranger.client.post(
        "/upload", files={"file": ("mine.txt", b"My own notes on ferries.", "text/plain")}
    ).json()["id"]
    wait_until_done(stranger.client, other)
    theirs = stranger.client.get(f"/knowledge-bases/{other}/original-link").json()["url"]
    with httpx.Client(base_url=rest.url) as browser_tab:
        assert browser_tab.get(theirs.replace(other, file_id)).status_code == 403


def test_an_expired_link_is_refused(rest, citations_reader):
    file_id = next(
        f["id"]
        for f in citations_reader.client.get("/knowledge-bases").json()
        if f["name"] == "report.pdf"
    )
    fresh = citations_reader.client.get(f"/knowledge-bases/{file_id}/original-link").json()
    # The same link as the server signs it (its key), issued one lifetime and a second ago.
    (workspace,) = parse_qs(urlsplit(fresh["url"]).query)["workspace"]
    report = Document(
        id=file_id,
        workspace_id=workspace,
        path="report.pdf",
        name="report.pdf",
        mime="application/pdf",
    )
    issued_before = HmacOriginalLinks(
        JWT_SECRET, clock=lambda: time.time() - fresh["expiresIn"] - 1
    )
    url = issued_before.link_to(report).url
    with httpx.Client(base_url=rest.url) as browser_tab:
        assert browser_tab.get(fresh["url"]).status_code == 200  # the key is the server's
        body = assert_error(browser_tab.get(url), 403)
    assert "expired" in body["message"]


def test_an_html_original_is_downloaded_not_shown(rest, citations_reader):
    hostile = b"<html><body><script>alert(document.domain)</script>Notes</body></html>"
    response = citations_reader.client.post(
        "/upload", files={"file": ("notes.html", hostile, "text/html")}
    )
    file_id = response.json()["id"]
    wait_until_done(citations_reader.client, file_id)
    opened = citations_reader.client.get(f"/knowledge-bases/{file_id}/original")
    assert opened.content == hostile
    assert opened.headers["content-disposition"].startswith("attachment;")
    assert "sandbox" in opened.headers["content-security-policy"]
