CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE documents (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    path TEXT NOT NULL,
    name TEXT NOT NULL,
    mime TEXT NOT NULL,
    size INTEGER NOT NULL DEFAULT 0,
    category TEXT,
    status TEXT NOT NULL,
    error TEXT,
    revision INTEGER NOT NULL DEFAULT 1,
    content_hash TEXT NOT NULL DEFAULT '',
    chunk_size INTEGER NOT NULL,
    chunk_overlap INTEGER NOT NULL,
    chunk_count INTEGER NOT NULL DEFAULT 0,
    source TEXT NOT NULL DEFAULT 'api',
    blob_key TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (workspace_id, path)
);
CREATE INDEX documents_by_workspace ON documents (workspace_id, created_at DESC);
CREATE INDEX documents_by_category ON documents (workspace_id, category);

CREATE TABLE revisions (
    document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    revision INTEGER NOT NULL,
    workspace_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    blob_key TEXT NOT NULL,
    text_key TEXT,
    size INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    PRIMARY KEY (document_id, revision)
);

CREATE TABLE chunks (
    id TEXT PRIMARY KEY,
    document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    content TEXT NOT NULL,
    start_offset INTEGER NOT NULL DEFAULT 0,
    end_offset INTEGER NOT NULL DEFAULT 0,
    page INTEGER
);
CREATE INDEX chunks_by_document ON chunks (document_id, idx);
CREATE INDEX chunks_by_workspace ON chunks (workspace_id);
