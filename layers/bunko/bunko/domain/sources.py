"""Sources: who owns a document. Every document records the source that put it in its library
(`Document.source`), set when the document is created and never changed by a later revision,
whoever writes it.

A source is a string: each door's own (below), or a connector's `connector:<id>` (each
connector is a source of its own). A source that mirrors a place (the drop folder, S3 drops,
a connector) deletes what it put here and no longer sees (`IngestService.mirror`); a document
another source owns is never touched by it: a file uploaded by hand into a library a drop
folder feeds survives every mirror of that folder.

Old rows: both stores have kept `source` since their first schema (SQLite's column is
`NOT NULL DEFAULT 'api'`, DynamoDB's document item carries every field of `Document`); a row
without it is read as `API`, the door-less source no mirror owns, so it is never deleted by
one.
"""

from __future__ import annotations

API = "api"  # a caller that names no door (and a row written without a source)
UPLOAD = "upload"  # REST /upload and the web app
PRESIGNED = "presign"  # a large file the web app PUTs to a presigned URL: an upload by hand
AGENT = "agent"  # the MCP write tools
CLI = "cli"  # `bunko ingest`
DROP_FOLDER = "drop"  # the drop folder and the folders saved in settings (bunko serve)
S3_DROP = "s3"  # objects dropped under the files bucket's drop prefix (AWS)

_CONNECTOR = "connector:"
# Every door's own source, as a filter may name it.
DOORS = (API, UPLOAD, PRESIGNED, AGENT, CLI, DROP_FOLDER, S3_DROP)


def connector_source(connector_id: str) -> str:
    """The source of a connector's documents: one per connector, so two connectors (or a
    connector and the drop folder) feeding one library never delete each other's files."""
    if not connector_id:
        raise ValueError("a connector source needs the connector's id")
    return _CONNECTOR + connector_id


def is_connector(source: str) -> bool:
    return source.startswith(_CONNECTOR)


def within(path: str, scopes: tuple[str, ...] | None) -> bool:
    """Whether `path` is in one of `scopes`: a scope is one path, or a folder when it ends in
    "/" (everything under it); None is everywhere."""
    if scopes is None:
        return True
    return any(path == s or (s.endswith("/") and path.startswith(s)) for s in scopes)
