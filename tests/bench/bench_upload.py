"""Upload-to-searchable latency of a 1 MB PDF through the real REST server.

    .venv/bin/python tests/bench/bench_upload.py [--embedder use] [--runs 3] [--size-mb 1]

Starts the REST app under uvicorn on a loopback port (a throw-away data folder), registers a
user, then per run: POST /upload of a fresh PDF of real text (SciFact abstracts) of at least
--size-mb, and times (1) the 201 response, (2) the record reaching `completed`, (3) a
keyword that appears only on the PDF's last page coming back from search. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
from fpdf import FPDF

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bunko.services.search.search import SearchOptions  # noqa: E402
from tests.e2e.rest_harness import serve  # noqa: E402


def abstracts(eval_dir: Path) -> list[str]:
    with (eval_dir / "scifact" / "corpus.jsonl").open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    return [f"{r.get('title', '')}. {r['text']}" for r in rows]


def make_pdf(texts: list[str], *, min_bytes: int, marker: str) -> tuple[bytes, int]:
    """A PDF of text pages, at least `min_bytes` long, `marker` on its last page only."""
    count = 64
    while True:
        pdf = FPDF()
        pdf.set_font("Helvetica", size=10)
        for text in texts[:count]:
            pdf.add_page()
            pdf.multi_cell(0, 5, text.encode("latin-1", "replace").decode("latin-1"))
        pdf.add_page()
        pdf.multi_cell(0, 5, f"The closing page names the {marker} once.")
        data = bytes(pdf.output())
        if len(data) >= min_bytes or count >= len(texts):
            return data, pdf.pages_count
        count = min(len(texts), int(count * min_bytes / len(data) * 1.1) + 1)


def run_once(rest, client: httpx.Client, workspace: str, texts, size_mb: float) -> dict:
    marker = f"quokka{uuid.uuid4().hex[:8]}"
    data, pages = make_pdf(texts, min_bytes=int(size_mb * 1024 * 1024), marker=marker)
    started = time.perf_counter()
    response = client.post("/upload", files={"file": (f"{marker}.pdf", data, "application/pdf")})
    accepted = time.perf_counter() - started
    assert response.status_code == 201, response.text
    file_id = response.json()["id"]
    completed = searchable = None
    chunks = 0
    while searchable is None:
        now = time.perf_counter() - started
        if completed is None:
            record = client.get(f"/knowledge-bases/{file_id}").json()
            if record["status"] == "failed":
                raise RuntimeError(record["error"])
            if record["status"] == "completed":
                completed, chunks = now, record["chunkCount"]
        if completed is not None:
            hits = rest.services.search.search(workspace, marker, SearchOptions(min_score=0)).items
            if any(h.document_id == file_id for h in hits):
                searchable = time.perf_counter() - started
        if now > 600:
            raise TimeoutError("not searchable within 10 minutes")
        time.sleep(0.02)
    return {
        "pdf_bytes": len(data),
        "pages": pages,
        "chunks": chunks,
        "accepted_s": round(accepted, 3),
        "completed_s": round(completed, 3),
        "searchable_s": round(searchable, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embedder", default="use", help="use | lsa | e5 | none")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--size-mb", type=float, default=1.0)
    parser.add_argument("--eval-dir", type=Path, default=REPO.parent / "shared" / "eval")
    args = parser.parse_args()
    texts = abstracts(args.eval_dir)
    with (
        tempfile.TemporaryDirectory(prefix="bunko-bench-") as tmp,
        serve(Path(tmp) / "data", embedder=args.embedder) as rest,
    ):
        user = rest.new_user()
        workspace = rest.services.identity.authenticate(user.token).workspace_id
        runs = [
            run_once(rest, user.client, workspace, texts, args.size_mb) for _ in range(args.runs)
        ]
    searchable = [r["searchable_s"] for r in runs]
    print(
        json.dumps(
            {
                "embedder": args.embedder,
                "runs": runs,
                "searchable_median_s": round(statistics.median(searchable), 3),
                "searchable_min_s": round(min(searchable), 3),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
