"""When a source syncs by itself: every `every` seconds after its last sync (None: only on
demand), unless paused. A source never synced is due at once; a sync a bound stopped
(`complete: false`) goes on `CONTINUE_AFTER` seconds later, from where it stopped, so a big
place is taken in bounded runs (on AWS, one run per invocation of the sync function).

Both shapes run the same rule (`Sources.due`, `Sources.sync_due`): the embedded server's
scheduler (bunko.scheduler) and the AWS sync function (bunko.lambda_entry) only call it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bunko.errors import ValidationError

if TYPE_CHECKING:
    from bunko.services.sources.records import SourceRecord, SyncReport

DEFAULT_EVERY = 6 * 3600
MIN_EVERY = 5 * 60
MAX_EVERY = 30 * 86_400
CONTINUE_AFTER = 60.0
OFF = ("off", "manual", "never")
_EVERY = re.compile(r"^\s*(\d+)\s*([mhd])\s*$")
_UNIT = {"m": 60, "h": 3600, "d": 86_400}


def parse_every(value: str | int | None) -> int | None:
    """`"30m"`, `"6h"`, `"1d"` or a number of seconds → seconds; `"off"` (or None) → None
    (on demand only). From 5 minutes to 30 days."""
    if value is None or (isinstance(value, str) and value.strip().lower() in OFF):
        return None
    if isinstance(value, bool):
        raise ValidationError("every: like 30m, 6h or 1d, or off")
    if isinstance(value, int):
        seconds = value
    else:
        match = _EVERY.match(value.lower()) if isinstance(value, str) else None
        if match is None:
            raise ValidationError("every: like 30m, 6h or 1d, or off")
        seconds = int(match.group(1)) * _UNIT[match.group(2)]
    if not MIN_EVERY <= seconds <= MAX_EVERY:
        raise ValidationError("every: from 5 minutes (5m) to 30 days (30d), or off")
    return seconds


def format_every(seconds: int | None) -> str:
    """The inverse of parse_every, in the largest whole unit."""
    if seconds is None:
        return "off"
    for unit in ("d", "h", "m"):
        if seconds % _UNIT[unit] == 0:
            return f"{seconds // _UNIT[unit]}{unit}"
    return f"{seconds}s"


def next_sync_at(
    *, every: int | None, paused: bool, created_at: float, last_sync: dict[str, Any] | None
) -> float | None:
    """When the source syncs by itself next (epoch seconds), or None (paused, or on demand)."""
    if paused or every is None:
        return None
    if not last_sync or "at" not in last_sync:
        return created_at
    at = float(last_sync["at"])
    if last_sync.get("failed") is None and last_sync.get("complete") is False:
        return at + min(CONTINUE_AFTER, every)
    return at + every


class _Unset:
    pass


UNSET = _Unset()


@dataclass(frozen=True)
class DueSync:
    """One scheduled sync: its report, or why it failed (`failed`: the report's, or what the
    sync raised)."""

    record: SourceRecord
    report: SyncReport | None
    failed: str | None
