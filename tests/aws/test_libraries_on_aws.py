"""Shared libraries on the AWS shape: the API handler, with events as API Gateway sends them
(the X-Bunko-Library header among the proxy event's headers), over DynamoDB on moto: a
member works in the library, a non-member gets 404, a viewer's write is 403."""

from __future__ import annotations

import json

from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import api_event, call, sign_in


def in_library(api, method: str, path: str, token: str, library: str, body: dict | None = None):
    event = api_event(method, path, body=json.dumps(body) if body is not None else None, headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {token}",
        "X-Bunko-Library": library,
    })  # fmt: skip
    response = api.handler(event, FakeLambdaContext())
    return response["statusCode"], json.loads(response["body"])


def test_members_work_in_a_library_and_others_are_told_it_does_not_exist(api_with_accounts):
    api = api_with_accounts
    owner, viewer, outsider = sign_in(api, "ada"), sign_in(api, "grace"), sign_in(api, "alan")
    status, library = call(api, "POST", "/libraries", {"name": "Team Handbook"}, token=owner)
    assert status == 201, library
    status, member = call(
        api, "PUT", f"/libraries/{library['id']}/members",
        {"username": "grace", "role": "viewer"}, token=owner,
    )  # fmt: skip
    assert status == 200 and member["role"] == "viewer"
    assert in_library(api, "DELETE", "/knowledge-bases/clear", owner, "Team Handbook")[0] == 200

    assert in_library(api, "GET", "/knowledge-bases", viewer, "Team Handbook")[0] == 200
    status, refused = in_library(api, "DELETE", "/knowledge-bases/clear", viewer, "Team Handbook")
    assert status == 403 and "kb:write" in refused["message"]
    status, missing = in_library(api, "GET", "/knowledge-bases", outsider, "Team Handbook")
    assert status == 404 and set(missing) == {"statusCode", "message", "error"}
    status, listed = call(api, "GET", "/libraries", token=viewer)
    assert [(lib["name"], lib["role"]) for lib in listed] == [
        ("grace", "owner"),
        ("Team Handbook", "viewer"),
    ]
