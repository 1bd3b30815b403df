"""HttpRerank: a Cohere/Jina-style `POST {baseUrl}/rerank` endpoint (TEI, vLLM, Jina,
llama.cpp with a reranking model, Cohere).

The endpoint is a user's (a model config), so its answer is bounded: over a bounded client
(adapters/bounded_http.py: no redirects, RERANK_SECONDS for the whole answer), cut off past
what a result per document sent can take, and refused unless it holds at most one result per
document, each naming a document sent (once) with a finite score."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import httpx

from bunko.adapters.bounded_http import RefusedAnswer, bounded_client, read_capped
from bunko.adapters.outbound_limits import ANSWER_SLACK, RERANK_BYTES_PER_RESULT, RERANK_SECONDS
from bunko.adapters.retrying import call_with_retries
from bunko.ports.chat import ProviderError, RerankHit

TIMEOUT_SECONDS = 30.0


class HttpRerank:
    def __init__(
        self,
        *,
        provider: str,
        model: str,
        base_url: str,
        api_key: str | None,
        max_seconds: float = RERANK_SECONDS,
    ) -> None:
        self.name = model
        self.provider = provider
        self.model = model
        self.url = base_url.rstrip("/") + "/rerank"
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.max_seconds = max_seconds

    def _post(self, body: dict) -> bytes:
        documents = body["documents"]
        # a small object per result, or the document itself when the server echoes it
        limit = ANSWER_SLACK + sum(RERANK_BYTES_PER_RESULT + len(d.encode()) for d in documents)
        client = bounded_client(
            max_bytes=limit, max_seconds=self.max_seconds, timeout=TIMEOUT_SECONDS
        )
        try:
            with client, client.stream("POST", self.url, json=body, headers=self.headers) as r:
                status = r.status_code
                if status in (401, 403):
                    raise ProviderError(
                        self.provider, "the API key was refused: check the rerank config's apiKey"
                    )
                if status == 404:
                    raise ProviderError(
                        self.provider, f"{self.url} not found: check baseUrl and modelId"
                    )
                if status == 429 or status >= 500:
                    raise ProviderError(
                        self.provider, f"{self.url} answered {status}", retryable=True
                    )
                if status >= 400:
                    text = r.read().decode(errors="replace")[:200]
                    raise ProviderError(self.provider, f"rerank refused ({status}): {text}")
                return read_capped(
                    r.iter_bytes(),
                    limit,
                    lambda head: (
                        f"the rerank answer for {len(documents)} documents passed "
                        f"{limit:,} bytes; cut off"
                    ),
                )
        except RefusedAnswer as exc:
            raise ProviderError(self.provider, str(exc)) from exc
        except httpx.TimeoutException as exc:
            raise ProviderError(
                self.provider, f"no answer from {self.url} in time", retryable=True
            ) from exc
        except httpx.HTTPError as exc:
            raise ProviderError(
                self.provider, f"cannot reach {self.url}: check baseUrl", retryable=True
            ) from exc

    def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[RerankHit]:
        if not documents:
            return []
        body = {"model": self.model, "query": query, "documents": list(documents), "top_n": top_n}
        payload = call_with_retries(lambda: self._post(body))
        try:
            results = json.loads(payload)["results"]
            hits = [
                RerankHit(index=int(r["index"]), score=float(r["relevance_score"])) for r in results
            ]
        except (KeyError, TypeError, ValueError) as exc:
            raise ProviderError(self.provider, f"unexpected rerank response: {exc!r}") from exc
        self._check(hits, len(documents))
        # Some servers return every document in input order: sort, then keep top_n.
        return sorted(hits, key=lambda h: h.score, reverse=True)[:top_n]

    def _check(self, hits: list[RerankHit], count: int) -> None:
        if len(hits) > count:
            raise ProviderError(
                self.provider, f"the endpoint answered {len(hits)} results for {count} documents"
            )
        seen: set[int] = set()
        for hit in hits:
            if not 0 <= hit.index < count or hit.index in seen:
                raise ProviderError(
                    self.provider,
                    f"the endpoint answered index {hit.index} for {count} documents "
                    "(out of range or twice)",
                )
            if not math.isfinite(hit.score):
                raise ProviderError(
                    self.provider, "the endpoint answered a score that is no number"
                )
            seen.add(hit.index)
