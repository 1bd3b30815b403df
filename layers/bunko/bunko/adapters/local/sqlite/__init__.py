"""SQLite adapters: the metadata database (documents, chunks, accounts, settings) and its migrations."""
