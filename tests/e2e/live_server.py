"""A real uvicorn server on a free loopback port, in a thread, shared by the e2e harnesses."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from typing import Any

import httpx
import uvicorn

# One TLS context for the tests' clients: httpx builds one per client otherwise, reading
# certifi's CA bundle each time (~25 ms of CPU; the quick tests open thousands of clients).
LOOPBACK_TLS = httpx.create_ssl_context()


class _Server(uvicorn.Server):
    """uvicorn's server, woken when told to stop: uvicorn's own loop looks at `should_exit`
    once every 0.1 s, so each stop idled 0.05 s on average, and the quick tests start and
    stop a few hundred servers. Between stops it ticks as uvicorn does (the Date header)."""

    loop: asyncio.AbstractEventLoop | None = None

    async def main_loop(self) -> None:
        self.wake = asyncio.Event()
        self.loop = asyncio.get_running_loop()  # before the first look at should_exit
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), 0.1)
            should_exit = await self.on_tick(counter)

    def stop(self) -> None:
        """From another thread. Told before main_loop began, its first tick sees should_exit."""
        self.should_exit = True
        if self.loop is not None:
            with contextlib.suppress(RuntimeError):  # its loop has already closed
                self.loop.call_soon_threadsafe(self.wake.set)


class LiveServer:
    """uvicorn on 127.0.0.1:<free port>, in a thread, for as long as the context lasts."""

    def __init__(self, app: Any, **options: Any) -> None:
        """`options`: more uvicorn.Config settings (`bunko serve`'s: embedded_server)."""
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", lifespan="on", **options)
        self.server = _Server(config)
        # Server.run picks uvloop as `bunko serve` does (the plain loop adds ~40 ms a call).
        self.thread = threading.Thread(
            target=lambda: self.server.run(sockets=[self.socket]), daemon=True
        )

    def __enter__(self) -> LiveServer:
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            self.thread.join(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
        self.thread.join(timeout=15)
        self.socket.close()
