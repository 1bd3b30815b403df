-- A library's move started at the REST or MCP door (services/moving/jobs.py): its record as
-- JSON, so a restarted server answers a poll ("failed: interrupted") instead of 404.
CREATE TABLE move_jobs (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    record TEXT NOT NULL,
    expires REAL
);
