"""The graphs the Lambda functions run on, built from the AWS settings: the adapters are
built here, as everywhere (bunko/lambda_entry.py caches these and adds the doors)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from bunko.adapters.collecting_queue import CollectingQueue
    from bunko.bootstrap.root import Services
    from bunko.domain.drop_routes import DropRoutes


def cors_origins() -> list[str]:
    """The origins the API answers cross-origin requests from (the web app's)."""
    from bunko.adapters.aws.settings import AwsSettings

    return AwsSettings().cors_origin_list


@dataclass(frozen=True)
class IngestGraph:
    """What the ingest function's S3 event handler (drops/s3_events.py) works with."""

    services: Services
    collector: CollectingQueue
    s3: Any
    drop_prefix: str
    drop_routes: Callable[[], DropRoutes]  # what an admin chose (PUT /drop-folder)


def ingest_graph() -> IngestGraph:
    """Services whose queue collects jobs, so a drop is indexed in the same invocation.
    Built without accounts: ingest needs no JWT secret or model-keys key (nor may read them)."""
    from bunko.adapters.aws.clients import boto_client
    from bunko.adapters.aws.dynamodb.settings import DynamoDBSettingsStore
    from bunko.adapters.aws.dynamodb.table import Table
    from bunko.adapters.aws.settings import AwsSettings
    from bunko.adapters.collecting_queue import CollectingQueue
    from bunko.bootstrap.aws import build_aws_adapters
    from bunko.bootstrap.root import wire_services
    from bunko.config import Settings
    from bunko.services.settings import read_drop_routes

    aws = AwsSettings()
    collector = CollectingQueue()
    settings = Settings()
    adapters = build_aws_adapters(settings, sign_in=False)
    # presigned uploads arrive here: their uploader's storage quota is checked again
    services = wire_services(settings, adapters, queue=collector, storage_quota=True)
    return IngestGraph(
        services=services,
        collector=collector,
        s3=boto_client("s3", aws),
        drop_prefix=aws.drop_prefix,
        # the settings live in the one table, which ingest reads already
        drop_routes=partial(
            read_drop_routes,
            DynamoDBSettingsStore(Table(boto_client("dynamodb", aws), aws.table_name)),
        ),
    )


class Retries(Protocol):
    def retry_sooner(self, records: Iterable[Mapping[str, Any]], failed: set[str]) -> None: ...


def ingest_retries() -> Retries | None:
    """The ingest queue, to bring failed records back sooner (adapters/aws/sqs_retry.py)."""
    from bunko.adapters.aws.clients import boto_client
    from bunko.adapters.aws.settings import AwsSettings
    from bunko.adapters.aws.sqs_retry import SqsRetries

    aws = AwsSettings()
    if not aws.ingest_queue_url:
        return None
    return SqsRetries(
        boto_client("sqs", aws), queue_url=aws.ingest_queue_url, delays=aws.ingest_retry_delays
    )


def sources_graph() -> Services:
    """The sync function's services: the sources wing over the table, blobs in S3 and the
    ingest queue (its writes are indexed by the ingest function). Built without signing in
    (no JWT secret); model keys and credentials are decrypted with the KMS key."""
    from bunko.bootstrap.aws import build_aws_adapters
    from bunko.bootstrap.root import wire_services
    from bunko.config import Settings

    settings = Settings()
    return wire_services(settings, build_aws_adapters(settings, sign_in=False))


def moves_graph() -> Services:
    """The services a library's move runs on in the ingest function (a message on its
    queue): the API's graph, whose ingest queue is SQS (a move's documents are indexed by
    other invocations) and whose moves read the table and bucket. The account services need
    a token key; the ingest function may not read the deployment's (it signs nobody in), so
    it gets one of its own that no other function knows: a token it could make opens
    nothing anywhere."""
    import secrets
    from dataclasses import replace

    from bunko.bootstrap.aws import build_aws_adapters
    from bunko.bootstrap.root import wire_services
    from bunko.config import Settings

    settings = Settings()
    adapters = build_aws_adapters(settings, sign_in=False)
    if adapters.accounts is not None:
        adapters.accounts = replace(adapters.accounts, jwt_secret=secrets.token_urlsafe(48))
    return wire_services(settings, adapters)
