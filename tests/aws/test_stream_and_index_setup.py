"""The streaming function's app module and the index custom resource handler."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import uuid

import pytest
from fastapi.testclient import TestClient

from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import REPO_ROOT, api_event, load_function


def test_stream_app_serves_the_same_routes(aws_env):
    main = load_function("stream", "main")
    with TestClient(main.build()) as client:
        response = client.get("/health", headers={
            main.CONTEXT_HEADER: json.dumps({"requestId": "c6af9ac6-7b61-11e6"}),
        })  # fmt: skip
    assert response.status_code == 200
    assert response.json()["status"] == "ok"  # a stranger learns only that it is up
    assert main.logger.get_correlation_id() == "c6af9ac6-7b61-11e6"


def test_the_readiness_path_answers_without_reading_any_store(aws_env):
    """The Web Adapter polls /health/live before the stream function takes traffic: it must
    not depend on DynamoDB (a throttled count kept the function from starting)."""
    import inspect

    from bunko.http.routes.health import live

    main = load_function("stream", "main")
    with TestClient(main.build()) as client:
        response = client.get("/health/live")
    assert response.status_code == 200 and response.json()["status"] == "ok"
    assert inspect.signature(live).parameters == {}  # no services: no store is read


def test_get_and_delete_on_mcp_are_405_at_once_in_both_functions(api_with_accounts):
    """A GET /mcp held the stream function for its 15 minutes (the SDK's standalone event
    stream, kept open by pings): now 405 before the SDK, served as run.sh serves it (uvicorn
    over a socket) and through the api function's handler."""
    from bunko import lambda_entry
    from tests.e2e.live_server import LiveServer
    from tests.e2e.mcp_harness import assert_refused_at_once

    main = load_function("stream", "main")
    app = main.build()
    services = lambda_entry.api_app().state.services
    assert services.apikeys is not None
    _, key = services.apikeys.create(workspace_id=str(uuid.uuid4()), scopes=["kb:read"])
    with LiveServer(app) as server:
        for method in ("GET", "DELETE"):
            assert_refused_at_once(server.url, method, key)
    for method in ("GET", "DELETE"):
        event = api_event(method, "/mcp", headers={
            "Accept": "text/event-stream", "Authorization": f"Bearer {key}",
        })  # fmt: skip
        response = api_with_accounts.handler(event, FakeLambdaContext())
        assert response["statusCode"] == 405
        assert response["headers"]["allow"] == "POST"


def test_run_script_is_valid_and_executable():
    script = REPO_ROOT / "functions" / "stream" / "run.sh"
    assert script.stat().st_mode & 0o111
    shell = shutil.which("sh")
    assert shell
    subprocess.run([shell, "-n", str(script)], check=True)


def custom_resource_event(request: str, endpoint: str, index: str = "setup-test") -> dict:
    return {
        "RequestType": request,
        "ResourceProperties": {"Endpoint": endpoint, "IndexName": index, "Dimension": "256"},
    }


def test_index_setup_creates_the_index(osmem_clone, opensearch, monkeypatch):
    monkeypatch.setenv("BUNKO_OPENSEARCH_SIGV4", "false")
    handler = load_function("search_index")
    event = custom_resource_event("Create", osmem_clone.url)
    assert handler.on_event(event, FakeLambdaContext()) == {"PhysicalResourceId": "setup-test"}
    assert handler.is_complete(event, FakeLambdaContext()) == {"IsComplete": True}
    mapping = opensearch.indices.get_mapping(index="setup-test")
    assert mapping["setup-test"]["mappings"]["properties"]["vector"]["dimension"] == 256
    # Update with the same name: already there, still complete.
    assert handler.is_complete(
        custom_resource_event("Update", osmem_clone.url), FakeLambdaContext()
    ) == {"IsComplete": True}
    assert handler.is_complete(
        custom_resource_event("Delete", osmem_clone.url), FakeLambdaContext()
    ) == {"IsComplete": True}


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_index_setup_waits_while_the_collection_is_unreachable(closed_port, monkeypatch):
    monkeypatch.setenv("BUNKO_OPENSEARCH_SIGV4", "false")
    handler = load_function("search_index")
    event = custom_resource_event("Create", f"http://127.0.0.1:{closed_port}")
    assert handler.is_complete(event, FakeLambdaContext()) == {"IsComplete": False}
