"""The ingest queue consumer: SQS batches of S3 drop notifications, Bunko ingest jobs, the
steps of a workspace's change of embedding model and libraries' moves (exports, imports).

Each record is processed on its own; failed records are reported back (partial batch
response) so only they are retried, in minutes rather than after the queue's visibility
timeout, and after the queue's maxReceiveCount, dead-lettered.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from bunko.adapters.aws.sqs_queue import parse_move
from bunko.lambda_entry import ingest_handler, ingest_retries, moves

logger = Logger()
metrics = Metrics()
# Report every failed record, even when all failed, instead of failing the invocation.
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def record_handler(record: SQSRecord, lambda_context: Any) -> None:
    logger.set_correlation_id(record.message_id)
    # A step of a workspace's change of embedding model stops with time to spare.
    time_left = lambda: lambda_context.get_remaining_time_in_millis() / 1000  # noqa: E731
    job = parse_move(json.loads(record.body)) if '"bunko.move"' in record.body else None
    if job is not None:  # its own graph: its ingest queue is SQS, not the collector
        moves().run(job, time_left=time_left)
        logger.info("moved", extra={"job": job})
        return
    documents = ingest_handler().handle(record.body, time_left=time_left)
    for doc in documents:
        logger.info("ingested", extra={"path": doc.path, "status": str(doc.status)})
    metrics.add_metric(name="DocumentsProcessed", unit=MetricUnit.Count, value=len(documents))


@logger.inject_lambda_context
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    response = process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
    failed = {failure["itemIdentifier"] for failure in response["batchItemFailures"]}
    retries = ingest_retries()
    if failed and retries is not None:
        retries.retry_sooner(event["Records"], failed)
    return response
