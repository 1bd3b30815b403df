"""Sources on the AWS shape (issue 48 point 4): REST /sources through the API handler, and
the sync function invoked with the event EventBridge Scheduler sends (the schedule's input,
events/sources_schedule.json), over DynamoDB on moto: a due source syncs and its schedule
lives in the table; a paused one does not; a failing one does not stop another; no sync
starts once the invocation's time (less the margin) is spent. A Git source on AWS:
tests/aws/test_git_sources_on_aws.py."""

from __future__ import annotations

import time

import pytest

from bunko import lambda_entry
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import call, load_event, load_function, sign_in
from tests.e2e.local_site import LocalSite


class ShortContext(FakeLambdaContext):
    def get_remaining_time_in_millis(self) -> int:
        return 30_500  # the margin and half a second: no sync may start


@pytest.fixture
def sync_env(api_with_accounts, monkeypatch):
    monkeypatch.setenv("BUNKO_ALLOW_PRIVATE_SOURCES", "true")  # the test's site is on loopback
    lambda_entry.sources.cache_clear()
    yield api_with_accounts, load_function("sources")
    lambda_entry.sources.cache_clear()


@pytest.fixture
def aws_site():
    s = LocalSite()
    s.html("/", "<main><p>Ferries leave the harbour every hour. <a href='/old.html'>old</a>"
           "</p></main>", title="Home")  # fmt: skip
    s.html("/old.html", "<main><p>The winter timetable, now retired.</p></main>", title="Old")
    yield s
    s.close()


def test_rest_sources_on_aws(sync_env, aws_site):
    api, _ = sync_env
    token = sign_in(api)
    status, made = call(api, "POST", "/sources", {"kind": "web", "name": "site",
                        "url": aws_site.url + "/", "every": "1h"}, token=token)  # fmt: skip
    assert status == 201, made
    assert made["every"] == "1h" and made["nextSyncAt"] is not None
    status, refused = call(api, "POST", "/sources", {"kind": "git", "name": "repo",
                           "url": "/var/task"}, token=token)  # fmt: skip
    assert status == 400 and "https://" in refused["message"]  # a path is the function's own
    status, listed = call(api, "GET", "/sources", token=token)
    assert status == 200 and [s["name"] for s in listed] == ["site"]


def test_the_scheduled_sync_function_syncs_what_is_due(sync_env, aws_site):
    api, function = sync_env
    token = sign_in(api)
    down = LocalSite()
    down.close()  # nothing answers: its sync fails
    for name, url, paused in (
        ("a-down", down.url + "/", False),
        ("b-site", aws_site.url + "/", False),
        ("c-paused", aws_site.url + "/", True),
    ):
        status, made = call(api, "POST", "/sources", {"kind": "web", "name": name, "url": url,
                            "folder": name, "paused": paused}, token=token)  # fmt: skip
        assert status == 201, made
    ids = {s["name"]: s["id"] for s in call(api, "GET", "/sources", token=token)[1]}
    event = load_event("sources_schedule.json")

    assert function.handler(event, ShortContext()) == {"synced": [], "failed": {}}
    answer = function.handler(event, FakeLambdaContext())
    assert answer["synced"] == [ids["b-site"]]
    assert list(answer["failed"]) == [ids["a-down"]]
    listed = {s["name"]: s for s in call(api, "GET", "/sources", token=token)[1]}
    assert listed["b-site"]["lastSync"]["added"] == 2
    assert listed["a-down"]["lastSync"]["failed"].startswith("robots.txt")
    assert listed["c-paused"]["lastSync"] is None and listed["c-paused"]["nextSyncAt"] is None
    assert listed["b-site"]["nextSyncAt"] == pytest.approx(
        listed["b-site"]["lastSync"]["at"] + 6 * 3600
    )
    # The schedule is in the table: a new execution environment finds nothing due now.
    lambda_entry.sources.cache_clear()
    assert function.handler(event, FakeLambdaContext()) == {"synced": [], "failed": {}}
    files = call(api, "GET", "/knowledge-bases", token=token)[1]
    assert {f["source"] for f in files} == {f"connector:{ids['b-site']}"} and len(files) == 2

    # Six hours on, the page the site dropped goes from the library (blob, index, table).
    aws_site.html("/", "<main><p>Ferries leave the harbour every hour.</p></main>")
    del aws_site.pages["/old.html"]
    lambda_entry.sources().now = lambda: time.time() + 6 * 3600 + 60
    answer = function.handler(event, FakeLambdaContext())
    assert answer["synced"] == [ids["b-site"]] and list(answer["failed"]) == [ids["a-down"]]
    files = call(api, "GET", "/knowledge-bases", token=token)[1]
    assert [f["originalName"] for f in files] == ["index.md"]
