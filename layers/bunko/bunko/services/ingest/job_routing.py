"""JobRouting: ingest jobs grouped by the model that serves their workspace, for the pipeline
(each group is embedded by its model, in a stream of its own)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bunko.ports import EmbeddingGeneration, EmbeddingGenerations, IngestJob

MoreJobs = Callable[[], list[IngestJob]]  # jobs queued meanwhile (none: the queue is empty)


class JobRouting:
    """One `process` call's routing: each workspace's generation is read once (one settings read a
    workspace a call, not one a job; the worker bounds how many jobs a call takes)."""

    def __init__(self, generations: EmbeddingGenerations) -> None:
        self.generations = generations
        self.chosen: dict[str, EmbeddingGeneration] = {}

    def groups(
        self, jobs: Sequence[IngestJob]
    ) -> dict[str, tuple[EmbeddingGeneration, list[IngestJob]]]:
        """Model → (its generation, its jobs), in the jobs' order."""
        groups: dict[str, tuple[EmbeddingGeneration, list[IngestJob]]] = {}
        for job in jobs:
            ws = job.workspace_id
            if ws not in self.chosen:
                self.chosen[ws] = self.generations.chosen(ws)
            generation = self.chosen[ws]
            groups.setdefault(generation.model, (generation, []))[1].append(job)
        return groups

    def taking(self, model: str, more: MoreJobs, later: list[IngestJob]) -> MoreJobs:
        """`more`, keeping the jobs of the workspaces `model` serves; the others go to
        `later` (a stream embeds with one model)."""

        def take() -> list[IngestJob]:
            queued = self.groups(more())
            mine = queued.pop(model, (None, []))[1]
            later.extend(job for _, group in queued.values() for job in group)
            return mine

        return take
