"""Metadata from a Markdown file's front matter: a leading `---` YAML block. Every door reads
it (services/ingest: uploads, drops, the CLI, MCP); keys a door gives win over it.

Only the block's top-level keys whose values Bunko's metadata can hold are taken: a string, a
number, a date (or date-time) and a list of strings. Any other value (yes/no, an empty value, a
mapping, a list of anything but strings), a key metadata refuses (`category`, which is the
document's own field, or a key with dots or spaces) and the keys past the limit are skipped,
each with a warning that names the file and the key. The text indexed keeps the block: the
parser is not told about it.
"""

from __future__ import annotations

import logging
import re
from datetime import date, datetime
from typing import Any

import yaml

from bunko.domain.metadata import CATEGORY_KEY, Metadata, check_metadata
from bunko.errors import ValidationError

log = logging.getLogger(__name__)

MARKDOWN_SUFFIXES = (".md", ".markdown")
# The block, its `---` lines included, must end within the file's first 64 KiB: a door reads
# no more than this much of a file to find it.
MAX_FRONT_MATTER_BYTES = 64 * 1024

_OPEN = re.compile(rb"\A(?:\xef\xbb\xbf)?---[ \t]*\r?\n")
_CLOSE = re.compile(rb"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\r?\Z)", re.MULTILINE)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def is_markdown(name: str) -> bool:
    return name.lower().endswith(MARKDOWN_SUFFIXES)


def front_matter(name: str, data: bytes, *, where: str) -> Metadata | None:
    """The metadata in the front matter of the Markdown file `name` whose bytes (or first
    MAX_FRONT_MATTER_BYTES bytes) are `data`; None when it is no Markdown file or has no front
    matter block (a block that is empty, or not a YAML mapping, gives {}). `where` names the
    file in the warnings."""
    if not is_markdown(name):
        return None
    block = _block(data[:MAX_FRONT_MATTER_BYTES])
    if block is None:
        return None
    try:
        loaded = yaml.load(block.decode("utf-8"), Loader=_LOADER)  # noqa: S506 (a safe loader)
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        log.warning("front matter of %s is not valid YAML (%s); no metadata taken", where, reason)
        return {}
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        log.warning("front matter of %s is not a YAML mapping; no metadata taken", where)
        return {}
    taken: Metadata = {}
    for key, value in loaded.items():
        try:  # the whole checked again: past the limits of keys or size, the rest is skipped
            taken = check_metadata({**taken, **_plain(key, value)})
        except ValidationError as exc:
            log.warning("front matter of %s: key %r skipped: %s", where, str(key)[:64], exc)
    return taken


def _block(head: bytes) -> bytes | None:
    """The YAML between the opening `---` line and the closing `---` (or `...`) line."""
    opened = _OPEN.match(head)
    if opened is None:
        return None
    closed = _CLOSE.search(head, opened.end())
    return None if closed is None else head[opened.end() : closed.start()]


def _plain(key: object, value: Any) -> dict[str, Any]:
    """{key: value} as metadata takes it (checked afterwards), or ValidationError saying why
    it is skipped."""
    if not isinstance(key, str):
        raise ValidationError("a key must be text")
    if key == CATEGORY_KEY:
        raise ValidationError("the category is the document's own field, not metadata")
    if isinstance(value, bool):
        raise ValidationError("a yes/no value is not taken (quote it to keep it as text)")
    if value is None:
        raise ValidationError("it has no value")
    if isinstance(value, datetime | date):
        value = value.isoformat()
    elif isinstance(value, list) and not all(isinstance(item, str) for item in value):
        raise ValidationError("a list may hold only strings")
    elif not isinstance(value, str | int | float | list):
        raise ValidationError("use a string, a number, a date or a list of strings")
    return {key: value}


def with_front_matter(
    name: str, data: bytes, given: Metadata | None, *, where: str
) -> Metadata | None:
    """`given` (a door's metadata, None for none) plus the front matter keys it does not set,
    for a Markdown file; `given` as it is for any other file or one without front matter.
    Past the limits of keys or size, the given keys come first."""
    front = front_matter(name, data, where=where)
    if not front:
        return given
    merged = dict(given or {})
    for key, value in front.items():
        if key in merged:
            continue  # what the door said wins
        try:
            merged = check_metadata({**merged, key: value})
        except ValidationError as exc:
            log.warning("front matter of %s: key %r skipped: %s", where, key, exc)
    return merged
