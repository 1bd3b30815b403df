"""/model-configs over a real server: CRUD, API keys encrypted at rest and never returned,
baseUrl validation, conflicts, and another user's configs unreachable (404)."""

from __future__ import annotations

import sqlite3

import pytest

from bunko.errors import ValidationError
from tests.e2e.rest_harness import assert_error

SECRET_KEY = "sk-live-0123456789abcdef-do-not-leak"
CONFIG = {
    "name": "GPT",
    "provider": "openai",
    "modelId": "gpt-4o-mini",
    "baseUrl": "https://api.openai.com/v1",
    "apiKey": SECRET_KEY,
    "type": "llm",
    "supportsVision": True,
}


def test_create_list_update_delete(rest):
    user = rest.new_user()
    created = user.client.post("/model-configs", json=CONFIG)
    assert created.status_code == 201
    config = created.json()
    assert {k: config[k] for k in CONFIG if k != "apiKey"} == {
        k: v for k, v in CONFIG.items() if k != "apiKey"
    }
    assert config["hasApiKey"] is True and "apiKey" not in config
    assert user.client.get("/model-configs").json() == [config]

    updated = user.client.put(f"/model-configs/{config['id']}", json={"name": "GPT mini"})
    assert updated.status_code == 200
    body = updated.json()
    assert body["name"] == "GPT mini" and body["modelId"] == "gpt-4o-mini" and body["hasApiKey"]
    cleared = user.client.put(f"/model-configs/{config['id']}", json={"apiKey": None}).json()
    assert cleared["hasApiKey"] is False

    assert user.client.delete(f"/model-configs/{config['id']}").status_code == 200
    assert user.client.get("/model-configs").json() == []
    assert_error(user.client.delete(f"/model-configs/{config['id']}"), 404)


def test_every_provider_and_type(rest):
    user = rest.new_user()
    for provider, kind in [("gemini", "llm"), ("bedrock", "embedding"), ("local", "rerank")]:
        body = {"name": f"{provider}-{kind}", "provider": provider, "modelId": "m", "type": kind}
        response = user.client.post("/model-configs", json=body)
        assert response.status_code == 201, response.text
        assert response.json()["baseUrl"] is None and response.json()["hasApiKey"] is False


def test_api_keys_are_encrypted_at_rest_and_never_returned(rest):
    user = rest.new_user()
    config = user.client.post("/model-configs", json=CONFIG).json()
    for response in (
        user.client.get("/model-configs"),
        user.client.get(f"/model-configs/{config['id']}"),
        user.client.put(f"/model-configs/{config['id']}", json={"supportsVision": False}),
    ):
        assert SECRET_KEY not in response.text
    db = sqlite3.connect(rest.services.settings.metadata_path)
    stored = db.execute(
        "SELECT api_key_encrypted FROM model_configs WHERE id = ?", (config["id"],)
    ).fetchone()[0]
    db.close()
    assert stored and SECRET_KEY not in stored
    workspace = rest.services.identity.authenticate(user.token).workspace_id
    assert rest.services.accounts.model_configs.api_key(workspace, config["id"]) == SECRET_KEY


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"baseUrl": "ftp://example.com"}, "baseUrl"),
        ({"baseUrl": "javascript:alert(1)"}, "baseUrl"),
        ({"baseUrl": "https://user:pw@example.com"}, "baseUrl"),
        ({"provider": "acme"}, "provider"),
        ({"type": "chat"}, "type"),
        ({"name": ""}, "name"),
        ({"supportsVision": "maybe"}, "supportsVision"),
        ({"unknown": 1}, "unknown"),
    ],
)
def test_invalid_fields_are_400_naming_the_field(rest, change, field):
    user = rest.new_user()
    response = user.client.post("/model-configs", json={**CONFIG, **change})
    assert field in str(assert_error(response, 400)["message"])


def test_duplicate_names_conflict(rest):
    user = rest.new_user()
    first = user.client.post("/model-configs", json=CONFIG).json()
    assert_error(user.client.post("/model-configs", json=CONFIG), 409)
    other = user.client.post("/model-configs", json={**CONFIG, "name": "Other"}).json()
    assert_error(
        user.client.put(f"/model-configs/{other['id']}", json={"name": first["name"]}), 409
    )
    # the same name in another user's workspace is fine
    assert rest.new_user().client.post("/model-configs", json=CONFIG).status_code == 201


def test_another_users_configs_are_unreachable(rest):
    owner, stranger = rest.new_user(), rest.new_user()
    config = owner.client.post("/model-configs", json=CONFIG).json()
    assert stranger.client.get("/model-configs").json() == []
    assert_error(stranger.client.get(f"/model-configs/{config['id']}"), 404)
    assert_error(stranger.client.put(f"/model-configs/{config['id']}", json={"name": "mine"}), 404)
    assert_error(stranger.client.delete(f"/model-configs/{config['id']}"), 404)
    assert owner.client.get(f"/model-configs/{config['id']}").json()["name"] == "GPT"


@pytest.mark.parametrize(
    "url", ["http://169.254.169.254/latest/meta-data/", "http://[fe80::1]:8080/v1"]
)
def test_a_base_url_at_instance_metadata_is_refused_and_nothing_changes(rest, url):
    user = rest.new_user()
    assert (
        "link-local"
        in assert_error(user.client.post("/model-configs", json={**CONFIG, "baseUrl": url}), 400)[
            "message"
        ]
    )
    assert user.client.get("/model-configs").json() == []
    config = user.client.post("/model-configs", json=CONFIG).json()
    assert_error(user.client.put(f"/model-configs/{config['id']}", json={"baseUrl": url}), 400)
    assert user.client.get("/model-configs").json() == [config]


def test_a_local_model_server_is_a_normal_base_url_on_one_machine(rest):
    user = rest.new_user()
    local = {
        **CONFIG,
        "name": "Ollama",
        "provider": "local",
        "baseUrl": "http://127.0.0.1:11434/v1",
    }
    assert user.client.post("/model-configs", json=local).status_code == 201


def test_a_saved_config_is_checked_again_where_it_points_when_used(rest):
    """A name may resolve elsewhere than when it was saved: the model is refused, not called."""
    from bunko.bootstrap.models import chat_models

    user = rest.new_user()
    config = user.client.post("/model-configs", json=CONFIG).json()
    workspace = rest.services.identity.authenticate(user.token).workspace_id
    configs = rest.services.accounts.model_configs
    stored = configs.store.get_model_config(workspace, config["id"])
    stored.base_url = "http://169.254.169.254/v1"  # as if its name now resolved there
    configs.store.save_model_config(stored)
    with pytest.raises(ValidationError, match="link-local"):
        chat_models(configs).chat_model(workspace, config["id"])
