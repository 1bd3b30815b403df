"""What the Lambda functions share: the app and the services, built once per execution
environment (on the first invocation, then reused while the environment stays warm).

The handlers in functions/ only wire Powertools and call these. This sits above the doors
(the app holds REST and MCP; ingest is the S3 drops door) and the composition root, whose
graphs (bunko.bootstrap.functions) it caches.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI
    from starlette.types import ASGIApp

    from bunko.bootstrap.functions import Retries
    from bunko.drops.s3_events import IngestEventHandler
    from bunko.services.moving import LibraryMoves
    from bunko.services.sources import Sources


@cache
def api_app() -> FastAPI:
    """The same FastAPI app as `bunko serve` (with /uploads/presign, as S3 can sign)."""
    from bunko.bootstrap.root import build_services
    from bunko.server_app import create_app

    return create_app(build_services())


@cache
def served_app() -> ASGIApp:
    """`api_app` as API Gateway reaches it: base path restored, payload limit, CORS."""
    from bunko.asgi.api_gateway import behind_api_gateway
    from bunko.bootstrap.functions import cors_origins

    return behind_api_gateway(api_app(), cors_origins=cors_origins())


@cache
def ingest_handler() -> IngestEventHandler:
    """Services whose queue collects jobs, so a drop is indexed in the same invocation.
    Built without accounts: ingest needs no JWT secret or model-keys key (nor may read them)."""
    from bunko.bootstrap.functions import ingest_graph
    from bunko.drops.s3_events import IngestEventHandler

    graph = ingest_graph()
    return IngestEventHandler(
        services=graph.services,
        collector=graph.collector,
        s3=graph.s3,
        drop_prefix=graph.drop_prefix,
        drop_routes=graph.drop_routes,
    )


@cache
def ingest_retries() -> Retries | None:
    """The ingest queue, to bring failed records back sooner (adapters/aws/sqs_retry.py)."""
    from bunko.bootstrap.functions import ingest_retries as build

    return build()


@cache
def sources() -> Sources:
    """The sources wing of the sync function (EventBridge Scheduler invokes it)."""
    from bunko.bootstrap.functions import sources_graph

    wing = sources_graph().sources
    if wing is None:
        raise RuntimeError("sources need the account stores: set BUNKO_MODEL_KEYS_KMS_KEY_ID")
    return wing


@cache
def moves() -> LibraryMoves:
    """The moves the ingest function runs (a message the API queued); built on the first."""
    from bunko.bootstrap.functions import moves_graph

    wing = moves_graph().moves
    if wing is None:
        raise RuntimeError("moves need the account stores: set BUNKO_MODEL_KEYS_KMS_KEY_ID")
    return wing
