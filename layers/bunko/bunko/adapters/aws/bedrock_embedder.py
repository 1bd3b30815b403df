"""BedrockTitanEmbedder: Amazon Titan Text Embeddings V2 through bedrock-runtime InvokeModel.

Titan V2 embeds one text per call, so a batch is a bounded pool of concurrent calls (the
concurrency is the batching knob). Throttling and transient errors are retried with
exponential backoff and jitter; other errors (validation, access denied) fail at once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
from botocore.exceptions import ClientError
from tenacity import (
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
    wait_random_exponential,
)

from bunko.adapters.aws.settings import TITAN_EMBED_V2
from bunko.errors import ServiceUnavailableError

if TYPE_CHECKING:
    from mypy_boto3_bedrock_runtime import BedrockRuntimeClient

TITAN_V2_DIMENSIONS = (256, 512, 1024)
# Titan V2 accepts up to 50,000 characters (8,192 tokens); chunks are far shorter, so this
# only guards against a pathological input failing the whole batch.
MAX_INPUT_CHARS = 50_000
RETRYABLE_CODES = frozenset(
    {
        "ThrottlingException",
        "TooManyRequestsException",
        "ServiceUnavailableException",
        "ModelNotReadyException",
        "InternalServerException",
        "ModelTimeoutException",
    }
)


def is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, ClientError) and (
        exc.response.get("Error", {}).get("Code") in RETRYABLE_CODES
    )


class BedrockTitanEmbedder:
    def __init__(
        self,
        client: BedrockRuntimeClient,
        *,
        model_id: str = TITAN_EMBED_V2,
        dimension: int = 1024,
        concurrency: int = 8,
        max_attempts: int = 8,
        max_backoff: float = 20.0,
        max_seconds: float = 240.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if dimension not in TITAN_V2_DIMENSIONS:
            raise ValueError(f"Titan V2 dimensions are {TITAN_V2_DIMENSIONS}, not {dimension}")
        self.client = client
        self.model_id = model_id
        self.dimension = dimension
        self.name = f"bedrock-{model_id}-{dimension}"
        self.concurrency = concurrency
        self._retrying = Retrying(
            retry=retry_if_exception(is_retryable),
            wait=wait_random_exponential(multiplier=0.5, max=max_backoff),
            # No retry that would end past the budget (the api function's is under 29 s).
            stop=stop_after_attempt(max_attempts) | stop_before_delay(max_seconds),
            sleep=sleep,
            reraise=True,
        )

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if len(texts) == 1 or self.concurrency == 1:
            rows = [self._embed_one(t) for t in texts]
        else:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(texts))) as pool:
                rows = list(pool.map(self._embed_one, texts))
        return np.vstack(rows)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed_one(text)

    def _embed_one(self, text: str) -> np.ndarray:
        # Titan rejects an empty input; a single space embeds to a neutral vector.
        body = json.dumps(
            {
                "inputText": text[:MAX_INPUT_CHARS] or " ",
                "dimensions": self.dimension,
                "normalize": True,
                "embeddingTypes": ["float"],
            }
        )
        try:
            response = self._retrying(
                self.client.invoke_model,
                modelId=self.model_id,
                body=body,
                contentType="application/json",
                accept="application/json",
            )
        except ClientError as exc:
            if is_retryable(exc):  # still throttled when the budget ran out: the app's 503
                raise ServiceUnavailableError("Bedrock is busy; try again shortly") from exc
            raise
        payload = json.loads(response["body"].read())
        vector = np.asarray(payload["embedding"], dtype=np.float32)
        if vector.shape != (self.dimension,):
            raise ValueError(
                f"Bedrock returned {vector.shape[0]} dimensions, expected {self.dimension}"
            )
        # Titan normalises already; normalising again keeps the port's promise exact.
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector
