"""OpenSearch Serverless adapters: the search index, its id ledger, queries and metadata terms."""
