"""Issue 33 point 2, embeddings: a model config's OpenAI-compatible endpoint says how many
vectors it answers, how long they are and how many bytes it sends. An endpoint that answered
200,000-dimensional vectors was accepted as a workspace's model, and the server's memory grew
to 1.78 GB and stayed. Over a real server and a hostile endpoint on loopback: such a config
is refused when it is chosen (400 naming the problem), an endpoint that turns hostile later
is refused at the batch it spoils, and this process's resident memory stays within
`BOUND` while it happens."""

from __future__ import annotations

import pytest

from bunko.adapters.openai_embedder import OpenAIEmbedder
from tests.e2e.rest_harness import assert_error
from tests.security.hostile_models import HostileModels, choose
from tests.security.memory import MB, RssGrowth

pytestmark = pytest.mark.slow  # hostile endpoints answering hundreds of MB

BOUND = 32 * MB  # the memory an attack may cost while it is refused


@pytest.fixture(scope="module", autouse=True)
def honest_choice_first(rest) -> None:
    """What the first call imports (the openai SDK, the local index) is not counted against
    an attack."""
    with HostileModels() as honest:
        assert choose(rest.new_user(), honest.base).status_code == 200


@pytest.mark.parametrize(
    ("attack", "said"),
    [
        ("wide", "dimensions; at most 16384"),
        ("extra", "answered 3 vectors for 1 text"),
        ("nan", "not a finite number"),
        ("huge", "bytes"),
        ("bomb", "bytes"),
    ],
)
def test_a_hostile_endpoint_is_refused_when_it_is_chosen(rest, attack, said):
    user = rest.new_user()
    with HostileModels(attack) as endpoint, RssGrowth() as rss:
        refused = choose(user, endpoint.base)
    message = assert_error(refused, 400)["message"]
    assert "could not embed a probe text" in message and said in message, message
    assert rss.growth < BOUND, f"{rss.growth / MB:.0f} MB"
    assert user.client.get("/embedding-model").json()["building"] is None  # nothing chosen


def embedder(endpoint: HostileModels) -> OpenAIEmbedder:
    """The workspace's embedder after an honest probe said 8 dimensions."""
    return OpenAIEmbedder(base_url=endpoint.base, model="m", dimensions=8, send_dimensions=False)


@pytest.mark.parametrize(
    ("attack", "said"),
    [
        ("wide", "at least"),  # 64 vectors of 200,000 numbers: the 1.78 GB of the finding
        ("huge", "passed"),
        ("bomb", "passed"),  # 200 MB compressed into 200 KB: counted as it unfolds
        ("extra", "answered 66 vectors for 64 texts"),
        ("ragged", "vectors of different lengths"),
        ("nan", "not a finite number"),
    ],
)
def test_an_endpoint_that_turns_hostile_is_refused_at_the_batch(rest, attack, said):
    with (
        HostileModels(attack) as endpoint,
        RssGrowth() as rss,
        pytest.raises(ValueError, match=said),
    ):
        embedder(endpoint).embed_documents([f"text {i}" for i in range(64)])
    assert rss.growth < BOUND, f"{rss.growth / MB:.0f} MB"
    assert endpoint.requests == 1  # refused, not retried


@pytest.mark.parametrize("attack", ["honest", "gzip"])
def test_an_honest_endpoint_still_embeds(rest, attack):
    with HostileModels(attack) as endpoint:
        matrix = embedder(endpoint).embed_documents([f"text {i}" for i in range(100)])
    assert matrix.shape == (100, 8) and endpoint.requests == 2  # batches of 64
