"""Services: the rules of ingest, search, chat and auth. They see ports, never SDKs."""
