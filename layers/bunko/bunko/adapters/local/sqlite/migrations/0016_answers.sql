-- Answers people mark and the questions a library could not answer (docs/answers.md).
CREATE TABLE answers (
    id TEXT PRIMARY KEY,
    library_id TEXT NOT NULL,
    asker TEXT NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    sources TEXT NOT NULL,
    refused INTEGER NOT NULL,
    door TEXT NOT NULL,
    conversation_id TEXT,
    turn INTEGER,
    at TEXT NOT NULL,
    expires INTEGER,
    collected INTEGER NOT NULL DEFAULT 0,
    mark TEXT,
    comment TEXT,
    marked_by TEXT,
    marked_at TEXT
);
CREATE INDEX answers_marked ON answers (library_id, marked_at) WHERE mark IS NOT NULL;
CREATE INDEX answers_collected ON answers (library_id, at) WHERE collected = 1;
CREATE INDEX answers_by_expiry ON answers (expires) WHERE expires IS NOT NULL;
