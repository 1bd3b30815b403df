"""AWS settings, read from the environment (prefix BUNKO_), set by the CDK stack on each function.

Every environment variable name the functions use is here, in one place; `infra/` imports
`ENV` so the stack and the code cannot drift apart.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bunko.deploy_schema import ENV_PREFIX

TITAN_EMBED_V2 = "amazon.titan-embed-text-v2:0"
TITAN_SIZES = (256, 512, 1024)
# Seconds before a failed ingest record's second and third delivery (adapters/aws/sqs_retry.py).
RETRY_DELAYS = (60, 300)


class AwsSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

    region: str | None = None  # falls back to AWS_REGION, which Lambda always sets
    table_name: str = "bunko"
    bucket: str = "bunko"
    # Key prefixes in the bucket. Drops under `drop_prefix` trigger ingest; the blob store
    # (originals, extracted text, spilled items) lives under `blob_prefix`, which never does.
    blob_prefix: str = "blobs/"
    drop_prefix: str = "drop/"
    opensearch_endpoint: str | None = None  # https://<id>.<region>.aoss.amazonaws.com
    opensearch_index: str = "bunko-chunks"
    opensearch_sigv4: bool = True  # False only for a local stand-in (tests)
    opensearch_service: Literal["aoss", "es"] = "aoss"
    ingest_queue_url: str | None = None
    # Seconds before a failed ingest record is delivered again, after its first failed
    # delivery, its second, ... (adapters/aws/sqs_retry.py; SQS allows at most 12 hours).
    ingest_retry_delays: tuple[Annotated[int, Field(ge=0, le=43200)], ...] = Field(
        default=RETRY_DELAYS, min_length=1
    )
    # The core Settings.embedder names local models; on AWS the embedder is chosen here:
    # Bedrock, or any OpenAI-compatible embeddings server (we call its POST {base}/embeddings) (docs/aws.md).
    embedding_provider: Literal["bedrock", "openai", "none"] = "bedrock"
    embedding_model_id: str = TITAN_EMBED_V2
    # The index's knn_vector size: 256, 512 or 1024 for Titan V2; the endpoint's own size for
    # openai (the engine's limit is 16,000).
    embedding_dimension: int = Field(default=1024, ge=1, le=16000)
    # provider openai: the endpoint, and the Secrets Manager secret (ARN or name) whose
    # string is its API key (none: the endpoint needs no key). The key is never in the
    # environment. An endpoint inside the network is refused unless allowed explicitly.
    openai_base_url: str | None = None
    openai_api_key_secret_arn: str | None = None
    openai_input_types: bool = False  # send input_type query/passage (asymmetric models)
    openai_send_dimensions: bool = False  # send `dimensions` (models that shorten vectors)
    openai_allow_private_network: bool = False
    # Bedrock calls in flight per function instance (the stack sets it per profile), how
    # long one embedding may keep retrying and one call may wait (Bedrock or the endpoint):
    # the api function's budget stays under API Gateway's 29 s so a throttled search
    # answers the app's 503, not the gateway's 504.
    embed_concurrency: int = Field(default=8, ge=1, le=64)
    embed_max_seconds: float = Field(default=240.0, gt=0, le=900)
    bedrock_read_timeout: float = Field(default=60.0, gt=0, le=900)
    # For the auth and chat parts: the JWT signing key, the KMS key for model API keys, and
    # the Bedrock chat models this deployment may call (comma-separated ids).
    jwt_secret_arn: str | None = None
    model_keys_kms_key_id: str | None = None
    bedrock_chat_model_ids: str = ""
    presign_expires_seconds: int = Field(default=900, ge=60, le=43200)
    # The web app's client secret at the identity provider (docs/aws.md, "Sign-in with an
    # identity provider"), a secret's ARN or name; unset: a public client, or none at all
    oidc_client_secret_arn: str | None = None
    # Browser origins allowed to call the API (comma-separated; empty: no CORS headers).
    cors_origins: str = ""

    @model_validator(mode="after")
    def _titan_sizes(self) -> AwsSettings:
        if self.embedding_provider == "bedrock" and self.embedding_dimension not in TITAN_SIZES:
            raise ValueError("embedding_dimension: 256, 512 or 1024 for Bedrock Titan V2")
        return self

    @property
    def cors_origin_list(self) -> list[str]:
        return [o.strip() for o in self.cors_origins.split(",") if o.strip()]
