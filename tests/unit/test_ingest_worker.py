"""ThreadIngestQueue hands a process call the jobs queued while it runs (`more`), up to
STREAM_JOBS a call, and accounts for every job it took; JobRouting keeps a stream to the jobs
of its model."""

from __future__ import annotations

import queue

from bunko.adapters.local.worker import ThreadIngestQueue, _Call
from bunko.ports import EmbeddingGeneration, IngestJob
from bunko.services.ingest.job_routing import JobRouting


def job(n: int) -> IngestJob:
    return IngestJob(workspace_id="ws", document_id=f"d{n}", revision=1)


def test_jobs_queued_during_a_call_join_it_up_to_the_stream_limit():
    calls: list[list[str]] = []
    worker: ThreadIngestQueue

    def process(jobs, more):
        got = [j.document_id for j in jobs]
        if not calls:  # files arrive while the first call runs
            for n in range(1, 11):
                worker.enqueue(job(n))
        while found := more():
            got += [j.document_id for j in found]
        calls.append(got)

    worker = ThreadIngestQueue(process, stream_jobs=5)
    worker.enqueue(job(0))
    assert worker.join(timeout=30)
    assert calls[0] == ["d0", "d1", "d2", "d3", "d4"]  # the first call took five in all
    assert [d for call in calls for d in call] == [f"d{n}" for n in range(11)]
    assert worker.pending == 0
    worker.stop()


def test_a_stop_queued_during_a_call_ends_the_taking():
    jobs: queue.Queue[IngestJob | None] = queue.Queue()
    for item in (job(1), None, job(2)):
        jobs.put(item)
    call = _Call(jobs, job(0))
    assert call.more() == [job(1)] and call.stop
    assert call.more() == []  # nothing after the stop's marker is taken
    assert call.taken == [job(0), job(1)] and jobs.get_nowait() == job(2)


def test_a_stream_takes_its_own_models_jobs_and_leaves_the_others_for_later():
    generations = {
        "a": EmbeddingGeneration("default", None, None),
        "b": EmbeddingGeneration("e5", None, None),
    }
    reads: list[str] = []

    class Generations:
        def chosen(self, workspace_id: str) -> EmbeddingGeneration:
            reads.append(workspace_id)
            return generations[workspace_id]

    queued = [[IngestJob("a", "a1", 1), IngestJob("b", "b1", 1), IngestJob("a", "a2", 1)], []]
    routing = JobRouting(Generations())
    later: list[IngestJob] = []
    take = routing.taking("default", lambda: queued.pop(0), later)
    assert [j.document_id for j in take()] == ["a1", "a2"]
    assert [j.document_id for j in later] == ["b1"]
    assert take() == [] and reads == ["a", "b"]  # each workspace's choice read once a call
