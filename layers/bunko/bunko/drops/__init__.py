"""Doors for dropped files: a watched local folder and S3 drop notifications.

Like `http/` and `mcp/`, these translate an outside event into calls on the ingest services;
they decide nothing themselves.
"""
