-- Chat conversations and their messages, per workspace and owner. `expires_at` (ISO UTC,
-- NULL: kept) is set under BUNKO_CONVERSATION_RETENTION_DAYS; expired rows are hidden from
-- every read and pruned on write.
CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    title TEXT,
    message_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    expires_at TEXT
);
CREATE INDEX conversations_by_owner ON conversations (workspace_id, owner, updated_at DESC);
CREATE INDEX conversations_by_expiry ON conversations (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE conversation_messages (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    sources TEXT NOT NULL DEFAULT '[]',
    truncated INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    PRIMARY KEY (conversation_id, seq)
);
CREATE INDEX conversation_messages_by_expiry ON conversation_messages (expires_at)
    WHERE expires_at IS NOT NULL;
