"""The Sources page on the AWS shape (issue 48, point 4): the api function's app (under
uvicorn, on moto and osmem-server) keeps sources in the table, so the page lists none at
first and offers the form; a Git source is refused there with the reason (the functions'
runtime has no `git`), shown to the person, and nothing is added."""

from __future__ import annotations

import pytest

from tests.e2e.browser import needs_chromium
from tests.e2e.test_web_presign_upload import deployed_shape, moto_url, tab  # noqa: F401

pytestmark = [needs_chromium]
expect = pytest.importorskip("playwright.sync_api").expect
pytest.importorskip("aws_cdk")  # the deployed shape's bucket rule comes from infra


def test_the_sources_page_on_aws_refuses_git_with_its_reason(tab):  # noqa: F811
    page = tab.page
    page.get_by_role("link", name="Sources").click()
    expect(page.get_by_text("No sources yet.")).to_be_visible()
    form = page.get_by_role("form", name="Add a source")
    form.get_by_label("Kind").select_option("git")
    form.get_by_label("Name", exact=True).fill("repo")
    form.get_by_label("Repository URL").fill("https://git.example.com/team/handbook.git")
    form.get_by_role("button", name="Add source").click()
    expect(page.get_by_role("alert")).to_contain_text("git sources are not synced on AWS")
    expect(page.get_by_text("No sources yet.")).to_be_visible()
    assert tab.unexpected_errors(r"status of 400") == []
