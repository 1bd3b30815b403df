"""OriginalLinks for the embedded server:
`/knowledge-bases/{id}/original?workspace=<id>&link=<expiry>.<mac>`,
an HMAC-SHA256 over the workspace, the file and the expiry time, keyed from the server's
JWT secret (one key per purpose: a link can never pass for a session token)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Callable
from urllib.parse import quote, urlencode

from bunko.domain import Document
from bunko.ports.downloads import SignedLink

LINK_SECONDS = 300


class HmacOriginalLinks:
    served_here = True

    def __init__(
        self,
        secret: str,
        *,
        expires_in: int = LINK_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.key = hmac.new(secret.encode(), b"bunko original links", hashlib.sha256).digest()
        self.expires_in = expires_in
        self.clock = clock

    def link_to(self, document: Document) -> SignedLink:
        expires = int(self.clock()) + self.expires_in
        token = f"{expires}.{self._mac(document, expires)}"
        query = urlencode({"workspace": document.workspace_id, "link": token})
        path = f"/knowledge-bases/{quote(document.id, safe='')}/original?{query}"
        return SignedLink(url=path, expires_in=self.expires_in)

    def verify(self, document: Document, token: str) -> bool:
        expiry, _, mac = token.partition(".")
        # ASCII digits: "²".isdigit() holds, and int("²") raises.
        if not (expiry.isascii() and expiry.isdigit()) or int(expiry) < self.clock():
            return False
        return hmac.compare_digest(mac, self._mac(document, int(expiry)))

    def _mac(self, document: Document, expires: int) -> str:
        message = f"{document.workspace_id}\n{document.id}\n{expires}".encode()
        digest = hmac.new(self.key, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")
