"""Research: sealed corpora of passages an agent collects, searches and cites."""

from bunko.services.research.research import MAX_NAME_CHARS, MAX_NOTE_CHARS, ResearchService
from bunko.services.research.research_search import CorpusHit

__all__ = ["MAX_NAME_CHARS", "MAX_NOTE_CHARS", "CorpusHit", "ResearchService"]
