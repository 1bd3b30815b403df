"""Files that arrive while the worker indexes join the batch in progress (one embedding stream,
so the embedder does not wait for each new batch's first files), over real SQLite, the real
local index and the real worker; and a workspace on another model in the same call is
embedded by its own model."""

from __future__ import annotations

import threading

from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.domain import DocumentStatus
from bunko.services.search.search import SearchOptions
from tests.conftest import make_services


def test_files_arriving_during_a_batch_join_its_stream(tmp_path):
    services = make_services(tmp_path / "data", embedder="none")
    pipeline = services.pipeline
    streams: list[int] = []  # jobs a stream started with
    gate = threading.Event()
    real_process, real_prepare = pipeline._process, pipeline._prepare_job

    def counted(route, jobs, more=None):
        streams.append(len(jobs))
        return real_process(route, jobs, more)

    def held(job, doc, route, finished):
        gate.wait(30)  # the first file is parsed while the others arrive
        return real_prepare(job, doc, route, finished)

    pipeline._process, pipeline._prepare_job = counted, held
    try:
        services.ingest.submit_text(WS, path="f0.txt", content="lighthouse number 0")
        for n in range(1, 60):  # the upload quota: 60 a minute
            services.ingest.submit_text(WS, path=f"f{n}.txt", content=f"lighthouse number {n}")
        gate.set()
        assert services.queue.join(timeout=60)
        assert streams == [1]  # one stream took them all
        docs = list(services.metadata.iter_documents(WS))
        assert len(docs) == 60 and {d.status for d in docs} == {DocumentStatus.COMPLETED}
        found = services.search.search(WS, "lighthouse", SearchOptions(min_score=0, limit=100))
        assert len(found.items) == 60
    finally:
        services.close()
