"""Fixtures the end-to-end tests share beyond one module (the servers every test folder
uses are in tests/conftest.py): the web app on the AWS shape, served as deployed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # imported by the fixtures: every e2e test loads this file, few use them
    from tests.e2e.aws_web import World
    from tests.e2e.browser import Tab

PRESIGN_ABOVE = 1024 * 1024  # config.json's presignUploadsAbove here (4 MiB on AWS)


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    from tests.e2e.aws_web import moto_server

    with moto_server() as url:
        yield url


@pytest.fixture
def deployed_shape(moto_url, osmem_clone, monkeypatch) -> Iterator[World]:
    from tests.e2e.aws_web import serve_as_deployed

    with serve_as_deployed(
        moto_url=moto_url, opensearch_url=osmem_clone.url, monkeypatch=monkeypatch,
        presign_above=PRESIGN_ABOVE,
    ) as served:  # fmt: skip
        yield served


@pytest.fixture
def deployed_tab(chromium, deployed_shape) -> Iterator[Tab]:
    """A fresh context on the app, signed up, its requests not routed (the bucket's CORS rule
    is what is under test)."""
    from tests.e2e.browser import enter, tab

    with tab(chromium, deployed_shape.url + "/", routed=False) as opened:
        enter(opened.page, "hanako", "correct horse battery", new=True)
        yield opened
