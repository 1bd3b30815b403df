"""What the Lambda functions share: the app and the services, built once per execution
environment (on the first invocation, then reused while the environment stays warm).

The handlers in functions/ only wire Powertools and call these.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from bunko.adapters.aws.ingest_events import IngestEventHandler


@cache
def api_app() -> FastAPI:
    """The same FastAPI app as `bunko serve`, plus the AWS-only presigned upload route."""
    from bunko.adapters.aws.presign_route import router as presign_router
    from bunko.bootstrap import build_services
    from bunko.http.app import create_app

    app = create_app(build_services())
    app.include_router(presign_router)
    return app


@cache
def ingest_handler() -> IngestEventHandler:
    """Services whose queue collects jobs, so a drop is indexed in the same invocation."""
    from bunko.adapters.aws.clients import boto_client
    from bunko.adapters.aws.ingest_events import IngestEventHandler
    from bunko.adapters.aws.settings import AwsSettings
    from bunko.adapters.aws.sqs_queue import CollectingQueue
    from bunko.bootstrap import build_services

    aws = AwsSettings()
    collector = CollectingQueue()
    services = build_services(queue=collector)
    return IngestEventHandler(
        services=services,
        collector=collector,
        s3=boto_client("s3", aws),
        drop_prefix=aws.drop_prefix,
    )
