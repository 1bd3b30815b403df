"""Shared by the REST end-to-end tests: the real Bunko app served by uvicorn on a free
loopback port in a thread, httpx clients, users that register and log in, and waits."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bunko.bootstrap import Services
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.drops.folder_monitor import FolderMonitor
from bunko.server_app import create_app
from tests.conftest import make_services
from tests.e2e.live_server import LOOPBACK_TLS, LiveServer
from tests.waiting import wait_for

JWT_SECRET = "test-secret-" + "x" * 32
ADMIN = ("admin", "admin-password")
PASSWORD = "correct horse battery"


@dataclass
class User:
    username: str
    password: str
    token: str
    id: str
    client: httpx.Client


@dataclass
class Rest:
    services: Services
    url: str

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60, verify=LOOPBACK_TLS)

    def login(self, username: str, password: str) -> User:
        with self.client() as anonymous:
            response = anonymous.post(
                "/auth/login", json={"username": username, "password": password}
            )
        assert response.status_code == 200, response.text
        body = response.json()
        return User(
            username,
            password,
            body["access_token"],
            body["user"]["id"],
            self.client(body["access_token"]),
        )

    def new_user(self, password: str = PASSWORD) -> User:
        username = f"user-{uuid.uuid4().hex[:10]}"
        with self.client() as anonymous:
            response = anonymous.post(
                "/auth/register", json={"username": username, "password": password}
            )
        assert response.status_code == 201, response.text
        return self.login(username, password)

    def admin(self) -> User:
        return self.login(*ADMIN)

    def shared_library(
        self, name: str, *roles: str, documents: dict[str, bytes] | None = None
    ) -> Shared:
        """A library a new owner made and shared with a new person in each role (added by
        username); each member's client works in it (X-Bunko-Library). `documents`: files the
        owner uploaded into it, indexed before this returns."""
        owner = self.new_user()
        library = owner.client.post("/libraries", json={"name": name}).json()["id"]
        members = {}
        for role in roles:
            members[role] = person = self.new_user()
            added = owner.client.put(
                f"/libraries/{library}/members", json={"username": person.username, "role": role}
            )
            assert added.status_code == 200, added.text
            person.client.headers["X-Bunko-Library"] = library
        for file_name, data in (documents or {}).items():
            uploaded = owner.client.post(
                "/upload", files={"file": (file_name, data)}, headers={"X-Bunko-Library": library}
            )
            assert uploaded.status_code == 201, uploaded.text
            file_id = uploaded.json()["id"]
            assert wait_until_done(owner.client, file_id, library=library)["status"] == "completed"
        return Shared(library, owner, members)


@dataclass
class Shared:
    """A shared library: its id, its owner and its members by role."""

    id: str
    owner: User
    members: dict[str, User]


@contextmanager
def serve(data_dir: Path, **settings: Any) -> Iterator[Rest]:
    """A real Bunko REST app (the one `bunko serve` runs on port 3000), keyword-only search
    by default, with an admin from settings."""
    values = {
        "embedder": "none",
        "jwt_secret": JWT_SECRET,
        "admin_username": ADMIN[0],
        "admin_password": ADMIN[1],
        **settings,
    }
    services = make_services(data_dir, **values)
    try:
        with LiveServer(create_app(services)) as live:
            yield Rest(services, live.url)
    finally:
        services.close()


def wait_until_done(
    client: httpx.Client, file_id: str, timeout: float = 60.0, *, library: str | None = None
) -> dict:
    """The file's record once it is `completed` or `failed` (`library`: the one it is in,
    when not the client's own)."""
    headers = {"X-Bunko-Library": library} if library else {}

    def done() -> dict | None:
        record = client.get(f"/knowledge-bases/{file_id}", headers=headers).json()
        return record if record["status"] in ("completed", "failed") else None

    return wait_for(done, timeout)


def assert_error(response: httpx.Response, status: int) -> dict:
    """aurak's error body: {statusCode, message, error}, and nothing that looks like a trace."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"statusCode", "message", "error"}, body
    assert body["statusCode"] == status
    assert "Traceback" not in response.text and 'File "' not in response.text
    return body


@contextmanager
def watching(rest: Rest, drop_dir: Path | None) -> Iterator[FolderMonitor]:
    """The folder monitor `bunko serve` runs beside the app: the drop folder into the default
    library, and every library's `monitor_paths`."""
    monitor = FolderMonitor(
        rest.services.ingest,
        rest.services.accounts.workspace_settings,
        drop_dir=drop_dir,
        drop_workspace_id=DEFAULT_WORKSPACE_ID,
    )
    monitor.start()
    try:
        yield monitor
    finally:
        monitor.stop()
