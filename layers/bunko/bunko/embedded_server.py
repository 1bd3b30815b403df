"""`bunko serve`: the embedded server — HTTP app, ingest worker and drop-folder watcher.

It sits above the doors it runs (the app of bunko.server_app, the drops' folder watchers)."""

from __future__ import annotations

import ipaddress
import logging
import signal
from collections.abc import Callable

from bunko.bootstrap import Services, build_services
from bunko.bootstrap.background import schedule_background_work
from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.scheduler import Scheduler

log = logging.getLogger(__name__)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(settings: Settings) -> None:
    """Auth off means every caller is the admin: only ever on loopback."""
    if settings.auth == "off" and not is_loopback(settings.host):
        raise SystemExit(
            f"refusing to start: BUNKO_AUTH=off on {settings.host}, which is not a loopback "
            "address; bind to 127.0.0.1 or turn auth on"
        )


def uvicorn_options(settings: Settings) -> dict[str, object]:
    """What `bunko serve` tells uvicorn beyond the app and address: X-Forwarded-For is
    believed only from BUNKO_TRUSTED_PROXIES. uvicorn's default trusts it from 127.0.0.1,
    where every local client connects from, so each made-up address restarted the login
    lockout (issue 46)."""
    if not settings.trusted_proxies:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": list(settings.trusted_proxies)}


def run_server(settings: Settings, *, watch: bool, uvicorn_run: Callable) -> None:
    from bunko.bootstrap.serve_lock import lock_data_dir
    from bunko.http.routes import telosdb
    from bunko.mcp.port_thread import McpServerThread
    from bunko.server_app import create_app

    check_bind(settings)
    lock = (
        lock_data_dir(settings.data_dir, port=settings.port)
        if settings.backend == "local"
        else None
    )
    services = build_services(settings)
    stop = start_background_work(services, watch=watch)
    # MCP (and TelosDB's auxiliary HTTP API) on its own port, as TelosDB serves it.
    mcp = McpServerThread(
        services, host=settings.host, port=settings.mcp_port, routers=[telosdb.router]
    )
    # uvicorn shuts down gracefully on SIGTERM, then raises the signal again for its previous
    # handler: the default one would end the process before the cleanup below (the worker
    # stopped, the index's snapshot saved, the stores closed).
    signal.signal(signal.SIGTERM, _exit_after_shutdown)
    try:
        mcp.start()
        uvicorn_run(
            create_app(services),
            host=settings.host,
            port=settings.port,
            log_level="info",
            **uvicorn_options(settings),
        )
    finally:
        mcp.stop()
        stop()
        if lock is not None:
            lock.close()


def start_background_work(services: Services, *, watch: bool) -> Callable[[], None]:
    """The background work (bootstrap/background.py: the startup check, the warm-up, the
    refine pass, due sources, the drop folder's catch-up) on one scheduler, and the watchers
    of the drop folder and saved folders. Returns a function that stops what it started."""
    from bunko.drops.folder_monitor import FolderMonitor
    from bunko.drops.folder_watcher import DropFolderWatcher, WatchedFolder

    scheduler = Scheduler()
    watcher: FolderMonitor | DropFolderWatcher | None = None
    if services.accounts is not None:
        # The drop folder plus the folders saved through /settings, reloaded when they change.
        watcher = FolderMonitor(
            services.ingest,
            services.accounts.workspace_settings,
            drop_dir=services.settings.drop_dir if watch else None,
            drop_workspace_id=DEFAULT_WORKSPACE_ID,
            reload_soon=lambda: scheduler.wake("watched-folders"),
        )
    elif watch:
        watcher = DropFolderWatcher(
            services.ingest, DEFAULT_WORKSPACE_ID, [WatchedFolder(services.settings.drop_dir)]
        )
    schedule_background_work(
        services,
        scheduler,
        catch_up=watcher.catch_up if watcher else None,
        reload_folders=watcher.reload_now if isinstance(watcher, FolderMonitor) else None,
    )
    scheduler.start()
    if watcher is not None:
        watcher.start()
    if watch:
        log.info("watching %s", services.settings.drop_dir)

    def stop() -> None:
        scheduler.stop()
        if watcher:
            watcher.stop()
        services.close()

    return stop


def _exit_after_shutdown(signum: int, frame: object) -> None:
    raise SystemExit(0)
