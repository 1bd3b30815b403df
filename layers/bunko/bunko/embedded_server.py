"""`bunko serve`: the embedded server — HTTP app, ingest worker and drop-folder watcher."""

from __future__ import annotations

import ipaddress
import logging
import signal
from collections.abc import Callable

from bunko.bootstrap import build_services
from bunko.bootstrap.background import start_background_work
from bunko.config import Settings

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


def run_server(settings: Settings, *, watch: bool, uvicorn_run: Callable) -> None:
    from bunko.bootstrap.serve_lock import lock_data_dir
    from bunko.http.app import create_app
    from bunko.http.routes import telosdb
    from bunko.mcp.port_thread import McpServerThread

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
        uvicorn_run(create_app(services), host=settings.host, port=settings.port, log_level="info")
    finally:
        mcp.stop()
        stop()
        if lock is not None:
            lock.close()


def _exit_after_shutdown(signum: int, frame: object) -> None:
    raise SystemExit(0)
