"""What `bunko serve` starts beside its app (embedded_server.py, bootstrap/background.py)."""

from __future__ import annotations

import dataclasses
import threading

from bunko.embedded_server import start_background_work
from tests.conftest import make_services
from tests.fakes import FakeEmbedder


class LazyModel(FakeEmbedder):
    def __init__(self) -> None:
        super().__init__(["harbour"])
        self.loaded = threading.Event()

    def warm_up(self) -> None:
        self.loaded.set()


def test_the_embedding_model_loads_while_the_server_starts(tmp_path):
    model = LazyModel()
    services = dataclasses.replace(
        make_services(tmp_path / "data", embedder="none"), embedder=model
    )
    services.status.embedder = model  # the server's model, which the status service warms up
    stop = start_background_work(services, watch=False)
    try:
        assert model.loaded.wait(timeout=60)  # before any query asked for it
    finally:
        stop()
