"""The buffered REST routes: the FastAPI app behind Mangum (API Gateway REST proxy events)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging import correlation_paths
from mangum import Mangum

from bunko.lambda_entry import served_app

logger = Logger()
metrics = Metrics()


def _adapter() -> Mangum:
    # The app has no startup work on AWS (no watcher, no worker), so no lifespan per call.
    # served_app: the stage back in the URLs the app builds, the payload limit, CORS.
    return Mangum(served_app(), lifespan="off")


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return _adapter()(event, context)
