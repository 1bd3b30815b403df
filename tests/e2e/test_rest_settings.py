"""/user-settings over a real server: defaults, partial updates, ranges, model references,
and one user's settings never touching another's."""

from __future__ import annotations

import pytest

from tests.e2e.rest_harness import assert_error

DEFAULTS = {
    "selectedLLMId": None,
    "selectedEmbeddingId": None,
    "selectedRerankId": None,
    "temperature": 0.7,
    "maxTokens": 2048,
    "topK": 5,
    "enableRerank": False,
    "similarityThreshold": 0.3,
    "enableFullTextSearch": True,
    "language": "en",
    "languageChosen": False,  # Bunko's: the default, not the person's choice
}


def test_defaults_then_partial_updates(rest):
    user = rest.new_user()
    assert user.client.get("/user-settings").json() == DEFAULTS
    first = user.client.put("/user-settings", json={"temperature": 0.2, "language": "ja"})
    assert first.status_code == 200
    assert first.json() == {
        **DEFAULTS, "temperature": 0.2, "language": "ja", "languageChosen": True,
    }  # fmt: skip
    second = user.client.put("/user-settings", json={"topK": 12, "enableRerank": True}).json()
    assert second == {
        **DEFAULTS,
        "temperature": 0.2,
        "language": "ja",
        "languageChosen": True,
        "topK": 12,
        "enableRerank": True,
    }
    assert user.client.get("/user-settings").json() == second
    assert rest.new_user().client.get("/user-settings").json() == DEFAULTS
    # saving another field keeps the language a default, not a choice
    other = rest.new_user()
    assert other.client.put("/user-settings", json={"topK": 9}).json()["languageChosen"] is False


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"temperature": 2.5}, "temperature"),
        ({"temperature": -0.1}, "temperature"),
        ({"maxTokens": 0}, "maxTokens"),
        ({"maxTokens": 1.5}, "maxTokens"),
        ({"topK": 101}, "topK"),
        ({"similarityThreshold": 1.01}, "similarityThreshold"),
        ({"language": "fr"}, "language"),
        ({"enableRerank": "sometimes"}, "enableRerank"),
        ({"colour": "blue"}, "colour"),
    ],
)
def test_out_of_range_values_are_400_naming_the_field(rest, change, field):
    user = rest.new_user()
    response = user.client.put("/user-settings", json=change)
    assert field in str(assert_error(response, 400)["message"])
    assert user.client.get("/user-settings").json() == DEFAULTS


def test_selected_models_must_exist_with_the_right_type(rest):
    user = rest.new_user()
    llm = user.client.post(
        "/model-configs", json={"name": "l", "provider": "openai", "modelId": "m", "type": "llm"}
    ).json()
    rerank = user.client.post(
        "/model-configs", json={"name": "r", "provider": "local", "modelId": "m", "type": "rerank"}
    ).json()
    assert_error(user.client.put("/user-settings", json={"selectedLLMId": rerank["id"]}), 400)
    assert_error(user.client.put("/user-settings", json={"selectedLLMId": "missing"}), 400)
    chosen = user.client.put(
        "/user-settings", json={"selectedLLMId": llm["id"], "selectedRerankId": rerank["id"]}
    ).json()
    assert chosen["selectedLLMId"] == llm["id"] and chosen["selectedRerankId"] == rerank["id"]
    # another user cannot point at these ids
    assert_error(
        rest.new_user().client.put("/user-settings", json={"selectedLLMId": llm["id"]}), 400
    )
    # a deleted model reads back as null; null clears a choice
    user.client.delete(f"/model-configs/{llm['id']}")
    assert user.client.get("/user-settings").json()["selectedLLMId"] is None
    cleared = user.client.put("/user-settings", json={"selectedRerankId": None}).json()
    assert cleared["selectedRerankId"] is None
