"""The sources' sync function: EventBridge Scheduler invokes it every few minutes (infra/
constructs/sources_sync.py) with the schedule's input (events/sources_schedule.json). It
syncs every source that is due (the state, settings and credentials in the DynamoDB table),
one after another; one's failure is recorded on it and never stops the next. A sync stops
by the function's timeout minus a margin and the next invocation goes on from there.
"""

from __future__ import annotations

import time
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from bunko.lambda_entry import sources

logger = Logger()
metrics = Metrics()
# Left of the invocation for writing the last sync's record and returning.
MARGIN_SECONDS = 30.0


@logger.inject_lambda_context
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    logger.info(
        "sync due sources",
        extra={"scheduled_time": event.get("scheduledTime"), "execution": event.get("executionId")},
    )
    left = context.get_remaining_time_in_millis() / 1000 - MARGIN_SECONDS
    done = sources().sync_due(deadline=time.monotonic() + left)
    synced = [d.record.id for d in done if d.failed is None]
    failed = {d.record.id: d.failed for d in done if d.failed is not None}
    for source_id, why in failed.items():
        logger.warning("source sync failed", extra={"source": source_id, "why": why})
    metrics.add_metric(name="SourcesSynced", unit=MetricUnit.Count, value=len(synced))
    metrics.add_metric(name="SourcesFailed", unit=MetricUnit.Count, value=len(failed))
    return {"synced": synced, "failed": failed}
