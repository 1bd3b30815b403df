"""What `bunko export` and `bunko import` work with, taken from either shape's services."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bunko.adapters.local.worker import ThreadIngestQueue
from bunko.ports.moves import MovePorts
from bunko.services.moving import LibraryMoves, MovingParts

if TYPE_CHECKING:
    from bunko.bootstrap.root import Services


def moving_parts(services: Services) -> MovingParts:
    accounts = services.accounts
    return MovingParts(
        metadata=services.metadata,
        blobs=services.blobs,
        library=services.library,
        ingest=services.ingest,
        policy=services.uploads,
        items=services.items,
        libraries=accounts.libraries if accounts else None,
        users=accounts.libraries.users if accounts else None,
        workspace_settings=accounts.workspace_settings if accounts else None,
        sources=services.sources,
        conversations=services.conversations,
        audit=services.audit,
        answers=services.answers,
        # the worker thread runs the pipeline here; an SQS queue hands it to the ingest function
        pipeline=services.pipeline if isinstance(services.queue, ThreadIngestQueue) else None,
    )


def build_moves(services: Services, ports: MovePorts | None) -> LibraryMoves | None:
    """The REST and MCP doors' moves, over the shape's ports (None: no door moves one)."""
    if ports is None:
        return None
    return LibraryMoves(
        lambda: moving_parts(services),
        jobs=ports.jobs,
        archives=ports.archives,
        runner=ports.runner,
    )
