"""DynamoDB adapters: the one table's items, listings, totals and the account stores over it."""
