-- Research projects, their evidence, sealed corpus revisions and each revision's own copy of
-- its passages (text and vector), kept until the corpus is deleted.
CREATE TABLE research_projects (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    name TEXT NOT NULL,
    revision INTEGER NOT NULL,
    corpus_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX research_projects_by_workspace ON research_projects (workspace_id, created_at);

CREATE TABLE research_evidence (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES research_projects (id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    document_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    chunk_id TEXT,
    note TEXT,
    added_at TEXT NOT NULL,
    seq INTEGER NOT NULL
);
CREATE INDEX research_evidence_by_project ON research_evidence (project_id, seq);

CREATE TABLE research_corpora (
    id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    workspace_id TEXT NOT NULL,
    project_id TEXT NOT NULL REFERENCES research_projects (id) ON DELETE CASCADE,
    project_revision INTEGER NOT NULL,
    evidence TEXT NOT NULL,
    sealed_at TEXT NOT NULL,
    coverage TEXT NOT NULL,
    missing_sources TEXT NOT NULL,
    method_version TEXT NOT NULL,
    sampling TEXT,
    PRIMARY KEY (id, revision)
);
CREATE INDEX research_corpora_by_workspace ON research_corpora (workspace_id, sealed_at);

CREATE TABLE research_passages (
    corpus_id TEXT NOT NULL,
    corpus_revision INTEGER NOT NULL,
    evidence_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    content TEXT NOT NULL,
    start_offset INTEGER NOT NULL,
    end_offset INTEGER NOT NULL,
    page INTEGER,
    of_chunks INTEGER NOT NULL,
    vector BLOB,
    embedder TEXT,
    seq INTEGER NOT NULL,
    PRIMARY KEY (corpus_id, corpus_revision, evidence_id, chunk_id),
    FOREIGN KEY (corpus_id, corpus_revision)
        REFERENCES research_corpora (id, revision) ON DELETE CASCADE
);
CREATE INDEX research_passages_by_source ON research_passages (workspace_id, document_id, revision);
