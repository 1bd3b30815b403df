"""What the Lambda functions share: the app and the services, built once per execution
environment (on the first invocation, then reused while the environment stays warm).

The handlers in functions/ only wire Powertools and call these.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI
    from starlette.types import ASGIApp

    from bunko.adapters.aws.sqs_retry import SqsRetries
    from bunko.drops.s3_events import IngestEventHandler


@cache
def api_app() -> FastAPI:
    """The same FastAPI app as `bunko serve` (with /uploads/presign, as S3 can sign)."""
    from bunko.bootstrap.root import build_services
    from bunko.http.app import create_app

    return create_app(build_services())


@cache
def served_app() -> ASGIApp:
    """`api_app` as API Gateway reaches it: base path restored, payload limit, CORS."""
    from bunko.adapters.aws.settings import AwsSettings
    from bunko.bootstrap.api_gateway import behind_api_gateway

    return behind_api_gateway(api_app(), cors_origins=AwsSettings().cors_origin_list)


@cache
def ingest_handler() -> IngestEventHandler:
    """Services whose queue collects jobs, so a drop is indexed in the same invocation.
    Built without accounts: ingest needs no JWT secret or model-keys key (nor may read them)."""
    from bunko.adapters.aws.clients import boto_client
    from bunko.adapters.aws.settings import AwsSettings
    from bunko.adapters.collecting_queue import CollectingQueue
    from bunko.bootstrap.aws import build_aws_adapters
    from bunko.bootstrap.root import wire_services
    from bunko.config import Settings
    from bunko.drops.s3_events import IngestEventHandler

    aws = AwsSettings()
    collector = CollectingQueue()
    settings = Settings()
    adapters = build_aws_adapters(settings, sign_in=False)
    services = wire_services(settings, adapters, queue=collector)
    return IngestEventHandler(
        services=services,
        collector=collector,
        s3=boto_client("s3", aws),
        drop_prefix=aws.drop_prefix,
        upload_options=adapters.accounts.stores.settings if adapters.accounts else None,
    )


@cache
def ingest_retries() -> SqsRetries | None:
    """The ingest queue, to bring failed records back sooner (adapters/aws/sqs_retry.py)."""
    from bunko.adapters.aws.clients import boto_client
    from bunko.adapters.aws.settings import AwsSettings
    from bunko.adapters.aws.sqs_retry import SqsRetries

    aws = AwsSettings()
    if not aws.ingest_queue_url:
        return None
    return SqsRetries(boto_client("sqs", aws), queue_url=aws.ingest_queue_url)
