"""boto3 and OpenSearch clients for the adapters, built once per process (Lambda reuses them
across invocations)."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlparse

import boto3
from botocore.config import Config
from opensearchpy import AWSV4SignerAuth, OpenSearch, RequestsHttpConnection

from bunko.adapters.aws.settings import AwsSettings

# Standard retries cover throttling of S3, DynamoDB and SQS; Bedrock retries in its adapter
# (with its own backoff), so botocore's are turned down there to avoid multiplying them.
_CONFIG = Config(retries={"mode": "standard", "max_attempts": 5}, max_pool_connections=32)
_BEDROCK_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 1}, max_pool_connections=64, read_timeout=60
)

# Presigned URLs must be SigV4 (SigV2 is refused for new buckets and most regions) and name
# the regional endpoint, us-east-1's too (botocore signs its global host by default), so a
# browser's PUT is not redirected away from the signed host, and the host is the one the
# web app's CSP allows (infra/constructs/storage.py, upload_host).
_S3_CONFIG = _CONFIG.merge(
    Config(
        signature_version="s3v4",
        s3={"addressing_style": "virtual", "us_east_1_regional_endpoint": "regional"},
    )
)


OPENSEARCH_TIMEOUT = 20  # seconds a request to OpenSearch may take


def region_of(settings: AwsSettings) -> str:
    region = settings.region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if not region:
        raise RuntimeError("set BUNKO_REGION or AWS_REGION for the AWS backend")
    return region


def boto_client(service: str, settings: AwsSettings) -> Any:
    config = {"bedrock-runtime": _BEDROCK_CONFIG, "s3": _S3_CONFIG}.get(service, _CONFIG)
    if service == "bedrock-runtime":  # bounded by the function's budget (api: under 29 s)
        config = config.merge(Config(read_timeout=settings.bedrock_read_timeout))
    return boto3.client(service, region_name=region_of(settings), config=config)  # type: ignore[call-overload]


def opensearch_client(settings: AwsSettings) -> OpenSearch:
    """A client for the collection endpoint, signing with SigV4 for service 'aoss'."""
    if not settings.opensearch_endpoint:
        raise RuntimeError("set BUNKO_OPENSEARCH_ENDPOINT for the AWS backend")
    url = urlparse(settings.opensearch_endpoint)
    secure = url.scheme == "https"
    options: dict[str, Any] = {
        "hosts": [{"host": url.hostname, "port": url.port or (443 if secure else 80)}],
        "use_ssl": secure,
        "verify_certs": secure,
        "connection_class": RequestsHttpConnection,
        "pool_maxsize": 16,
        # under the api function's 25 s (API Gateway's 29 s): a slow engine ends in an error
        # the app answers, not in the function being killed mid-request
        "timeout": OPENSEARCH_TIMEOUT,
    }
    if settings.opensearch_sigv4:
        credentials = boto3.Session().get_credentials()
        options["http_auth"] = AWSV4SignerAuth(
            credentials, region_of(settings), settings.opensearch_service
        )
    return OpenSearch(**options)
