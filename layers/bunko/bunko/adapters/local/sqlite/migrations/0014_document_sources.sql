-- A mirror (domain/sources.py) reads the documents one source owns in a library: this
-- index answers it without reading the library's other documents. `source` itself has
-- been a column since 0001 (NOT NULL DEFAULT 'api'), so no row is without one.
CREATE INDEX documents_by_source ON documents (workspace_id, source, path);
