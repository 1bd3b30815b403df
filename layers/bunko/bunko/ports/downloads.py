"""Links to a file's original: short-lived URLs a browser can open without the caller's
token (a new tab sends no Authorization header), each good for one file only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol
from urllib.parse import quote

from bunko.domain import Document


@dataclass(frozen=True)
class SignedLink:
    url: str  # absolute (S3), or a path on this API (the embedded server)
    expires_in: int


class OriginalLinks(Protocol):
    # True: the API itself serves the bytes a link names (and checks the link with
    # `verify`); False: the link leads to the blob store (S3), which checks it.
    served_here: bool

    def link_to(self, document: Document) -> SignedLink: ...

    def verify(self, document: Document, token: str) -> bool:
        """Whether `token` is a live link to `document`'s original."""


# Shown in the browser: they cannot run script in the origin that serves them. Anything
# else (HTML, SVG, Office files) is downloaded.
INLINE_TYPES = frozenset(
    {"application/pdf", "image/png", "image/jpeg", "image/gif", "image/webp", "text/plain"}
)


def content_disposition(file_name: str, mime: str) -> str:
    """Content-Disposition for an original: shown in the browser when its type is safe there
    (a PDF opens at `#page=N`), else downloaded; saved under its own name either way (an
    ASCII fallback, and RFC 6266's UTF-8 form)."""
    kind = "inline" if mime in INLINE_TYPES else "attachment"
    fallback = "".join(
        c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in file_name
    )
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(file_name, safe='')}"
