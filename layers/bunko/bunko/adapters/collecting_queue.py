"""CollectingQueue: an IngestQueue that holds jobs for a caller that processes them itself,
in the same invocation or in large batches (the S3 ingest function, `bunko eval`)."""

from __future__ import annotations

from bunko.ports import IngestJob


class CollectingQueue:
    def __init__(self) -> None:
        self.jobs: list[IngestJob] = []

    def enqueue(self, job: IngestJob) -> None:
        self.jobs.append(job)

    def take(self) -> list[IngestJob]:
        """Every job collected so far, emptying the queue."""
        jobs, self.jobs = self.jobs, []
        return jobs
