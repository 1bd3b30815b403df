"""Issue 33 point 2, chat and rerank: a model config's chat endpoint decides how long its
answer streams and how big each piece is; a rerank endpoint how many results it returns and
which documents they name. Against a hostile endpoint on loopback: an answer that never
stops is cut at the request's max tokens (and the connection closed, which stops a real
server), one that says nothing for longer than the answer's time bound is cut there, one
huge piece is refused; rerank results that name no document sent, or a million of them, are
refused, within `BOUND` of this process's memory."""

from __future__ import annotations

import pytest

from bunko.adapters.http_rerank import HttpRerank
from bunko.adapters.openai_chat import OpenAIChat
from bunko.ports.chat import ChatMessage, ChatRequest, ProviderError
from tests.security.hostile_models import FOREVER, HostileModels
from tests.security.memory import MB, RssGrowth
from tests.waiting import wait_for

BOUND = 32 * MB
REQUEST = ChatRequest(messages=[ChatMessage("user", "hello")], max_tokens=50)


def chat(endpoint: HostileModels, **options) -> OpenAIChat:
    return OpenAIChat(
        provider="hostile", model="m", api_key=None, base_url=endpoint.base, **options
    )


def test_an_answer_that_never_stops_is_cut_at_max_tokens():
    with HostileModels("forever") as endpoint:
        deltas = list(chat(endpoint).stream(REQUEST))
        assert 0 < len(deltas) <= REQUEST.max_tokens < FOREVER
        wait_for(endpoint.hung_up.is_set, timeout=30)  # the connection was closed


def test_an_answer_that_stalls_is_cut_at_its_time_bound():
    with (
        HostileModels("silent") as endpoint,
        pytest.raises(ProviderError, match="longer than 1 s"),
    ):
        list(chat(endpoint, max_seconds=1.0).stream(REQUEST))


def test_one_huge_piece_of_an_answer_is_refused():
    with (
        HostileModels("blob") as endpoint,
        RssGrowth() as rss,
        pytest.raises(ProviderError, match="passed"),
    ):
        list(chat(endpoint).stream(REQUEST))
    assert rss.growth < BOUND, f"{rss.growth / MB:.0f} MB"


def test_an_honest_answer_streams():
    with HostileModels() as endpoint:
        assert list(chat(endpoint).stream(REQUEST)) == ["fine"]


def reranker(endpoint: HostileModels) -> HttpRerank:
    return HttpRerank(provider="hostile", model="m", base_url=endpoint.base, api_key=None)


DOCUMENTS = ["harbour", "lighthouse", "bakery"]


def test_rerank_results_that_name_no_document_sent_are_refused():
    with HostileModels("out_of_range") as endpoint:
        with pytest.raises(ProviderError, match=r"index 7 .* 3 documents"):
            reranker(endpoint).rerank("q", DOCUMENTS, 2)
        assert endpoint.requests == 1  # not retried


def test_a_million_rerank_results_are_refused():
    with (
        HostileModels("flood") as endpoint,
        RssGrowth() as rss,
        pytest.raises(ProviderError, match="passed"),
    ):
        reranker(endpoint).rerank("q", DOCUMENTS, 2)
    assert rss.growth < BOUND, f"{rss.growth / MB:.0f} MB"


def test_an_honest_rerank_still_ranks():
    with HostileModels() as endpoint:
        hits = reranker(endpoint).rerank("q", DOCUMENTS, 2)
    assert [h.index for h in hits] == [0, 1]
