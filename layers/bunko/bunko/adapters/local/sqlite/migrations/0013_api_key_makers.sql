-- Each API key records who made it: its maker's current rights bound it at every use
-- (docs/security.md, "Rights follow the person"). A key made before this in a user's own
-- library was made by that user; any other older key has no known maker and is refused.
ALTER TABLE api_keys ADD COLUMN created_by TEXT;
UPDATE api_keys SET created_by = (
    SELECT users.id FROM users WHERE users.workspace_id = api_keys.workspace_id
) WHERE created_by IS NULL;
