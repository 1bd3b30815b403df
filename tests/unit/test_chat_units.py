"""The chat pieces without a server: the extractive answerer, the retrieval query, Converse's
message shape, source deduplication and provider error messages."""

from __future__ import annotations

import httpx
import openai

from bunko.adapters.aws.bedrock_chat import converse_messages
from bunko.adapters.extractive_chat import INTRO, ExtractiveChat, best_quotes
from bunko.adapters.openai_chat import provider_error
from bunko.ports.chat import ChatMessage, ChatRequest
from bunko.services.chat.chat import unique_sources
from bunko.services.chat.follow_up import retrieval_query
from bunko.services.search.search import SearchItem


def test_extractive_quotes_the_best_sentences_with_their_numbers():
    passages = [
        "Bread is baked at dawn. The oven is wood-fired.",
        "The lighthouse was built in 1872. It has a museum now.",
    ]
    quotes = best_quotes("When was the lighthouse built?", passages)
    assert quotes[0] == (2, "The lighthouse was built in 1872.")
    request = ChatRequest(
        messages=[], question="lighthouse built", passages=passages, language="zh"
    )
    text = "".join(ExtractiveChat().stream(request))
    assert text.startswith(INTRO["zh"]) and "[2]" in text and "[1]" not in text


def test_extractive_reads_japanese_and_respects_max_tokens():
    passages = ["静岡県は緑茶の生産量が最も多い県です。富士山が見えます。"]
    assert best_quotes("緑茶の生産量", passages) == [(1, "静岡県は緑茶の生産量が最も多い県です。")]
    short = ChatRequest(
        messages=[], question="緑茶", passages=passages, language="ja", max_tokens=1
    )
    assert "".join(ExtractiveChat().stream(short)) == INTRO["ja"]


def test_follow_up_query_carries_the_previous_question():
    history = [ChatMessage("user", "Revenue in 2022?"), ChatMessage("assistant", "10M [1]")]
    assert retrieval_query("and in 2023?", history) == "Revenue in 2022?\nand in 2023?"
    assert retrieval_query("hello", []) == "hello"


def test_converse_messages_put_system_apart_and_alternate_from_a_user():
    system, turns = converse_messages(
        [
            ChatMessage("system", "S"),
            ChatMessage("assistant", "stray"),
            ChatMessage("user", "a"),
            ChatMessage("user", "b"),
            ChatMessage("assistant", "c"),
        ]
    )
    assert system == [{"text": "S"}]
    assert turns == [
        {"role": "user", "content": [{"text": "a"}, {"text": "b"}]},
        {"role": "assistant", "content": [{"text": "c"}]},
    ]


def _item(doc: str, index: int, content: str) -> SearchItem:
    return SearchItem(
        id=f"{doc}-{index}", document_id=doc, path=f"docs/{doc}.txt", mime="text/plain",
        category=None, content=content, similarity=0.5, vector_score=0, text_score=0.5,
        chunk_index=index,
    )  # fmt: skip


def test_sources_are_one_per_chunk_and_per_text():
    items = [
        _item("a", 0, "x  y"),
        _item("a", 0, "other"),
        _item("b", 3, "x y"),
        _item("c", 1, "z"),
    ]
    sources = unique_sources(items)
    assert [(s.document_id, s.chunk_index) for s in sources] == [("a", 0), ("c", 1)]
    assert sources[0].file_name == "a.txt"


def test_provider_errors_say_what_to_fix_and_whether_to_retry():
    request = httpx.Request("POST", "http://x/v1/chat/completions")

    def status(code: int, cls):
        return cls("boom", response=httpx.Response(code, request=request), body=None)

    refused = provider_error(
        "openai (gpt)", "gpt-4o", None, status(401, openai.AuthenticationError)
    )
    assert str(refused).startswith("openai (gpt):") and "apiKey" in str(refused)
    assert not refused.retryable
    missing = provider_error("local (x)", "m", "http://h/v1", status(404, openai.NotFoundError))
    assert "'m'" in str(missing) and "http://h/v1" in str(missing)
    assert provider_error("p", "m", None, status(429, openai.RateLimitError)).retryable
    too_long = openai.BadRequestError(
        "maximum context length exceeded", response=httpx.Response(400, request=request), body=None
    )
    assert "topK" in str(provider_error("p", "m", None, too_long))
    assert provider_error("p", "m", None, openai.APIConnectionError(request=request)).retryable
