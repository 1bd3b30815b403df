"""On AWS one OpenSearch index serves every workspace with the deployment's embedding model,
so choosing a workspace's own embedding model is refused with a 400 that says so, through
the api function's routes (user settings and /embedding-model), and nothing changes."""

from __future__ import annotations

from tests.aws.handlers import call, sign_in


def test_choosing_a_workspace_embedding_model_is_refused_on_aws(api_with_accounts):
    api = api_with_accounts
    token = sign_in(api)
    status, config = call(api, "POST", "/model-configs", {
        "name": "e5", "provider": "openai", "modelId": "e5", "type": "embedding",
        "baseUrl": "https://embeddings.example.com/v1",
    }, token=token)  # fmt: skip
    assert status == 201, config
    status, before = call(api, "GET", "/embedding-model", token=token)
    assert status == 200 and before["serving"]["modelConfigId"] is None, before
    for path, body in [
        ("/user-settings", {"selectedEmbeddingId": config["id"]}),
        ("/embedding-model", {"modelConfigId": config["id"]}),
    ]:
        status, refused = call(api, "PUT", path, body, token=token)
        assert status == 400, refused
        assert "not available on the AWS deployment" in refused["message"], refused
    status, settings = call(api, "GET", "/user-settings", token=token)
    assert status == 200 and settings["selectedEmbeddingId"] is None
    assert call(api, "GET", "/embedding-model", token=token) == (200, before)
    # An unknown config is still a 404 there, as anywhere.
    status, missing = call(api, "PUT", "/embedding-model", {"modelConfigId": "nope"}, token=token)
    assert status == 404, missing
