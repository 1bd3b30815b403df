"""`bunko eval`: retrieval quality on a BEIR-format folder, measured through the real pipeline.

One module per step: `beir` loads the files, `run` ingests the corpus and ranks every query,
`metrics` scores one ranking, `abstention` checks the default min_score keeps what is
relevant and refuses what is not, `report` averages the scores and prints them.
"""

from __future__ import annotations

from bunko.evaluation.beir import BeirSet, load_beir
from bunko.evaluation.report import format_table
from bunko.evaluation.run import run_evaluation

__all__ = ["BeirSet", "format_table", "load_beir", "run_evaluation"]
