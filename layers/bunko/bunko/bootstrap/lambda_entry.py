"""What the Lambda functions share: the app and the services, built once per execution
environment (on the first invocation, then reused while the environment stays warm).

The handlers in functions/ only wire Powertools and call these.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from bunko.drops.s3_events import IngestEventHandler


@cache
def api_app() -> FastAPI:
    """The same FastAPI app as `bunko serve` (with /uploads/presign, as S3 can sign)."""
    from bunko.bootstrap.root import build_services
    from bunko.http.app import create_app

    return create_app(build_services())


@cache
def ingest_handler() -> IngestEventHandler:
    """Services whose queue collects jobs, so a drop is indexed in the same invocation."""
    from bunko.adapters.aws.clients import boto_client
    from bunko.adapters.aws.settings import AwsSettings
    from bunko.adapters.collecting_queue import CollectingQueue
    from bunko.bootstrap.root import build_services
    from bunko.drops.s3_events import IngestEventHandler

    aws = AwsSettings()
    collector = CollectingQueue()
    services = build_services(queue=collector)
    return IngestEventHandler(
        services=services,
        collector=collector,
        s3=boto_client("s3", aws),
        drop_prefix=aws.drop_prefix,
    )
