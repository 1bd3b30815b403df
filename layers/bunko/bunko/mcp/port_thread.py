"""The MCP port of `bunko serve`: a second uvicorn server in a thread beside the REST one.

TelosDB clients expect MCP (and its auxiliary HTTP API) on their own port, 3001; the REST
server keeps the main thread (and with it signal handling), this one follows its lifetime.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import uvicorn
from fastapi import APIRouter

if TYPE_CHECKING:
    from bunko.bootstrap import Services

log = logging.getLogger(__name__)


class McpServerThread:
    def __init__(
        self,
        services: Services,
        *,
        host: str,
        port: int,
        routers: Sequence[APIRouter] = (),
        log_level: str = "info",
    ) -> None:
        from bunko.mcp.http import create_mcp_app

        app = create_mcp_app(services, routers=routers)
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level))
        self.address = f"http://{host}:{port}"
        self._thread = threading.Thread(target=self._run, name="bunko-mcp", daemon=True)
        self._error: BaseException | None = None

    def _run(self) -> None:
        try:
            # Server.run, not asyncio.run(serve()): it picks uvloop as uvicorn.run does; on
            # the plain asyncio loop each response here waited ~40 ms for a delayed ACK.
            self.server.run()
        except BaseException as exc:  # uvicorn exits (SystemExit) when it cannot bind
            self._error = exc

    def start(self, timeout: float = 30.0) -> None:
        """Start serving; raises RuntimeError if the port cannot be used."""
        self._thread.start()
        while not self.server.started and self._thread.is_alive():
            self._thread.join(0.05)
            timeout -= 0.05
            if timeout <= 0:
                raise RuntimeError(f"the MCP server at {self.address} did not start in time")
        if not self.server.started:
            raise RuntimeError(f"the MCP server could not listen at {self.address}: {self._error}")
        log.info("MCP at %s/mcp (legacy SSE at %s/sse)", self.address, self.address)

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=10)
