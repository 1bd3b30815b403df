"""Adapters: the ports implemented for one technology each (local and aws)."""
