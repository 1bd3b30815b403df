"""HttpRerank: a Cohere/Jina-style `POST {baseUrl}/rerank` endpoint (TEI, vLLM, Jina,
llama.cpp with a reranking model, Cohere)."""

from __future__ import annotations

from collections.abc import Sequence

import httpx

from bunko.adapters.retrying import call_with_retries
from bunko.ports.chat import ProviderError, RerankHit

TIMEOUT_SECONDS = 30.0


class HttpRerank:
    def __init__(self, *, provider: str, model: str, base_url: str, api_key: str | None) -> None:
        self.name = model
        self.provider = provider
        self.model = model
        self.url = base_url.rstrip("/") + "/rerank"
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def _post(self, body: dict) -> dict:
        try:
            response = httpx.post(
                self.url, json=body, headers=self.headers, timeout=TIMEOUT_SECONDS
            )
        except httpx.TimeoutException as exc:
            raise ProviderError(
                self.provider, f"no answer from {self.url} in time", retryable=True
            ) from exc
        except httpx.HTTPError as exc:
            raise ProviderError(
                self.provider, f"cannot reach {self.url}: check baseUrl", retryable=True
            ) from exc
        status = response.status_code
        if status in (401, 403):
            raise ProviderError(
                self.provider, "the API key was refused: check the rerank config's apiKey"
            )
        if status == 404:
            raise ProviderError(self.provider, f"{self.url} not found: check baseUrl and modelId")
        if status == 429 or status >= 500:
            raise ProviderError(self.provider, f"{self.url} answered {status}", retryable=True)
        if status >= 400:
            raise ProviderError(self.provider, f"rerank refused ({status}): {response.text[:200]}")
        return response.json()

    def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[RerankHit]:
        if not documents:
            return []
        body = {"model": self.model, "query": query, "documents": list(documents), "top_n": top_n}
        payload = call_with_retries(lambda: self._post(body))
        try:
            hits = [
                RerankHit(index=int(r["index"]), score=float(r["relevance_score"]))
                for r in payload["results"]
            ]
        except (KeyError, TypeError, ValueError) as exc:
            raise ProviderError(self.provider, f"unexpected rerank response: {exc}") from exc
        # Some servers return every document in input order: sort, then keep top_n.
        return sorted(hits, key=lambda h: h.score, reverse=True)[:top_n]
