"""`bunko serve`: the embedded server — HTTP app, ingest worker and drop-folder watcher."""

from __future__ import annotations

import ipaddress
import logging
import threading
from collections.abc import Callable

from bunko.bootstrap import Services, build_services, index_needs_rebuild, requeue_unfinished
from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID

log = logging.getLogger(__name__)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def start_background_work(services: Services, *, watch: bool) -> Callable[[], None]:
    """Resume unfinished ingest, rebuild a new index generation, watch the drop folder.
    Returns a function that stops what it started."""
    from bunko.adapters.local.watcher import DropFolderWatcher, WatchedFolder

    requeued = requeue_unfinished(services)
    if requeued:
        log.info("re-queued %d unfinished documents", requeued)
    if index_needs_rebuild(services):
        log.info("index generation is empty: rebuilding it from metadata in the background")
        threading.Thread(target=services.pipeline.reindex, name="bunko-reindex", daemon=True).start()
    watcher = None
    if watch:
        watcher = DropFolderWatcher(
            services.ingest, DEFAULT_WORKSPACE_ID, [WatchedFolder(services.settings.drop_dir)]
        )
        watcher.start()
        log.info("watching %s", services.settings.drop_dir)

    def stop() -> None:
        if watcher:
            watcher.stop()
        services.close()

    return stop


def run_server(settings: Settings, *, watch: bool, uvicorn_run: Callable) -> None:
    from bunko.http.app import create_app

    services = build_services(settings)
    stop = start_background_work(services, watch=watch)
    try:
        uvicorn_run(create_app(services), host=settings.host, port=settings.port, log_level="info")
    finally:
        stop()
