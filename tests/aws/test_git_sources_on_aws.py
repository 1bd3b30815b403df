"""A Git source on the AWS shape (issue 48): the functions' runtime has no `git` binary, so
the repository is read with dulwich, over Git's smart HTTP protocol (`git http-backend` on a
local socket, a real repository made in the test), into the function's /tmp (here the test's
own folder), with the state in DynamoDB on moto. Commits that add, change, delete and rename
are mirrored, by the scheduled sync function and by REST's sync now; a new function instance
(an empty /tmp) still keeps a renamed file's document; a local path or a file:// URL is
refused; a redirect is not followed and deletes nothing."""

from __future__ import annotations

import shutil
import time

import pytest

from bunko import lambda_entry
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import call, load_event, load_function, sign_in
from tests.e2e.git_repo import Repo
from tests.e2e.git_smart_http import SmartGitOverHttp


@pytest.fixture
def git_env(api_with_accounts, aws_env, monkeypatch, tmp_path):
    monkeypatch.setenv("BUNKO_ALLOW_PRIVATE_SOURCES", "true")  # the test's server: loopback
    scratch = tmp_path / "lambda-tmp"
    scratch.mkdir()
    monkeypatch.setenv("BUNKO_SCRATCH_DIR", str(scratch))  # the function's /tmp
    lambda_entry.sources.cache_clear()
    ingest = load_function("ingest")

    def index() -> None:
        """What the ingest function does with the queue's jobs: the documents settle (a
        document being indexed is not renamed: the next sync would tell it again)."""
        for message in aws_env.receive_all(aws_env.queue_url):
            event = load_event("sqs_ingest_job.json")
            event["Records"][0]["body"] = message["Body"]
            assert ingest.handler(event, FakeLambdaContext()) == {"batchItemFailures": []}

    yield api_with_accounts, load_function("sources"), scratch, index
    lambda_entry.sources.cache_clear()


@pytest.fixture
def handbook_over_smart_http(tmp_path):
    repo = Repo(tmp_path / "repo")
    repo.write("README.md", "# Handbook\n\nHow the ferry crew works.\n")
    repo.write("docs/leave.md", "Leave policy: twenty days a year.\n")
    repo.write("docs/old.md", "An outdated page about fax machines.\n")
    repo.write("docs/moving.md", "Boarding starts twenty minutes before departure.\n")
    repo.write("drafts/wip.md", "Draft, not for the library.\n")
    repo.commit("first")
    s = SmartGitOverHttp(repo, tmp_path / "served")
    yield s
    s.close()


def _files(api, token: str) -> dict[str, dict]:
    status, files = call(api, "GET", "/knowledge-bases", token=token)
    assert status == 200, files
    return {f["name"]: f for f in files}


def test_a_git_source_syncs_on_aws(git_env, handbook_over_smart_http):
    served = handbook_over_smart_http
    api, function, scratch, index = git_env
    token = sign_in(api)
    status, made = call(api, "POST", "/sources", {"kind": "git", "name": "handbook",
                        "url": served.url, "exclude": ["drafts/"]}, token=token)  # fmt: skip
    assert status == 201, made

    # The scheduled sync function reads it from empty: every file, over smart HTTP.
    answer = function.handler(load_event("sources_schedule.json"), FakeLambdaContext())
    assert answer == {"synced": [made["id"]], "failed": {}}
    assert any(path.endswith("/git-upload-pack") for _, path, _ in served.log)
    files = _files(api, token)
    assert sorted(files) == ["handbook/README.md", "handbook/docs/leave.md",
                             "handbook/docs/moving.md", "handbook/docs/old.md"]  # fmt: skip
    assert {f["source"] for f in files.values()} == {f"connector:{made['id']}"}
    assert list((scratch / "bunko-git").iterdir()) == [scratch / "bunko-git" / f"{made['id']}.git"]
    index()

    # A commit that changes, deletes and renames; a hand upload beside them survives.
    repo = served.repo
    repo.write("docs/leave.md", "Leave policy: twenty-five days a year.\n")
    repo.git("rm", "--quiet", "docs/old.md")
    repo.git("mv", "docs/moving.md", "docs/boarding.md")
    repo.write("docs/new.md", "Tickets are checked at the gangway.\n")
    repo.commit("second")
    served.update()
    before = len(served.log)
    status, report = call(api, "POST", "/sources/handbook/sync", token=token)
    assert status == 200, report
    assert report["added"] == ["handbook/docs/new.md"]
    assert report["changed"] == ["handbook/docs/leave.md"]
    assert report["deleted"] == ["handbook/docs/old.md"]
    assert report["renamed"] == [["handbook/docs/moving.md", "handbook/docs/boarding.md"]]
    assert report["fetched"] == 2 and report["failed"] is None  # the two new blobs only
    # The fetch told the server what the copy has: its answer carries the new objects only.
    assert sum(n for _, _, n in served.log[before:]) < 2_000
    after = _files(api, token)
    assert after["handbook/docs/boarding.md"]["id"] == files["handbook/docs/moving.md"]["id"]
    assert "handbook/docs/old.md" not in after
    index()

    # A new function instance: /tmp is empty, the state in the table. The next commit's
    # rename is still told (by blob id), so the file keeps its document.
    shutil.rmtree(scratch / "bunko-git")
    lambda_entry.sources.cache_clear()
    repo.git("mv", "docs/boarding.md", "boarding.md")
    repo.commit("third")
    served.update()
    lambda_entry.sources().now = lambda: time.time() + 6 * 3600 + 60
    answer = function.handler(load_event("sources_schedule.json"), FakeLambdaContext())
    assert answer == {"synced": [made["id"]], "failed": {}}
    status, listed = call(api, "GET", "/sources", token=token)
    last = listed[0]["lastSync"]
    assert (last["added"], last["deleted"], last["renamed"]) == (0, 0, 1), last
    final = _files(api, token)
    assert final["handbook/boarding.md"]["id"] == files["handbook/docs/moving.md"]["id"]
    assert "handbook/docs/boarding.md" not in final


def test_a_redirect_is_not_followed_and_deletes_nothing(git_env, handbook_over_smart_http):
    served = handbook_over_smart_http
    api, _, _, index = git_env
    token = sign_in(api)
    status, made = call(api, "POST", "/sources", {"kind": "git", "name": "handbook",
                        "url": served.url}, token=token)  # fmt: skip
    assert status == 201, made
    status, report = call(api, "POST", "/sources/handbook/sync", token=token)
    assert status == 200 and len(report["added"]) == 5, report
    index()

    served.redirect_to = "http://169.254.169.254/latest/meta-data/"
    before = len(served.log)
    status, report = call(api, "POST", "/sources/handbook/sync", token=token)
    assert status == 200 and "redirect" in report["failed"], report
    assert report["deleted"] == [] and len(_files(api, token)) == 5
    assert len(served.log) == before + 1  # the first answer, a 302; its target never asked


@pytest.mark.parametrize("url", ["/var/task", "file:///var/task", "ssh://git@example.com/x.git"])
def test_a_path_or_another_transport_is_refused_on_aws(git_env, url):
    api = git_env[0]
    token = sign_in(api)
    status, refused = call(api, "POST", "/sources", {"kind": "git", "name": "repo",
                           "url": url}, token=token)  # fmt: skip
    assert status == 400, refused
    assert call(api, "GET", "/sources", token=token)[1] == []
