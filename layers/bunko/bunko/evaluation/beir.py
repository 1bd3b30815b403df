"""Load a BEIR-format folder: corpus.jsonl, queries.jsonl and qrels/<split>.tsv."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class BeirSet:
    corpus: dict[str, str]  # doc id -> "title\n\ntext"
    queries: dict[str, str]  # only the queries that have judgements in the split
    qrels: dict[str, dict[str, int]]  # query id -> doc id -> relevance grade
    titles: dict[str, str] = field(default_factory=dict)  # doc id -> title, where it has one


def _jsonl(path: Path) -> Iterable[dict]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def load_beir(directory: Path, *, split: str = "test") -> BeirSet:
    """The corpus (title and text joined, as BEIR does), the judged queries and their qrels."""
    corpus, titles = {}, {}
    for row in _jsonl(directory / "corpus.jsonl"):
        title, text = (row.get("title") or "").strip(), (row.get("text") or "").strip()
        corpus[str(row["_id"])] = f"{title}\n\n{text}" if title else text
        if title:
            titles[str(row["_id"])] = title
    queries = {str(r["_id"]): r["text"] for r in _jsonl(directory / "queries.jsonl")}
    qrels: dict[str, dict[str, int]] = {}
    with (directory / "qrels" / f"{split}.tsv").open(encoding="utf-8") as f:
        for n, line in enumerate(f):
            parts = line.rstrip("\n").split("\t")
            if n == 0 and not parts[-1].lstrip("-").isdigit():
                continue  # header
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    queries = {q: t for q, t in queries.items() if q in qrels}
    return BeirSet(corpus=corpus, queries=queries, qrels=qrels, titles=titles)
