"""A source's schedule (issue 48 point 4): each source syncs by itself every `every` after its
last sync unless paused or on demand only; what is due is synced one source after another,
one's failure recorded on it and never stopping the next; a sync a bound stopped goes on
soon; and the schedule lives in the data folder, so a restart picks it up. Real sites on a
socket, real repositories, a real data folder; only the clock is the test's."""

from __future__ import annotations

import time

import pytest

from bunko.errors import ValidationError
from bunko.ports.sources import WebAnswer
from bunko.services.sources import parse_every
from tests.conftest import make_services
from tests.e2e.git_repo import Repo
from tests.e2e.local_site import LocalSite
from tests.e2e.rest_harness import serve

HOUR = 3600.0
T0 = 1_900_000_000.0


class Clock:
    def __init__(self, at: float) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at


@pytest.fixture
def home_site():
    s = LocalSite()
    s.html("/", "<main><p>Welcome. <a href='/a.html'>a</a></p></main>", title="Home")
    s.html("/a.html", "<main><p>Otters hold hands while they sleep.</p></main>", title="A")
    yield s
    s.close()


def _web(services, name: str, url: str, *, folder: str | None = None, **schedule):
    settings = {"url": url, "folder": folder}
    return services.sources.add("default", "web", name, settings, operator=True, **schedule)


def test_a_due_source_syncs_and_a_paused_or_manual_one_does_not(services, home_site):
    clock = services.sources.now = Clock(T0)
    _web(services, "due", home_site.url + "/", every="1h")
    _web(services, "paused", home_site.url + "/", every="1h", paused=True, folder="p")
    _web(services, "manual", home_site.url + "/", every="off", folder="m")
    listed = {r.name: r for r in services.sources.list("default")}
    assert listed["due"].next_sync_at == T0  # never synced: due at once
    assert listed["paused"].next_sync_at is None and listed["manual"].next_sync_at is None

    done = services.sources.sync_due(now=T0)
    assert [(d.record.name, d.failed, sorted(d.report.added)) for d in done] == [
        ("due", None, ["due/127.0.0.1/a.md", "due/127.0.0.1/index.md"])
    ]
    requests = len(home_site.log)
    record = services.sources.get("default", "due")
    assert record.last_sync["at"] == T0 and record.next_sync_at == T0 + HOUR
    assert services.sources.sync_due(now=T0 + HOUR / 2) == []  # not yet
    assert len(home_site.log) == requests  # nothing asked of the site meanwhile

    clock.at = T0 + HOUR
    again = services.sources.sync_due(now=clock.at)
    assert [(d.record.name, d.report.not_modified) for d in again] == [("due", 2)]
    # Resumed, the paused one (never synced) is due at once; a manual sync still works.
    services.sources.set_schedule("default", "paused", paused=False)
    assert [r.name for r in services.sources.due(clock.at)] == ["paused"]
    assert services.sources.sync("default", "manual").added
    assert services.sources.get("default", "manual").next_sync_at is None
    assert services.ingest.wait_for_queue(timeout=60)


def test_a_failing_source_does_not_stop_another(services, home_site):
    services.sources.now = Clock(T0)
    down = LocalSite()
    down.close()  # nothing answers there: robots.txt unreachable, the sync fails
    _web(services, "a-down", down.url + "/", every="1h")
    raising = home_site.url.replace("127.0.0.1", "localhost")
    _web(services, "b-raises", raising + "/", every="1h", folder="b")
    _web(services, "c-up", home_site.url + "/", every="1h", folder="c")
    real = services.sources.connectors.web

    class Raising:  # a fetcher that breaks on one host, as a bug in a connector would
        def get(self, url, headers, **kw) -> WebAnswer:
            if url.startswith(raising):
                raise RuntimeError("connector bug")
            return real.get(url, headers, **kw)

    services.sources.connectors.web = Raising()  # the syncs read through it
    done = {d.record.name: d for d in services.sources.sync_due(now=T0)}
    assert done["a-down"].failed.startswith("robots.txt")
    assert done["b-raises"].failed == "RuntimeError: connector bug"
    assert done["c-up"].failed is None and len(done["c-up"].report.added) == 2
    for name in ("a-down", "b-raises"):
        record = services.sources.get("default", name)
        assert record.last_sync["failed"] and record.last_sync["at"] == T0
        assert record.next_sync_at == T0 + HOUR  # tried again a period later, not at once
    assert services.sources.due(T0 + 60) == []
    assert services.ingest.wait_for_queue(timeout=60)


def test_a_sync_a_bound_stopped_goes_on_soon_and_a_deadline_is_a_bound(services, tmp_path):
    clock = services.sources.now = Clock(T0)
    repo = Repo(tmp_path / "repo")
    for n in range(5):
        repo.write(f"doc{n}.md", f"Document number {n} about the harbour.\n")
    repo.commit("five")
    services.sources.add(
        "default", "git", "repo", {"url": str(repo.root), "max_files": 2}, operator=True
    )
    first = services.sources.sync_due(now=T0)[0].report
    assert len(first.added) == 2 and not first.complete and first.stopped_by == "max_files"
    assert services.sources.get("default", "repo").next_sync_at == T0 + 60
    clock.at = T0 + 60
    second = services.sources.sync_due(now=clock.at)[0].report
    assert len(second.added) == 2 and not second.complete
    # No sync starts once the deadline (on the sources' own clock) has passed.
    assert services.sources.sync_due(now=T0 + 120, deadline=services.sources.clock() - 1) == []
    clock.at = T0 + 120
    third = services.sources.sync_due(now=clock.at)[0].report
    assert len(third.added) == 1 and third.complete
    assert services.sources.get("default", "repo").next_sync_at == T0 + 120 + 6 * HOUR
    assert services.ingest.wait_for_queue(timeout=60)


def test_a_restart_picks_up_the_schedule(tmp_path, home_site):
    data = tmp_path / "data"
    first = make_services(data, embedder="none")
    try:
        first.sources.now = Clock(T0)
        _web(first, "site", home_site.url + "/", every="2h")
        _web(first, "later", home_site.url + "/", every="1d", paused=True, folder="l")
        assert [d.record.name for d in first.sources.sync_due(now=T0)] == ["site"]
        assert first.ingest.wait_for_queue(timeout=60)
    finally:
        first.close()
    second = make_services(data, embedder="none")
    try:
        assert second.sources.due(T0 + HOUR) == []
        assert [r.name for r in second.sources.due(T0 + 2 * HOUR)] == ["site"]
        second.sources.set_schedule("default", "later", paused=False)
        assert [r.name for r in second.sources.due(T0 + 2 * HOUR)] == ["later", "site"]
    finally:
        second.close()


def test_every_reads_minutes_hours_days_and_off():
    assert parse_every("30m") == 1800 and parse_every("6h") == 21600
    assert parse_every("1d") == 86400 and parse_every("off") is None
    for bad in ("1m", "31d", "soon", "6 hours", True):
        with pytest.raises(ValidationError):
            parse_every(bad)


def test_rest_shows_and_changes_the_schedule(tmp_path):
    with serve(tmp_path / "data", allow_private_sources=True) as rest:
        client = rest.new_user().client
        url = "http://127.0.0.1:9/"
        made = client.post("/sources", json={"kind": "web", "name": "w", "url": url})
        assert made.status_code == 201, made.text
        body = made.json()
        assert body["every"] == "6h" and body["paused"] is False
        assert body["nextSyncAt"] == pytest.approx(time.time(), abs=30)  # due at once
        hourly = client.post(
            "/sources", json={"kind": "web", "name": "h", "url": url, "every": "1h"}
        )
        assert hourly.json()["every"] == "1h"
        paused = client.patch("/sources/w", json={"paused": True})
        assert paused.status_code == 200, paused.text
        assert paused.json()["paused"] is True and paused.json()["nextSyncAt"] is None
        off = client.patch("/sources/w", json={"every": "off", "paused": False}).json()
        assert off["every"] == "off" and off["nextSyncAt"] is None
        assert client.patch("/sources/w", json={"every": "1m"}).status_code == 400
        assert client.patch("/sources/nothing", json={"paused": True}).status_code == 404
        listed = {s["name"]: s for s in client.get("/sources").json()}
        assert (listed["w"]["every"], listed["h"]["every"]) == ("off", "1h")
        stranger = rest.new_user()  # another library: not its source
        assert stranger.client.patch("/sources/w", json={"paused": True}).status_code == 404


def test_a_sync_asked_for_now_keeps_to_the_shapes_bound(services, tmp_path):
    """On AWS a sync asked for over REST runs in the api function: `on_demand_seconds` stops
    it in time (a bound, as max_seconds) and the schedule goes on from there soon."""
    services.sources.now = Clock(T0)
    services.sources.on_demand_seconds = 0.0  # spent at once
    repo = Repo(tmp_path / "repo")
    repo.write("a.md", "Alpha.\n")
    repo.commit("one")
    services.sources.add("default", "git", "repo", {"url": str(repo.root)}, operator=True)
    report = services.sources.sync("default", "repo")
    assert (report.added, report.complete, report.stopped_by) == ([], False, "max_seconds")
    assert services.sources.get("default", "repo").next_sync_at == T0 + 60
    done = services.sources.sync_due(now=T0 + 60)  # the schedule is not bound by it
    assert done[0].report.added == ["repo/a.md"] and done[0].report.complete
    assert services.ingest.wait_for_queue(timeout=60)
