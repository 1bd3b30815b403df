-- The options an upload chose (/upload's mode and embeddingModelId) move onto the document,
-- so a file listing reads them with it. They were kept in `settings` (scope 'upload', owner:
-- the document id); each document takes its own from there, and that scope goes.
ALTER TABLE documents ADD COLUMN mode TEXT NOT NULL DEFAULT 'fast';
ALTER TABLE documents ADD COLUMN embedding_model_id TEXT;

UPDATE documents
SET mode = COALESCE(
        (SELECT json_extract(s.value, '$.mode') FROM settings s
         WHERE s.scope = 'upload' AND s.owner = documents.id),
        'fast'),
    embedding_model_id = (
        SELECT json_extract(s.value, '$.embeddingModelId') FROM settings s
        WHERE s.scope = 'upload' AND s.owner = documents.id)
WHERE id IN (SELECT owner FROM settings WHERE scope = 'upload');

DELETE FROM settings WHERE scope = 'upload';
