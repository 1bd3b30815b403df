-- How the relevance gate reads each chunk's sentences (domain/sentence_terms.py), read once
-- at ingest so the first question over a chunk does not. Chunks stored before this have
-- NULL: the gate reads their text, as before.
ALTER TABLE chunks ADD COLUMN sentence_terms TEXT;
