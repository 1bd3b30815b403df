"""BodySizeLimit: refuse request bodies over the upload limit before they are read whole.

A declared Content-Length over the limit is answered 413 at once; a chunked body is
counted as it streams and cut off (413) the moment it passes the limit, so an oversized
upload never fills the disk or the multipart spool.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bunko.http.errors import error_response

# Room for the multipart boundaries and the form fields around the file itself.
MULTIPART_OVERHEAD = 1024 * 1024


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body is larger than the limit of {limit} bytes")


class BodySizeLimit:
    def __init__(self, app: ASGIApp, *, max_file_bytes: int) -> None:
        self.app = app
        self.limit = max_file_bytes + MULTIPART_OVERHEAD

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            response = error_response(413, BodyTooLarge(self.limit).detail)
            await response(scope, receive, send)
            return
        received = 0

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise BodyTooLarge(self.limit)
            return message

        await self.app(scope, counting_receive, send)
