"""What connectors (services/sources) read a place through: a website's pages over HTTP, a
Git repository's commits. Each adapter runs the outbound guard before every request it makes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class WebAnswer:
    """One answer, as it came: no redirect followed (the connector follows same-site ones)."""

    status: int
    headers: Mapping[str, str] = field(default_factory=dict)  # names lower-cased
    body: bytes = b""


class WebFetcher(Protocol):
    def get(
        self, url: str, headers: Mapping[str, str], *, max_bytes: int, allow_private: bool
    ) -> WebAnswer:
        """GET `url`, once the guard passes it (`allow_private`: loopback and private
        addresses too); a body past `max_bytes` raises UpstreamError."""
        ...

    def post_form(
        self,
        url: str,
        form: Mapping[str, str],
        *,
        max_bytes: int,
        allow_private: bool,
    ) -> WebAnswer:
        """POST `form` (application/x-www-form-urlencoded) to `url`, guarded as `get` is: an
        OAuth token endpoint, the one thing a connector posts to."""
        ...


@dataclass(frozen=True)
class GitChange:
    """One line of a diff between two commits: A(dded), M(odified), D(eleted), R(enamed)."""

    status: str
    path: str
    old_path: str | None = None  # a rename's old path


class GitRepos(Protocol):
    """Local copies of remote repositories, one per key (a connector's id)."""

    def fetch(
        self,
        key: str,
        remote: str,
        branch: str,
        *,
        allow_private: bool,
        max_seconds: float | None = None,
    ) -> str:
        """Bring `branch` of `remote` (an https URL, each request guarded as `get` is, or a
        local path where the shape allows one) into the copy, within `max_seconds` (and the
        adapter's own bounds); the commit id it points at now."""
        ...

    def tree(self, key: str, commit: str) -> dict[str, str]:
        """Every file of `commit`: path → blob id (no symlinks, no submodules)."""
        ...

    def sizes(self, key: str, blobs: Sequence[str]) -> dict[str, int]:
        """The size in bytes of each blob (asked only of the blobs a sync may read)."""
        ...

    def diff(self, key: str, old: str, new: str) -> list[GitChange]:
        """What changed from `old` to `new`, renames told; [] when `old` is gone."""
        ...

    def read(self, key: str, blobs: Sequence[str]) -> Iterator[tuple[str, bytes]]:
        """The bytes of each blob, in order: (blob id, bytes)."""
        ...

    def forget(self, key: str) -> None: ...
