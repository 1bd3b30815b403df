"""Fixtures shared by the security tests (the `rest` server is tests/conftest.py's)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def ports(tmp_path: Path):
    """A fresh server on both ports, REST and MCP (tests/security/servers.both_ports)."""
    from tests.security.servers import both_ports

    with both_ports(tmp_path / "data") as running:
        yield running
