"""Finding 5 over a real server: deeply nested JSON escaped the /mcp auth guard as a 500
(RecursionError is not a ValueError); confusable usernames registered beside `admin`; file
and other names with a right-to-left override (U+202E) were accepted. Plus the registration
answer for a taken username, which aurak's contract fixes (docs/security.md)."""

from __future__ import annotations

import logging

import httpx
import pytest

from tests.e2e.mcp_harness import deployed
from tests.e2e.rest_harness import assert_error

RLO = "\u202e"
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def test_deeply_nested_json_to_mcp_is_a_json_rpc_error(tmp_path, caplog):
    with deployed(tmp_path / "data") as kb:
        key = kb.key("kb:read")
        for body in ("[" * 100_000, '{"a":' * 100_000):
            with caplog.at_level(logging.ERROR):
                response = httpx.post(
                    kb.url + "/mcp", content=body, timeout=30,
                    headers={**MCP_HEADERS, "Authorization": f"Bearer {key}",
                             "Content-Type": "application/json"},
                )  # fmt: skip
            assert 400 <= response.status_code < 500, response.text[:200]
            assert response.json()["error"]["code"] == -32700
            assert "Traceback" not in response.text
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_deeply_nested_json_to_rest_is_a_400(rest):
    user = rest.new_user()
    response = user.client.post(
        "/model-configs", content="[" * 100_000, headers={"Content-Type": "application/json"}
    )
    assert_error(response, 400)


@pytest.mark.parametrize(
    "lookalike",
    ["\u0430dmin", "adm\u0131n", "ADM\u0130N", "Admin", "\uff41dmin", "ad" + RLO + "nim"],
    ids=["cyrillic-a", "dotless-i", "dotted-capital-I", "case", "fullwidth", "bidi"],
)
def test_usernames_that_pass_for_admin_are_refused(rest, lookalike):
    with rest.client() as anonymous:
        response = anonymous.post(
            "/auth/register", json={"username": lookalike, "password": "a good password"}
        )
    assert response.status_code in (400, 409), response.text
    assert_error(response, response.status_code)
    assert rest.services.accounts.auth.users.get_user_by_username(lookalike) is None or (
        rest.services.accounts.auth.users.get_user_by_username(lookalike).username == "admin"
    )


@pytest.mark.parametrize("name", ["ボブ", "Müller", "山田_taro", "ivan.petrov"])
def test_ordinary_names_of_any_script_still_register(rest, name):
    with rest.client() as anonymous:
        response = anonymous.post(
            "/auth/register", json={"username": name, "password": "a good password"}
        )
    assert response.status_code == 201, response.text


def test_a_taken_username_is_409_as_aurak_says(rest):
    """aurak answers registration with the new user (its id), and lists 409 for a conflict:
    the same answer for a taken name would hand out an id that does not exist. So a taken
    name stays 409; a lookalike of a taken name gets the very same answer."""
    with rest.client() as anonymous:
        taken = anonymous.post("/auth/register", json={"username": "admin", "password": "x" * 12})
        alike = anonymous.post("/auth/register", json={"username": "ADMİN", "password": "x" * 12})
    assert assert_error(taken, 409)["message"] == "username 'admin' is taken"
    assert assert_error(alike, 409)["message"] == "username 'ADMİN' is taken"


def test_file_names_with_bidi_controls_are_refused(rest):
    user = rest.new_user()
    spoofed = f"invoice_{RLO}fdp.txt"  # shows as invoice_txt.pdf
    upload = user.client.post("/upload", files={"file": (spoofed, b"text", "text/plain")})
    assert "bidi" in assert_error(upload, 400)["message"]
    convert = user.client.post(
        "/libreoffice/convert", files={"file": (f"report{RLO}xcod.docx", b"x", "text/plain")}
    )
    assert "bidi" in assert_error(convert, 400)["message"]
    config = user.client.post(
        "/model-configs",
        json={"name": f"gpt{RLO}4", "provider": "openai", "modelId": "m", "type": "llm"},
    )
    assert "bidi" in str(assert_error(config, 400)["message"])
    assert user.client.get("/knowledge-bases").json() == []  # nothing was stored
