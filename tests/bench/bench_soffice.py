"""What the LibreOffice sandbox and the link cleaning cost, and that ordinary files convert.

    .venv/bin/python tests/bench/bench_soffice.py [--runs 3]

Converts an ordinary .docx, .xlsx, .pptx and .odt (with a picture inside the package) to
PDF with the converter as `bunko serve` builds it (jail + cleaning) and with the jail
switched off (cleaning only), --runs times each, one at a time. Prints JSON: per type,
whether the text came through, and the median seconds of each mode.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bunko.adapters.local.soffice import SofficeConverter  # noqa: E402
from bunko.parsing import parse  # noqa: E402
from tests.fixtures_files import make_docx, make_pptx, make_xlsx  # noqa: E402
from tests.security.office_attacks import odt_linking, png  # noqa: E402

WORD = "lighthouse"


def documents() -> dict[str, bytes]:
    return {
        "report.docx": make_docx([f"The {WORD} budget grew."] * 20, table=[["a", "b"], ["1", "2"]]),
        "sheet.xlsx": make_xlsx({"Budget": [[WORD, i] for i in range(200)]}),
        "deck.pptx": make_pptx([(f"{WORD} {i}", "The budget grew.", None) for i in range(5)]),
        "note.odt": odt_linking("Pictures/p.png", embedded=png()),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    converters = {"jailed": SofficeConverter(), "unjailed": SofficeConverter(sandbox=False)}
    report: dict[str, dict] = {}
    for name, data in documents().items():
        row: dict = {}
        for mode, converter in converters.items():
            times = []
            for _ in range(args.runs):
                started = time.perf_counter()
                pdf = converter.convert_to_pdf(data, name)
                times.append(time.perf_counter() - started)
            text = parse(pdf, filename="out.pdf").text.lower()
            row[mode] = {
                "median_s": round(statistics.median(times), 2),
                "text_ok": WORD in text or "picture" in text,
                "pdf_bytes": len(pdf),
            }
        report[name] = row
    print(json.dumps({"runs": args.runs, "documents": report}, indent=2))


if __name__ == "__main__":
    main()
