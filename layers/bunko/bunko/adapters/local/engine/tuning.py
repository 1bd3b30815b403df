"""The engine's tuning: the sizes and shares that decide which path a write or search takes.

One record, given to `LocalSearchIndex` at construction and handed down to each workspace's
engines (as `OpenAIEmbedder` takes its knobs), so a test reaches a path with a few hundred
rows by passing a small record instead of patching module constants. The defaults are the
measured ones; the graph's own shape (links, breadth) stays in `vector_index`, as a saved
graph is built with it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineTuning:
    """The engine's knobs; `MEASURED` holds the defaults every shape runs with."""

    # --- vector_index: the pending tail and the graph ---
    # Pending rows enter the graph this many at a time, in the background.
    pending_max: int = 1024
    # The writer waits for the graph once pending_limit × pending_max rows are pending: every
    # search ranks the pending rows exactly, so the tail must stay short when writes outpace it.
    pending_limit: int = 4
    # A filtered search scans its allowed rows exactly when they are at most exact_max or
    # under exact_fraction of the graph (at 100k rows, CPU per query: 1% 0.6 ms exact vs
    # 95 ms through the graph, 10% 5.0 vs 6.4 ms, 20% 8.9 vs 2.5 ms).
    exact_max: int = 2048
    exact_fraction: float = 0.12
    # Rows put in the graph under one hold of the lock (~10 ms of work at 100k rows), and how
    # long the insert lets waiting searches go first.
    insert_step: int = 128
    search_first_seconds: float = 0.05

    # --- vector_sketches: an exact scan over many rows is shortlisted by sketches ---
    # Rows kept for the exact ranking at least (shortlist_factor × the limit when more).
    shortlist_min: int = 1000

    # --- keyword_postings ---
    # Postings buffered before sealing a segment: the buffer is scanned per query term, so it
    # stays small (~0.1 ms a query), and sealing it costs ~0.3 ms.
    pending_postings: int = 8192

    # --- search_index: when a workspace's snapshot is saved while writes continue ---
    # At most this often...
    save_interval_seconds: float = 60.0
    # ... or once this many entries (or this fraction of the workspace) wait to be replayed
    # (~0.3 s of replay: that bounds crash recovery).
    save_rows: int = 20_000
    save_fraction: float = 0.05


MEASURED = EngineTuning()
