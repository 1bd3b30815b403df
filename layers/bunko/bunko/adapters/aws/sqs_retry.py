"""Failed ingest messages come back in minutes, not when the queue's visibility timeout ends.

The queue's visibility timeout is six times the ingest function's (an hour), as Lambda's
SQS guide advises so a message still in flight is never delivered twice. A record reported
as failed would wait all of it: a brief Bedrock throttle or OpenSearch hiccup would delay a
file by an hour per try. Each failed record is made visible again after RETRY_DELAYS instead
(BUNKO_INGEST_RETRY_DELAYS; the queue's third receive dead-letters it). A record whose
invocation timed out cannot be reached here and keeps the full timeout.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from bunko.adapters.aws.settings import RETRY_DELAYS

log = logging.getLogger(__name__)


def retry_delay(receive_count: int, delays: Sequence[int] = RETRY_DELAYS) -> int:
    """The wait after a record's `receive_count`-th delivery failed."""
    return delays[max(0, min(receive_count, len(delays)) - 1)]


class SqsRetries:
    def __init__(
        self, client: Any, *, queue_url: str, delays: Sequence[int] = RETRY_DELAYS
    ) -> None:
        """`delays`: the wait after the first failed delivery, the second, ... (the last one
        for any later)."""
        self.client = client
        self.queue_url = queue_url
        self.delays = tuple(delays)

    def retry_sooner(self, records: Iterable[Mapping[str, Any]], failed: set[str]) -> None:
        """Shorten the visibility of each failed record; best effort (the record is retried
        either way, at worst after the queue's own timeout)."""
        for record in records:
            if record.get("messageId") not in failed:
                continue
            count = int(record.get("attributes", {}).get("ApproximateReceiveCount", "1"))
            try:
                self.client.change_message_visibility(
                    QueueUrl=self.queue_url,
                    ReceiptHandle=record["receiptHandle"],
                    VisibilityTimeout=retry_delay(count, self.delays),
                )
            except (BotoCoreError, ClientError) as error:
                log.warning("could not schedule the retry of %s: %s", record["messageId"], error)
