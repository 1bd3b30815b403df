"""Include/exclude globs of a Git source: `*` within a folder, `**` across folders, `?` one
character; a pattern without '/' matches a file's name in any folder (as .gitignore does)."""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
    body = "".join(out)
    if "/" not in pattern.rstrip("/"):
        body = "(?:.*/)?" + body
    if pattern.endswith("/"):
        body += ".*"
    return re.compile(body + r"\Z")


def matches(path: str, patterns: list[str]) -> bool:
    return any(_compiled(p.lstrip("/")).match(path) for p in patterns)


def selected(path: str, include: list[str], exclude: list[str]) -> bool:
    """In the source: matched by an include (none: every file), by no exclude."""
    return (not include or matches(path, include)) and not matches(path, exclude)
