"""A library's export as an MCP tool (docs/owners.md, "Moving a library"): its owners' keys
export the key's library and get where to download the archive: a `resource_link` to the REST
door's short-lived download link, and, for a small archive, the archive itself as an embedded
resource (both content blocks of the MCP spec's tool results).

Import is not a tool: an agent would have to send the whole archive inside a JSON-RPC message
(base64, a third larger, held in memory on both sides), and an import makes a library and adds
members, which is a person's decision: `POST /libraries/import`, the web app, or
`bunko import` on the machine."""

from __future__ import annotations

import base64
from typing import Any

from mcp_types import BlobResourceContents, EmbeddedResource, ResourceLink
from pydantic import Field, PrivateAttr

from bunko.domain.auth import SCOPE_WRITE
from bunko.errors import PermissionDeniedError, ServiceUnavailableError
from bunko.mcp.registry import ToolContext, ToolSpec, tool
from bunko.operations.models import Id, Output, StrictInput
from bunko.services.moving import LibraryMoves, MoveJob, archive_link

EMBED_MAX_BYTES = 1 << 20  # an archive up to this size also comes inside the result
WAIT_MAX = 300


class ExportInput(StrictInput):
    conversations: bool = Field(False, description="Also the conversations kept in it.")
    vectors: bool = Field(False, description="Also each passage's vector.")
    export_id: Id | None = Field(
        None, description="An export this tool started before (still running): its state now."
    )
    wait: int = Field(
        60, ge=0, le=WAIT_MAX, description="Seconds to wait for the export to finish."
    )


class ExportOutput(Output):
    exportId: str
    status: str = Field(description="running, done or failed.")
    done: int = Field(description="Documents written so far.")
    total: int = Field(description="Documents in the library.")
    error: str | None = None
    download: str | None = Field(
        None,
        description="Done: the archive's download link on this server's REST API, needing "
        "no token, good for `expiresIn` seconds (a path when the server's address is unknown).",
    )
    expiresIn: int | None = None
    bytes: int | None = Field(None, description="The archive's size.")
    documents: int | None = None
    embedded: bool = Field(False, description="The archive is also in the result (small).")
    _blocks: list[Any] = PrivateAttr(default_factory=list)

    def content_blocks(self) -> list[Any]:
        return self._blocks


def _moves(ctx: ToolContext) -> LibraryMoves:
    if ctx.services.moves is None or ctx.services.accounts is None:
        raise ServiceUnavailableError("libraries are not available on this backend")
    return ctx.services.moves


@tool(
    title="Export the library",
    scope=SCOPE_WRITE,
    read_only=False,  # it changes nothing in the library, but an export is in the audit trail
    destructive=False,
    idempotent=False,
)
def export_library(ctx: ToolContext, args: ExportInput) -> ExportOutput:
    """Export this library into one portable archive (its owners only), as `bunko export`
    does: originals, paths, metadata, categories, sources' settings (never a secret),
    members by username, settings; conversations and vectors when asked. Waits up to `wait`
    seconds, then answers where to download the archive (a link good for a few minutes)
    and, when it is small, the archive itself as an embedded resource. Still running: call
    again with `export_id`."""
    if not ctx.principal.manages():
        raise PermissionDeniedError("only the library's owners may do this")
    moves = _moves(ctx)
    if args.export_id is not None:
        job = moves.export(ctx.workspace_id, args.export_id)
    else:
        job = moves.start_export(
            ctx.workspace_id,
            by=ctx.principal.user_id,
            conversations=args.conversations,
            vectors=args.vectors,
        )
    return _answer(ctx, moves, moves.wait(job, args.wait))


def _answer(ctx: ToolContext, moves: LibraryMoves, job: MoveJob) -> ExportOutput:
    out = ExportOutput(
        exportId=job.id, status=job.status, done=job.done, total=job.total, error=job.error
    )
    report = job.exported
    if job.status != "done" or report is None or job.archive is None:
        return out
    url = (ctx.base_url or "") + archive_link(job)
    name = f"{ctx.services.accounts.libraries.name_of(job.workspace_id)}.bunko.zip"
    out.download, out.expiresIn = url, moves.expires_in(job)
    out.bytes, out.documents = report.bytes, report.documents
    if ctx.base_url:  # an absolute link a client can follow
        out._blocks.append(
            ResourceLink(uri=url, name=name, mime_type="application/zip", size=report.bytes)
        )
    if report.bytes <= EMBED_MAX_BYTES:
        blob = base64.b64encode(moves.archive_bytes(job)).decode()
        uri = url if ctx.base_url else f"bunko://export/{job.id}"  # over stdio: a name only
        resource = BlobResourceContents(uri=uri, mime_type="application/zip", blob=blob)
        out._blocks.append(EmbeddedResource(type="resource", resource=resource))
        out.embedded = True
    return out


MOVING_TOOLS: tuple[ToolSpec, ...] = (export_library,)
