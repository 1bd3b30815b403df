"""The embedding model's part of the stack: its settings checked at synth, the functions'
environment for it, and, for an OpenAI-compatible endpoint, read access to the one secret
that holds its API key (the key itself never enters the template or the environment)."""

from __future__ import annotations

import ipaddress
import re
from typing import Protocol
from urllib.parse import urlsplit

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_iam as iam

from bunko.deploy_schema import env_name

TITAN_EMBED_V2 = "amazon.titan-embed-text-v2:0"
TITAN_SIZES = (256, 512, 1024)
MAX_DIMENSION = 16000  # OpenSearch's knn_vector limit
PROVIDERS = ("bedrock", "openai")
_SECRET_ARN = re.compile(r"^arn:aws[\w-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[\w/+=.@-]+$")
_SECRET_NAME = re.compile(r"^[\w/+=.@-]{1,512}$")


class EmbeddingChoice(Protocol):
    """The deployment's embedding parameters (BunkoConfig's, cdk.json `bunko:*`)."""

    embedding_provider: str
    embedding_model_id: str
    embedding_dimension: int
    openai_base_url: str
    openai_api_key_secret: str
    openai_allow_private_network: bool


def check_embedding(config: EmbeddingChoice) -> None:
    provider = config.embedding_provider
    if provider not in PROVIDERS:
        raise ValueError(f"bunko:embeddingProvider is one of {list(PROVIDERS)}, not {provider!r}")
    if provider == "bedrock":
        if config.embedding_dimension not in TITAN_SIZES:
            raise ValueError("bunko:embeddingDimension is 256, 512 or 1024 for Titan V2")
        return
    if not 1 <= config.embedding_dimension <= MAX_DIMENSION:
        raise ValueError(f"bunko:embeddingDimension is the endpoint's size, 1–{MAX_DIMENSION}")
    if config.embedding_model_id == TITAN_EMBED_V2:
        raise ValueError("bunko:embeddingModelId: name the endpoint's embedding model")
    parts = urlsplit(config.openai_base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("bunko:openaiBaseUrl: the endpoint's http(s) base URL (…/v1)")
    if _literally_private(parts.hostname) and not config.openai_allow_private_network:
        # Early, for what needs no DNS; the functions check every resolved address at start.
        raise ValueError(
            f"bunko:openaiBaseUrl: {parts.hostname} is inside the network; set "
            "bunko:openaiAllowPrivateNetwork=true to use it deliberately"
        )
    secret = config.openai_api_key_secret
    if secret and not (_SECRET_ARN.match(secret) or _SECRET_NAME.match(secret)):
        raise ValueError("bunko:openaiApiKeySecret: a Secrets Manager secret's ARN or name")


def _literally_private(host: str) -> bool:
    if host.lower() == "localhost" or host.lower().endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False  # a name: resolved and checked by the functions
    return not address.is_global


def index_slug(model_id: str) -> str:
    """An index-name-safe form of a model id (lower case; no '/', ':' or spaces)."""
    return re.sub(r"[^a-z0-9_-]+", "-", model_id.lower()).strip("-_")[:100] or "model"


def embedding_environment(stack: Stack, config: EmbeddingChoice) -> dict[str, str]:
    env = {
        env_name("embedding_provider"): config.embedding_provider,
        env_name("embedding_model_id"): config.embedding_model_id,
        env_name("embedding_dimension"): str(config.embedding_dimension),
    }
    if config.embedding_provider != "openai":
        return env
    flags = ("openai_input_types", "openai_send_dimensions", "openai_allow_private_network")
    env[env_name("openai_base_url")] = config.openai_base_url
    env.update({env_name(flag): str(getattr(config, flag)).lower() for flag in flags})
    if config.openai_api_key_secret:
        env[env_name("openai_api_key_secret_arn")] = config.openai_api_key_secret
    return env


def secret_resource(stack: Stack, secret: str) -> str:
    """The IAM resource of exactly one secret: its complete ARN, or, for a name, the ARN
    with Secrets Manager's six random characters left open."""
    if secret.startswith("arn:"):
        return secret
    return stack.format_arn(
        service="secretsmanager",
        resource="secret",
        resource_name=f"{secret}-??????",
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )


def grant_embedding_secret(roles: list[iam.IRole], stack: Stack, secret: str) -> None:
    if not secret:
        return
    statement = iam.PolicyStatement(
        actions=["secretsmanager:GetSecretValue"], resources=[secret_resource(stack, secret)]
    )
    for role in roles:
        role.add_to_principal_policy(statement)
