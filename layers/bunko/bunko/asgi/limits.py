"""BodySizeLimit: refuse request bodies over the upload limit before they are read whole.

A declared Content-Length over the limit is answered 413 at once; a chunked body is
counted as it streams and cut off (413) the moment it passes the limit, so an oversized
upload never fills the disk or the multipart spool. A body that stalls (no bytes for
`idle_timeout` seconds) or drips on past `deadline` is cut off with 408, so slow clients
cannot hold a worker (and its memory) open.
"""

from __future__ import annotations

import anyio
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bunko.asgi.errors import error_response

# Room for the multipart boundaries and the form fields around the file itself.
MULTIPART_OVERHEAD = 1024 * 1024


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body is larger than the limit of {limit} bytes")


class BodyTooSlow(HTTPException):
    def __init__(self) -> None:
        super().__init__(408, "the request body did not arrive in time")


class BodySizeLimit:
    def __init__(
        self,
        app: ASGIApp,
        *,
        max_file_bytes: int,
        idle_timeout: float = 30.0,
        deadline: float = 600.0,
    ) -> None:
        self.app = app
        self.limit = max_file_bytes + MULTIPART_OVERHEAD
        self.idle_timeout = idle_timeout
        self.deadline = deadline

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if (
            declared is not None
            and declared.isascii()
            and declared.isdigit()
            and int(declared) > self.limit
        ):
            response = error_response(413, BodyTooLarge(self.limit).detail, scope=scope)
            await response(scope, receive, send)
            return
        received, complete = 0, False
        deadline = anyio.current_time() + self.deadline

        async def counting_receive() -> Message:
            nonlocal received, complete
            if complete:  # after the body, receive() waits for a disconnect (SSE): no limit
                return await receive()
            wait = min(self.idle_timeout, deadline - anyio.current_time())
            with anyio.move_on_after(max(wait, 0)) as scope_:
                message = await receive()
            if scope_.cancelled_caught:
                raise BodyTooSlow()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                complete = not message.get("more_body", False)
                if received > self.limit:
                    raise BodyTooLarge(self.limit)
            return message

        await self.app(scope, counting_receive, send)
