-- Accounts: users, login throttling, model configs, JSON settings (user and workspace).

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    username TEXT NOT NULL,
    username_key TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    is_admin INTEGER NOT NULL DEFAULT 0,
    token_version INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE login_attempts (
    key TEXT PRIMARY KEY,
    failures INTEGER NOT NULL DEFAULT 0,
    locked_until TEXT,
    last_failure TEXT
);

CREATE TABLE model_configs (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    name TEXT NOT NULL,
    provider TEXT NOT NULL,
    model_id TEXT NOT NULL,
    type TEXT NOT NULL,
    base_url TEXT,
    api_key_encrypted TEXT,
    supports_vision INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (workspace_id, name)
);
CREATE INDEX model_configs_by_workspace ON model_configs (workspace_id, created_at);

CREATE TABLE settings (
    scope TEXT NOT NULL,
    owner TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (scope, owner)
);
