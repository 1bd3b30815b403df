"""Bill: whose count an upload goes to, and every workspace whose bytes count with it
(services/accounts/bills.py decides; services/ingest/upload_quota.py counts)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bill:
    payer: str  # the key of the person's count ("user <id>"), or the workspace's own
    workspaces: tuple[str, ...]  # whose bytes count together
