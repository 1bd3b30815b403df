"""The AWS shape's embedder: Bedrock Titan V2, or any OpenAI-compatible embeddings endpoint
(OpenAI, vLLM, TEI, Ollama behind a URL), chosen by BUNKO_EMBEDDING_PROVIDER.

For an OpenAI-compatible endpoint the API key comes from Secrets Manager (the setting holds
the secret's ARN or name, never the key), and the base URL must point outside the network
unless the operator allows a private endpoint (services/embedding/endpoint_guard.py).
"""

from __future__ import annotations

from bunko.bootstrap.aws_secrets import DeploymentError, read_secret
from bunko.config import Settings
from bunko.errors import ValidationError
from bunko.ports import Embedder


def build_aws_embedder(aws, settings: Settings) -> Embedder | None:
    from bunko.adapters.aws.clients import boto_client

    if aws.embedding_provider == "bedrock":
        from bunko.adapters.aws.bedrock_embedder import BedrockTitanEmbedder

        return BedrockTitanEmbedder(
            boto_client("bedrock-runtime", aws),
            model_id=aws.embedding_model_id,
            dimension=aws.embedding_dimension,
            concurrency=aws.embed_concurrency,
            max_seconds=aws.embed_max_seconds,
        )
    if aws.embedding_provider == "openai":
        return openai_embedder(aws, settings)
    return None


def openai_embedder(aws, settings: Settings) -> Embedder:
    from bunko.adapters.aws.clients import boto_client
    from bunko.adapters.aws.settings import TITAN_EMBED_V2
    from bunko.adapters.bounded_http import proxy_for
    from bunko.adapters.openai_embedder import OpenAIEmbedder
    from bunko.services.embedding import check_public_endpoint

    if aws.embedding_model_id == TITAN_EMBED_V2:
        raise DeploymentError(
            "BUNKO_EMBEDDING_MODEL_ID: name the endpoint's embedding model "
            "(provider openai, the default is a Bedrock model)"
        )
    try:
        base_url = check_public_endpoint(
            aws.openai_base_url,
            setting="BUNKO_OPENAI_BASE_URL",
            allow_switch="BUNKO_OPENAI_ALLOW_PRIVATE_NETWORK",
            allow_private=aws.openai_allow_private_network,
            # behind a proxy the proxy resolves the name (it need not resolve here)
            proxied=proxy_for(aws.openai_base_url or "") is not None,
        )
    except ValidationError as exc:
        raise DeploymentError(str(exc)) from exc
    api_key = None
    if aws.openai_api_key_secret_arn:
        api_key = read_secret(
            boto_client("secretsmanager", aws),
            aws.openai_api_key_secret_arn,
            what="the embeddings endpoint's API key",
            setting="BUNKO_OPENAI_API_KEY_SECRET_ARN",
        )
    return OpenAIEmbedder(
        base_url=base_url,
        model=aws.embedding_model_id,
        api_key=api_key,
        # The index was created with this size: a server that answers another is refused.
        dimensions=aws.embedding_dimension,
        send_dimensions=aws.openai_send_dimensions,
        batch_size=settings.embed_batch_size,
        input_types=aws.openai_input_types,
        timeout=aws.bedrock_read_timeout,
        max_seconds=aws.embed_max_seconds,
    )
