"""BedrockRerank: amazon.rerank-v1 and cohere.rerank-v3-5 through bedrock-agent-runtime."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from bunko.adapters.aws.bedrock_chat import bedrock_error
from bunko.adapters.retrying import call_with_retries
from bunko.ports.chat import ProviderError, RerankHit


def model_arn(partition: str, region: str, model: str) -> str:
    """The model's ARN in the client's partition (aws, aws-us-gov, aws-cn)."""
    if model.startswith("arn:"):
        return model
    return f"arn:{partition}:bedrock:{region}::foundation-model/{model}"


class BedrockRerank:
    def __init__(self, client: Any, *, model: str) -> None:
        self.client = client
        self.model = model
        self.name = model

    def _call(self, query: str, documents: Sequence[str], top_n: int) -> dict:
        try:
            return self.client.rerank(
                queries=[{"type": "TEXT", "textQuery": {"text": query}}],
                sources=[
                    {
                        "type": "INLINE",
                        "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": text}},
                    }
                    for text in documents
                ],
                rerankingConfiguration={
                    "type": "BEDROCK_RERANKING_MODEL",
                    "bedrockRerankingConfiguration": {
                        "numberOfResults": top_n,
                        "modelConfiguration": {
                            "modelArn": model_arn(
                                self.client.meta.partition, self.client.meta.region_name, self.model
                            )
                        },
                    },
                },
            )
        except (ClientError, BotoCoreError) as exc:
            raise bedrock_error(self.model, exc) from exc

    def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[RerankHit]:
        if not documents:
            return []
        response = call_with_retries(lambda: self._call(query, documents, top_n))
        try:
            return [
                RerankHit(index=int(r["index"]), score=float(r["relevanceScore"]))
                for r in response["results"]
            ]
        except (KeyError, TypeError, ValueError) as exc:
            raise ProviderError("bedrock", f"unexpected rerank response: {exc}") from exc
