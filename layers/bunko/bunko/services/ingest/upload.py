"""Upload: one request to keep a file, built once by its door (REST /upload, the MCP tools,
the CLI, the drop folder, S3 drops) and handed whole to IngestService.submit.

Which file it is: `path` (the file at that logical path: a new revision when the path holds
one), else `name` (a new file: `name`, or `name (2)`, ... when another file holds it).
`replaces` names the document meant at `path`, never created anew if it was deleted
meanwhile (REST /upload's replaceId: the knowledge base fills in its path).

`mode` None is a door that does not choose the upload's options: the file is read "fast"
and a document that exists keeps the options it has; a door that chooses them (mode "fast"
or "precise", and an embedding model id) has them kept on the document.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bunko.domain.sources import API


@dataclass(frozen=True)
class Upload:
    """One file to keep, as a door asks for it (see the module for which file it is)."""

    workspace_id: str
    data: bytes = field(repr=False)
    path: str | None = None
    name: str | None = None  # without `path`: the new file's name (with it, unused)
    replaces: str | None = None  # a document id
    mime: str | None = None  # None: guessed from the name and the bytes
    category: str | None = None
    chunk_size: int | None = None
    chunk_overlap: int | None = None
    source: str = API  # who owns the document it makes (domain/sources.py)
    mode: str | None = None
    embedding_model_id: str | None = None
    # Checked metadata (domain/metadata.check_metadata) that replaces the document's; None
    # keeps what a document at the path has (a new file: none).
    metadata: dict[str, str | float | list[str]] | None = None
    # True once the upload policy has passed this upload (its name or path normalised, its
    # size allowed): set by UploadPolicy.check, or by REST /upload's own checks
    # (KnowledgeBase.upload: name, type, then size). IngestService.submit runs the check on
    # an upload whose door has not, and never twice.
    policy_checked: bool = False
    # Sent by the machine's operator for a document another source owns (`bunko import`
    # keeps each document's source): not counted by the upload quota, as `bunko ingest`'s.
    by_operator: bool = False

    def __post_init__(self) -> None:
        if self.path is None and self.name is None:
            raise ValueError("an upload names a path or a file name")
