"""ChatService: answers with sources. Retrieve with the user's saved settings, abstain when
nothing passes the threshold (no model is called), else stream a grounded, cited answer.

A question is searched alone unless it continues the conversation (services/chat/follow_up.py);
the model reads the history either way.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from bunko.domain import Chunk
from bunko.domain.evidence import Evidence, evidences
from bunko.domain.metadata import Filter as MetadataFilter
from bunko.errors import BunkoError
from bunko.ports.chat import ChatMessage, ChatRequest, ModelResolver, ProviderError
from bunko.services.chat import chat_text, follow_up
from bunko.services.search import SearchItem, SearchOptions, SearchService
from bunko.services.settings import UserPreferences, UserSettingsService, default_settings

log = logging.getLogger(__name__)

# With rerank on, this many times topK candidates go to the reranker.
RERANK_POOL = 3


@dataclass(frozen=True)
class ChatPreferences:
    """The user settings chat reads (aurak's /user-settings)."""

    top_k: int = 5
    threshold: float = 0.3
    full_text: bool = True  # off: vector search only
    rerank_id: str | None = None  # set only when rerank is enabled
    llm_id: str | None = None  # None: the offline extractive answerer
    temperature: float = 0.7
    max_tokens: int = 2048
    language: str = "en"  # the interface's: progress messages
    # the answer's framing when the caller names it (MCP ask's `language`); None: the
    # question's language (chat_text.question_language)
    answer_language: str | None = None
    # Only passages of documents whose metadata passes this (domain/metadata.parse_filter):
    # a request's own, never a saved setting.
    metadata_filter: MetadataFilter | None = None
    # Only passages of documents this source owns (SearchOptions.source): a request's own.
    source_filter: str | None = None

    @classmethod
    def of(cls, saved: UserPreferences, language: str | None = None) -> ChatPreferences:
        return cls(
            top_k=int(saved.top_k),
            threshold=float(saved.similarity_threshold),
            full_text=bool(saved.enable_full_text_search),
            rerank_id=saved.selected_rerank_id if saved.enable_rerank else None,
            llm_id=saved.selected_llm_id,
            temperature=float(saved.temperature),
            max_tokens=int(saved.max_tokens),
            language=language or saved.language,
        )


@dataclass(frozen=True)
class Source:
    """One numbered source, the same fields at every door (REST, /v1, MCP `ask`)."""

    file_name: str
    content: str
    score: float
    chunk_index: int
    document_id: str
    page: int | None = None  # the page of the evidence (else of the passage's start)
    page_end: int | None = None  # the passage's last page
    # The sentence the answer rests on, and its offsets into `content` (Python characters).
    quote: str | None = None
    quote_start: int | None = None
    quote_end: int | None = None
    # Every sentence the answer takes from it, in the answer's order (the first is `quote`).
    quotes: tuple[Evidence, ...] = ()
    chunk: Chunk | None = field(default=None, repr=False, compare=False)

    def citing(self, found: Sequence[Evidence]) -> Source:
        """This source with its evidence sentences (the first one's page is its page)."""
        if not found:
            return self
        first = found[0]
        page = self.chunk.page_at(first.start) if self.chunk is not None else self.page
        return replace(
            self,
            quote=first.text,
            quote_start=first.start,
            quote_end=first.end,
            page=page,
            quotes=tuple(found),
        )


@dataclass(frozen=True)
class ChatEvent:
    type: Literal["progress", "content", "sources", "error"]
    data: Any  # text, or a list of Source for "sources"
    # on "sources": the answer's id a person may mark (services/chat/answers.py), and its
    # message index when it was saved into a conversation
    answer_id: str | None = None
    turn: int | None = None


def collect_answer(events: Iterable[ChatEvent]) -> tuple[str, list[Source], str | None]:
    """A whole answer from its events, for callers that do not stream: the text, the
    sources, and the error message of an error event (None when there was none)."""
    text: list[str] = []
    sources: list[Source] = []
    for event in events:
        if event.type == "content":
            text.append(event.data)
        elif event.type == "sources":
            sources = list(event.data)
        elif event.type == "error":
            return "".join(text), sources, str(event.data)
    return "".join(text), sources, None


def unique_sources(items: Sequence[SearchItem]) -> list[Source]:
    """One source per chunk, and one per text (the same passage in two files is one)."""
    seen: set[Any] = set()
    sources: list[Source] = []
    for item in items:
        text_key = " ".join(item.content.split())
        if (item.document_id, item.chunk_index) in seen or text_key in seen:
            continue
        seen.update({(item.document_id, item.chunk_index), text_key})
        name = item.name or os.path.basename(item.path) or item.path
        sources.append(
            Source(
                name,
                item.content,
                item.similarity,
                item.chunk_index,
                item.document_id,
                page=item.page,
                page_end=item.page_end,
                chunk=item.chunk,
            )
        )
    return sources


def with_evidence(sources: Sequence[Source], answer: str, question: str) -> list[Source]:
    """Each source with the sentences the answer takes from it (domain/evidence)."""
    return [
        s.citing(evidences(s.content, answer, n, question)) for n, s in enumerate(sources, start=1)
    ]


class ChatService:
    def __init__(
        self,
        *,
        search: SearchService,
        models: ModelResolver,
        settings: UserSettingsService | None = None,
    ) -> None:
        self.search = search
        self.models = models
        self.settings = settings

    def preferences(self, owner: str, workspace_id: str, language: str | None) -> ChatPreferences:
        saved = (
            self.settings.get(owner, workspace_id)
            if self.settings
            else UserPreferences.of(default_settings())
        )
        return ChatPreferences.of(saved, language)

    def retrieve(self, workspace_id: str, query: str, prefs: ChatPreferences) -> list[Source]:
        """The numbered sources: hits over the threshold, deduplicated, reranked if asked."""
        pool = prefs.top_k * (RERANK_POOL if prefs.rerank_id else 1)
        options = SearchOptions(
            limit=pool,
            min_score=prefs.threshold,
            group_by_document=False,
            method=None if prefs.full_text else "vector",
            metadata=prefs.metadata_filter,
            source=prefs.source_filter,
        )
        sources = unique_sources(self.search.search(workspace_id, query, options).items)
        if prefs.rerank_id and sources:
            reranker = self.models.reranker(workspace_id, prefs.rerank_id)
            hits = reranker.rerank(query, [s.content for s in sources], prefs.top_k)
            sources = [
                replace(s, score=round(h.score, 6))
                for h in hits
                if 0 <= h.index < len(sources) and (s := sources[h.index])
            ]
        return sources[: prefs.top_k]

    def answer(
        self,
        workspace_id: str,
        message: str,
        history: Sequence[ChatMessage],
        prefs: ChatPreferences,
        *,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> Iterator[ChatEvent]:
        """progress, [progress], content..., sources; or an error event where it failed."""
        language = prefs.language if prefs.language in chat_text.LANGUAGES else "en"
        yield ChatEvent("progress", chat_text.SEARCHING[language])
        # progress speaks the user's language; the answer, the question's
        answering = prefs.answer_language or chat_text.question_language(message, language)
        query = follow_up.retrieval_query(message, history)
        try:
            sources = self.retrieve(workspace_id, query, prefs)
        except (ProviderError, BunkoError) as exc:
            yield ChatEvent("error", str(exc))
            return
        if not sources:
            yield ChatEvent("content", chat_text.NOTHING_FOUND[answering])
            yield ChatEvent("sources", [])
            return
        yield ChatEvent("progress", chat_text.FOUND[language])
        system = chat_text.system_prompt([(s.file_name, s.content) for s in sources], answering)
        request = ChatRequest(
            messages=chat_text.conversation(system, history, message),
            question=follow_up.quoted_for(message, query),
            passages=[s.content for s in sources],
            language=answering,
            temperature=prefs.temperature,
            max_tokens=prefs.max_tokens,
        )
        try:
            model = self.models.chat_model(workspace_id, prefs.llm_id)
            answer: list[str] = []
            with closing(model.stream(request)) as deltas:  # closing stops the model
                for delta in deltas:
                    if cancelled():
                        log.info("chat cancelled by the client; generation stopped")
                        return
                    answer.append(delta)
                    yield ChatEvent("content", delta)
        except (ProviderError, BunkoError) as exc:
            yield ChatEvent("error", str(exc))
            return
        text = "".join(answer)
        kept = [] if chat_text.declines(text) else with_evidence(sources, text, message)
        yield ChatEvent("sources", kept)
