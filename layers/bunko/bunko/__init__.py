"""Bunko: a knowledge base for people and AI agents."""

__version__ = "0.1.0"
