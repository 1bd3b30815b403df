"""The REST doors' metadata fields: `metadata` (a form field holding a JSON object) and
`filter` (a query parameter or body field holding a JSON filter), decoded and checked by
domain/metadata.py, whose ValidationError names the key or clause (400)."""

from __future__ import annotations

from bunko.domain.metadata import Filter, Metadata, check_metadata, decode_json, parse_filter

# Room for 32 keys of lists of 32 strings of 256 characters is far more than anyone sends;
# these bound what is read before it is checked.
MAX_METADATA_TEXT = 65_536
MAX_FILTER_TEXT = 16_384


def given_metadata(text: str | None) -> Metadata | None:
    """None when the field was left out (a document keeps what it has)."""
    raw = decode_json(text, "metadata")
    return None if raw is None else check_metadata(raw)


def given_filter(text: str | None, field: str = "filter") -> Filter | None:
    return parse_filter(decode_json(text, field))
