"""For the web app's sign-in with an identity provider in Chromium (the button the web app
shows from GET /auth/oidc/config): a real issuer (tests/oidc_issuer.py) and a real Bunko
server configured for it, and what a person does on the issuer's page.

The Chromium test drives: the web app → its "Sign in with localhost" button (loginUrl) → the
issuer's page, where `at_the_issuer` types the person's `sub` and presses "Authorize" →
Bunko's callback → the web app at `/#oidc_token=…`, which the app reads, keeps as it keeps a
password sign-in's token, and clears from the address; then the library menu shows the
mapped libraries with the mapped roles.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.e2e.rest_harness import Rest, serve
from tests.oidc_issuer import Issuer, oidc_issuer

CLIENT = {"oidc_client_id": "bunko-web", "oidc_client_secret": "the-web-app-client-secret"}


@contextmanager
def signing_in(data_dir: Path, group_roles: dict[str, Any]) -> Iterator[tuple[Issuer, Rest]]:
    """An issuer, and a Bunko server whose people sign in with it (groups mapped so)."""
    with (
        oidc_issuer() as issuer,
        serve(data_dir, oidc_issuer=issuer.url, oidc_group_roles=group_roles, **CLIENT) as rest,
    ):
        yield issuer, rest


def at_the_issuer(page: Any, sub: str) -> None:
    """On the issuer's sign-in page (a Playwright page): sign in as `sub`."""
    page.get_by_placeholder("sub").fill(sub)
    page.get_by_role("button", name="Authorize").click()
