-- The audit trail (docs/audit.md): append-only. Triggers refuse any UPDATE, and any DELETE
-- of an event whose retention (`expires`, epoch seconds; NULL: kept for ever) has not ended.
CREATE TABLE audit_events (
    id TEXT PRIMARY KEY,
    at TEXT NOT NULL,
    expires INTEGER,
    action TEXT NOT NULL,
    outcome TEXT NOT NULL,
    status INTEGER NOT NULL,
    user_id TEXT,
    api_key_id TEXT,
    key_maker TEXT,
    library_id TEXT,
    object_kind TEXT,
    object_id TEXT,
    client TEXT,
    door TEXT NOT NULL
);
CREATE INDEX audit_events_by_library ON audit_events (library_id, at);
CREATE INDEX audit_events_by_time ON audit_events (at);
CREATE INDEX audit_events_by_expiry ON audit_events (expires) WHERE expires IS NOT NULL;
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN
    SELECT RAISE(ABORT, 'audit events are append-only');
END;
CREATE TRIGGER audit_events_no_early_delete BEFORE DELETE ON audit_events
WHEN OLD.expires IS NULL OR OLD.expires > CAST(strftime('%s', 'now') AS INTEGER)
BEGIN
    SELECT RAISE(ABORT, 'audit events are append-only until their retention ends');
END;
