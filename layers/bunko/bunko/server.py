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
    from bunko.adapters.local.folder_monitor import FolderMonitor
    from bunko.adapters.local.watcher import DropFolderWatcher, WatchedFolder

    requeued = requeue_unfinished(services)
    if requeued:
        log.info("re-queued %d unfinished documents", requeued)
    if index_needs_rebuild(services):
        log.info("index generation is empty: rebuilding it from metadata in the background")
        threading.Thread(
            target=services.pipeline.reindex, name="bunko-reindex", daemon=True
        ).start()
    watcher: FolderMonitor | DropFolderWatcher | None = None
    if services.accounts is not None:
        # The drop folder plus the folders saved through /settings, reloaded when they change.
        watcher = FolderMonitor(
            services.ingest,
            services.accounts.workspace_settings,
            drop_dir=services.settings.drop_dir if watch else None,
            drop_workspace_id=DEFAULT_WORKSPACE_ID,
        )
        watcher.start()
    elif watch:
        watcher = DropFolderWatcher(
            services.ingest, DEFAULT_WORKSPACE_ID, [WatchedFolder(services.settings.drop_dir)]
        )
        watcher.start()
    if watch:
        log.info("watching %s", services.settings.drop_dir)

    def stop() -> None:
        if watcher:
            watcher.stop()
        services.close()

    return stop


def check_bind(settings: Settings) -> None:
    """Auth off means every caller is the admin: only ever on loopback."""
    if settings.auth == "off" and not is_loopback(settings.host):
        raise SystemExit(
            f"refusing to start: BUNKO_AUTH=off on {settings.host}, which is not a loopback "
            "address; bind to 127.0.0.1 or turn auth on"
        )


def run_server(settings: Settings, *, watch: bool, uvicorn_run: Callable) -> None:
    from bunko.http.app import create_app
    from bunko.http.routes import telosdb
    from bunko.mcp.serve import McpServerThread

    check_bind(settings)
    services = build_services(settings)
    stop = start_background_work(services, watch=watch)
    # MCP (and TelosDB's auxiliary HTTP API) on its own port, as TelosDB serves it.
    mcp = McpServerThread(
        services, host=settings.host, port=settings.mcp_port, routers=[telosdb.router]
    )
    try:
        mcp.start()
        uvicorn_run(create_app(services), host=settings.host, port=settings.port, log_level="info")
    finally:
        mcp.stop()
        stop()
