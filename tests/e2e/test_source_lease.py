"""One sync of a source at a time across processes (issue 48): `bunko source sync` run
twice at once on one data folder, as real processes over a real website on a local socket
(the second is refused, "syncing already"); a holder killed mid-sync keeps the source until
its lease expires, then another process takes it over."""

from __future__ import annotations

import subprocess
import threading
import time

from tests.conftest import make_services
from tests.e2e.cli_harness import BUNKO, bunko_env, run
from tests.e2e.local_site import LocalSite


class HeldSite(LocalSite):
    """A site whose every answer waits until `go` is set (at most 15 s each, under the
    fetcher's 20 s timeout): a sync of it stays in its run as long as the test needs."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = threading.Event()
        self.go = threading.Event()

    def answer(self, path: str, headers):
        self.asked.set()
        self.go.wait(timeout=15)
        return super().answer(path, headers)


def _site() -> HeldSite:
    site = HeldSite()
    links = "".join(f'<a href="/p{n}">page {n}</a>' for n in range(12))
    site.html("/", f"<main><p>Home of the walrus notes.</p>{links}</main>", title="Home")
    for n in range(12):
        site.html(f"/p{n}", f"<main><p>Walrus note number {n}.</p></main>", title=f"P{n}")
    return site


def _start_sync(data) -> subprocess.Popen:
    return subprocess.Popen(
        [*BUNKO, "source", "sync", "site"],
        env=bunko_env(data),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_second_process_is_refused_while_the_first_syncs(tmp_path):
    site = _site()
    data = tmp_path / "data"
    try:
        run(["source", "add", "web", "--name", "site", "--url", site.url + "/"], data)
        first = _start_sync(data)
        assert site.asked.wait(timeout=120), first.communicate()
        second = run(["source", "sync", "site"], data, check=False)
        assert second.returncode == 1, second.stdout
        assert "syncing already" in second.stderr
        site.go.set()
        out, err = first.communicate(timeout=300)
        assert first.returncode == 0, err
        assert "13 added" in out
        third = run(["source", "sync", "site"], data)  # released: the next one runs
        assert "13 unchanged" in third.stdout
    finally:
        site.go.set()
        site.close()


def test_a_killed_holders_lease_expires_and_is_taken_over(tmp_path):
    site = _site()
    data = tmp_path / "data"
    try:
        run(["source", "add", "web", "--name", "site", "--url", site.url + "/"], data)
        first = _start_sync(data)
        assert site.asked.wait(timeout=120), first.communicate()
        first.kill()  # it never releases its lease
        first.communicate(timeout=60)
        site.go.set()
        refused = run(["source", "sync", "site"], data, check=False)
        assert refused.returncode == 1 and "syncing already" in refused.stderr
        services = make_services(data, embedder="none")
        try:
            # Past the run's bound (a website's 900 s) and the lease's margin: expired.
            services.sources.now = lambda: time.time() + 900 + 300 + 1
            (record,) = [r for _, r in services.sources.store.list_settings("sources")]
            report = services.sources.sync(record["workspace_id"], "site")
            assert report.failed is None and len(report.added) == 13, report
        finally:
            services.close()
    finally:
        site.go.set()
        site.close()
