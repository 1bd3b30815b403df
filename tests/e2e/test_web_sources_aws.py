"""The Sources page on the AWS shape (issue 48, point 4): the api function's app (under
uvicorn, on moto and osmem-server) keeps sources in the table, so the page lists none at
first and offers the form. A Git repository, served over Git's smart HTTP protocol on a local
socket (`git http-backend`), is tested, added and synced there: the functions read it with
dulwich, as they have no `git` binary."""

from __future__ import annotations

import pytest

from tests.e2e.browser import needs_chromium, shoot
from tests.e2e.git_repo import Repo
from tests.e2e.git_smart_http import SmartGitOverHttp

pytestmark = [needs_chromium]
expect = pytest.importorskip("playwright.sync_api").expect
pytest.importorskip("aws_cdk")  # the deployed shape's bucket rule comes from infra


@pytest.fixture
def served_on_loopback(tmp_path, monkeypatch):
    """The repository, and the app allowed to reach loopback (set before the app is built)."""
    monkeypatch.setenv("BUNKO_ALLOW_PRIVATE_SOURCES", "true")
    monkeypatch.setenv("BUNKO_SCRATCH_DIR", str(tmp_path))  # the function's /tmp
    repo = Repo(tmp_path / "repo")
    repo.write("README.md", "# Handbook\n\nHow the ferry crew works.\n")
    repo.write("docs/leave.md", "Leave policy: twenty days a year.\n")
    repo.commit("first")
    served = SmartGitOverHttp(repo, tmp_path / "served")
    yield served
    served.close()


def test_the_sources_page_on_aws_adds_and_syncs_a_git_repository(served_on_loopback, deployed_tab):
    page = deployed_tab.page
    page.get_by_role("link", name="Sources").click()
    expect(page.get_by_text("No sources yet.")).to_be_visible()
    form = page.get_by_role("form", name="Add a source")
    form.get_by_label("Kind").select_option("git")
    form.get_by_label("Name", exact=True).fill("repo")
    form.get_by_label("Repository URL").fill(served_on_loopback.url)
    form.get_by_role("button", name="Test connection").click()
    expect(form.get_by_role("status")).to_contain_text("branch main is at")
    form.get_by_role("button", name="Add source").click()
    card = page.get_by_role("region", name="repo")
    expect(card.get_by_text("Git repository")).to_be_visible()
    card.get_by_role("button", name="Sync now").click()
    expect(card.locator(".last-sync")).to_contain_text("2 added")
    assert any(path.endswith("/git-upload-pack") for _, path, _ in served_on_loopback.log)
    shoot(page, "48-sources-git-aws")
    page.get_by_role("link", name="Library", exact=True).click()
    expect(page.get_by_text("leave.md")).to_be_visible()
    assert deployed_tab.unexpected_errors() == []
