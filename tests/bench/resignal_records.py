"""Read recorded candidates' text signals again, with today's code: no embedding.

    python -m tests.bench.resignal_records e5-ja-st64.json e5-ja-st64-now.json

`tests/bench/fit_calibration.py --texts` keeps, beside each question's top ten candidates,
the question, the gate's window and each window chunk's text and document context. The
cosine and the engine coverage come from the embedder and the index, and do not change when
the evidence reading does (services/search/evidence.py, background_terms.py); the text
signals (background coverage, evidence, reach, pair, absent) do. This re-reads them with the
code as it is now and writes the records again, so a new reading is measured with
`fit_calibration --load` in a minute, not the twenty minutes e5 takes to record a set again.
Records without texts are written back unchanged.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bunko.services.search.relevance_gate import TextSignals, window_signals


def resignal(loaded: dict) -> int:
    """Re-read the text signals of one recorded set in place; how many questions were read."""
    texts = loaded.get("texts")
    if not texts:
        return 0
    none = TextSignals(0.0)
    count = 0
    for record in loaded["records"]:
        if "query" not in record:
            continue
        window = {cid: texts[cid][0] for cid in record["window"]}
        context = {cid: texts[cid][1] for cid in record["window"]}
        signals = window_signals(record["query"], window, context)
        for hit, cid in zip(record["hits"], record["top"], strict=True):
            s = signals.get(cid, none)
            # the columns fit_calibration.collect writes: cosine, coverage, then these
            hit[2:7] = [round(v, 5) for v in (s.background, s.evidence, s.reach, s.pair, s.absent)]
        count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="records saved with fit_calibration --texts")
    parser.add_argument("target", type=Path)
    args = parser.parse_args()
    loaded = json.loads(args.source.read_text(encoding="utf-8"))
    sets = loaded if isinstance(loaded, list) else [loaded]
    read = sum(resignal(d) for d in sets)
    args.target.write_text(json.dumps(loaded), encoding="utf-8")
    print(f"{read} questions read again")


if __name__ == "__main__":
    main()
