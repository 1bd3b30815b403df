"""The REST doors' metadata fields: `metadata` (a form field holding a JSON object) and
`filter` (a query parameter or body field holding a JSON filter), decoded and checked by
domain/metadata/, whose ValidationError names the key or clause (400)."""

from __future__ import annotations

from bunko.domain.metadata import Filter, Metadata, decode_json, given_metadata, parse_filter

# Bounds on what is read before it is checked. Metadata (a form field) holds at most 16 KiB
# as JSON. A filter in a query string: 1,000 characters (~20 clauses), so the URL stays under
# what servers and API Gateway take whatever the characters (12 bytes each, percent-encoded,
# at worst); a larger filter goes in a body (/chat/stream, /v1, MCP).
MAX_METADATA_TEXT = 65_536
MAX_FILTER_TEXT = 1_000


def form_metadata(text: str | None) -> Metadata | None:
    """None when the field was left out (a document keeps what it has)."""
    return given_metadata(decode_json(text, "metadata"))


def given_filter(text: str | None, field: str = "filter") -> Filter | None:
    return parse_filter(decode_json(text, field))
