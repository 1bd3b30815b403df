-- Each sealed passage keeps its document's metadata terms as they were at the seal (a JSON
-- array), so a corpus search filtered by metadata answers alike whatever changes later.
-- Corpora sealed before have none: a filter on metadata passes none of their passages.
ALTER TABLE research_passages ADD COLUMN metadata_terms TEXT NOT NULL DEFAULT '[]';
