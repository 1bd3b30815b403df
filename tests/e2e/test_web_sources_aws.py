"""The Sources page on the AWS shape, which keeps no sources yet (issue 48, point 4): the
api function's app (under uvicorn, on moto and osmem-server) answers GET /sources 404, and
the page says the server keeps none instead of an error, with no form to add one."""

from __future__ import annotations

import pytest

from tests.e2e.browser import needs_chromium
from tests.e2e.test_web_presign_upload import deployed_shape, moto_url, tab  # noqa: F401

pytestmark = [needs_chromium]
expect = pytest.importorskip("playwright.sync_api").expect
pytest.importorskip("aws_cdk")  # the deployed shape's bucket rule comes from infra


def test_the_sources_page_says_the_aws_shape_keeps_none(tab):  # noqa: F811
    page = tab.page
    page.get_by_role("link", name="Sources").click()
    expect(page.get_by_text("This server keeps no sources yet.")).to_be_visible()
    expect(page.get_by_role("form", name="Add a source")).to_have_count(0)
    expect(page.get_by_role("alert")).to_be_hidden()
    assert tab.unexpected_errors(r"status of 404") == []
