"""Embedded adapters: SQLite, files, the local index, packaged models, in-process worker."""
