"""What `bunko export` and `bunko import` work with, taken from either shape's services."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from bunko.adapters.local.worker import ThreadIngestQueue
from bunko.domain import new_id
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


def build_moves(services: Services) -> LibraryMoves:
    """The REST and MCP doors' moves, spooled in a folder of the scratch folder (made on
    first use, removed when the services close): `Settings.scratch`, on AWS the function's
    temporary storage."""
    spool = services.settings.scratch / f"bunko-moves-{new_id()}"
    services.closers.append(lambda: shutil.rmtree(spool, ignore_errors=True))
    return LibraryMoves(lambda: moving_parts(services), spool=spool)
