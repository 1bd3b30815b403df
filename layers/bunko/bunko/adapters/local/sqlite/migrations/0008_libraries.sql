-- Shared libraries (a workspace with members) and their members' roles. `name_key` is the
-- name as domain/libraries.name_key folds it: two names that read alike are one.
CREATE TABLE libraries (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,
    created_by TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE library_members (
    library_id TEXT NOT NULL REFERENCES libraries (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'owner')),
    PRIMARY KEY (library_id, user_id)
);
CREATE INDEX library_members_by_user ON library_members (user_id);
