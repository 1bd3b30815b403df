"""The AWS shape's generations of model configs: a workspace's own embedding model (an
OpenAI-compatible endpoint) fills an OpenSearch index of its own, `<deployment index>-m-<config
id>`, in the same collection; the index is created with the endpoint's vector size (learned
from a probe) when the generation is first opened, and its engine ids are kept in their own ledger.
"""

from __future__ import annotations

from collections.abc import Callable

from bunko.bootstrap.adapters import OpenerFactory
from bunko.bootstrap.workspace_embedders import open_config_embedder
from bunko.config import Settings
from bunko.ports import EmbeddingGeneration, GenerationOpener
from bunko.services.embedding import ModelConfigService


def model_index_name(deployment_index: str, config_id: str) -> str:
    """OpenSearch index names are lowercase; config ids are hex (new_id)."""
    return f"{deployment_index}-m-{config_id}".lower()


def aws_generation_opener(
    settings: Settings, client, table, deployment_index: str
) -> OpenerFactory:
    """`client`: the collection's OpenSearch client; `table`: the metadata table (ledgers)."""
    from bunko.adapters.aws.opensearch.index import OpenSearchServerlessIndex
    from bunko.adapters.aws.opensearch.ledger import IdLedger

    def factory(configs: ModelConfigService, closers: list[Callable[[], None]]) -> GenerationOpener:
        def open_generation(workspace_id: str, config_id: str) -> EmbeddingGeneration:
            embedder = open_config_embedder(settings, configs, workspace_id, config_id)
            index = OpenSearchServerlessIndex(
                client,
                index=model_index_name(deployment_index, config_id),
                dimension=embedder.dimension,  # a probe: an endpoint that fails refuses here
                ledger=IdLedger(table, namespace=config_id),
            )
            index.ensure_index()
            return EmbeddingGeneration(config_id, embedder, index)

        return open_generation

    return factory
