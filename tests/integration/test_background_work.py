"""What `bunko serve` starts beside its app (embedded_server.py, bootstrap/background.py)."""

from __future__ import annotations

import dataclasses
import threading

from bunko.embedded_server import start_background_work
from tests.conftest import make_services
from tests.fakes import FakeEmbedder
from tests.waiting import wait_for


class LazyModel(FakeEmbedder):
    def __init__(self) -> None:
        super().__init__(["harbour"])
        self.loaded = threading.Event()

    def warm_up(self) -> None:
        self.loaded.set()


def test_the_embedding_model_loads_while_the_server_starts(tmp_path):
    model = LazyModel()
    services = dataclasses.replace(
        make_services(tmp_path / "data", embedder="none"), embedder=model
    )
    services.status.embedder = model  # the server's model, which the status service warms up
    stop = start_background_work(services, watch=False)
    try:
        assert model.loaded.wait(timeout=60)  # before any query asked for it
    finally:
        stop()


def test_the_servers_scheduler_syncs_due_sources_and_not_paused_ones(tmp_path):
    """`bunko serve`'s background work on a real data folder: the sources job syncs what
    is due with nobody asking, skips a paused source, and stops cleanly."""
    from tests.e2e.local_site import LocalSite

    site = LocalSite()
    site.html("/", "<main><p>Harbour timetable: ferries every hour.</p></main>", title="Home")
    services = make_services(tmp_path / "data", embedder="none")
    add = services.sources.add
    add("default", "web", "due", {"url": site.url + "/"}, operator=True, every="1h")
    add("default", "web", "paused", {"url": site.url + "/", "folder": "p"}, operator=True,
        paused=True)  # fmt: skip
    stop = start_background_work(services, watch=False)
    try:
        synced = wait_for(lambda: services.sources.get("default", "due").last_sync)
        assert synced["added"] == 1 and synced["failed"] is None
        assert services.ingest.wait_for_queue(timeout=60)
        assert services.sources.get("default", "paused").last_sync is None
        assert [p for p, _ in site.log] == ["/robots.txt", "/"]  # one sync, the due one's
    finally:
        stop()
        site.close()


def test_the_drop_folders_catch_up_runs_in_its_watch_thread(tmp_path):
    """The scheduler's drop-catch-up job asks the watcher, which catches up between two
    batches of its live watch: a dropped file whose document went is taken again."""
    from bunko.drops.folder_watcher import DropFolderWatcher, WatchedFolder

    services = make_services(tmp_path / "data", embedder="none")
    drop = tmp_path / "drop"
    watcher = DropFolderWatcher(services.ingest, "default", [WatchedFolder(drop)])
    (drop / "rota.txt").write_text("Harbour rota: Ana on Mondays.")
    watcher.start()  # catches up once live: the file is taken
    try:
        doc = wait_for(lambda: services.ingest.document_at("default", "rota.txt"))
        services.ingest.delete_document("default", doc.id)
        assert services.ingest.document_at("default", "rota.txt") is None
        watcher.catch_up(timeout=60)
        assert services.ingest.document_at("default", "rota.txt") is not None
    finally:
        watcher.stop()
        services.close()
