-- Document metadata (domain/metadata.py): the object as clients gave it, its terms (the
-- category's among them) as a JSON array, and those terms one row each, indexed so that a
-- filter is a few index range scans. Triggers keep document_terms in step with the column,
-- whichever write changed it; a deleted document takes its terms with it.
ALTER TABLE documents ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
ALTER TABLE documents ADD COLUMN metadata_terms TEXT NOT NULL DEFAULT '[]';

CREATE TABLE document_terms (
    workspace_id TEXT NOT NULL,
    term TEXT NOT NULL,
    document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    PRIMARY KEY (workspace_id, term, document_id)
) WITHOUT ROWID;
CREATE INDEX document_terms_by_document ON document_terms (document_id);

CREATE TRIGGER document_terms_on_insert AFTER INSERT ON documents
BEGIN
    INSERT OR IGNORE INTO document_terms (workspace_id, term, document_id)
    SELECT NEW.workspace_id, value, NEW.id FROM json_each(NEW.metadata_terms);
END;

CREATE TRIGGER document_terms_on_update AFTER UPDATE OF metadata_terms ON documents
WHEN NEW.metadata_terms IS NOT OLD.metadata_terms
BEGIN
    DELETE FROM document_terms WHERE document_id = OLD.id;
    INSERT OR IGNORE INTO document_terms (workspace_id, term, document_id)
    SELECT NEW.workspace_id, value, NEW.id FROM json_each(NEW.metadata_terms);
END;

-- Documents kept before: their category becomes the key `category` (char(31): the separator).
UPDATE documents
SET metadata_terms = json_array(
        'category' || char(31) || 'k',
        'category' || char(31) || 's' || char(31) || category)
WHERE category IS NOT NULL AND category != '';
