"""Abstention in `bunko eval`: does the default `min_score` keep what is relevant and refuse
what is not?

- answerable: the set's own queries over its corpus. `kept` is the share of those whose
  relevant document is among the results at `min_score` 0 (so retrieval found it) that still
  return it at the default `min_score`; `kept_all` the share of every answerable query.
- unanswerable: queries of the other BEIR sets beside this one whose corpus differs
  (SciFact's English claims over the Japanese corpus and back; never `xquad-dev/de` for
  `xquad-dev/en`, the same questions in German about the same paragraphs) plus random
  strings; `refused` is the share that return no
  result at all at the default `min_score`.

Every query goes through the real SearchService path, as REST, MCP and chat call it.
"""

from __future__ import annotations

import hashlib
import json
import random
import string
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from bunko.services.search import SearchOptions, SearchService

# Enough queries for a ±2% estimate without dominating the run's time.
FOREIGN_QUERIES = 400
RANDOM_QUERIES = 200
RESULT_LIMIT = 10

_KANA = "".join(chr(c) for c in range(0x3041, 0x3097)) + "".join(
    chr(c) for c in range(0x30A1, 0x30FB)
)
_KANJI = "".join(chr(c) for c in range(0x4E00, 0x9FA0, 37))


def random_queries(count: int = RANDOM_QUERIES, *, seed: int = 0) -> list[str]:
    """Nonsense a user might type: random Latin words, random kana/kanji runs, mixtures."""
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(count):
        kind = i % 3
        if kind == 0:
            words = rng.randint(1, 4)
            out.append(
                " ".join(
                    "".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 9)))
                    for _ in range(words)
                )
            )
        elif kind == 1:
            out.append("".join(rng.choices(_KANA + _KANJI, k=rng.randint(3, 12))))
        else:
            out.append(
                "".join(rng.choices(string.ascii_letters + string.digits, k=rng.randint(5, 12)))
                + " "
                + "".join(rng.choices(_KANA, k=rng.randint(2, 6)))
            )
    return out


def foreign_queries(
    directory: Path, *, count: int = FOREIGN_QUERIES, seed: int = 0
) -> dict[str, list[str]]:
    """A sample of the queries of every other BEIR set beside `directory` over another
    corpus, by set name (a set asking about the same corpus is answerable, not foreign)."""
    out: dict[str, list[str]] = {}
    directory = Path(directory).resolve()
    own = _corpus_digest(directory)
    for sibling in sorted(directory.parent.iterdir()):
        path = sibling / "queries.jsonl"
        if sibling == directory or not path.is_file():
            continue
        if own is not None and _corpus_digest(sibling) == own:
            continue
        texts = sorted(_texts(path))
        random.Random(seed).shuffle(texts)
        out[sibling.name] = texts[:count]
    return out


def _corpus_digest(directory: Path) -> str | None:
    path = directory / "corpus.jsonl"
    if not path.is_file():
        return None
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _texts(path: Path) -> Iterable[str]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)["text"]


def measure(
    search: Callable[[str, float], list[str]],
    answerable: Mapping[str, tuple[str, set[str]]],
    unanswerable: Mapping[str, list[str]],
    *,
    min_score: float,
) -> dict:
    """`search(query, min_score)` returns the ranked ids of the documents found.

    `answerable`: query id → (query, relevant document ids); `unanswerable`: source → queries.
    """
    found = kept = 0
    for query, relevant in answerable.values():
        if relevant & set(search(query, 0.0)):
            found += 1
            kept += bool(relevant & set(search(query, min_score)))
    refused = {
        source: sum(not search(q, min_score) for q in queries) / len(queries)
        for source, queries in unanswerable.items()
        if queries
    }
    total = sum(len(q) for q in unanswerable.values())
    refused_all = sum(refused[s] * len(unanswerable[s]) for s in refused) / total if total else None
    return {
        "min_score": min_score,
        "answerable_kept": round(kept / found, 4) if found else None,
        "answerable_kept_all": round(kept / len(answerable), 4) if answerable else None,
        "unanswerable_refused": round(refused_all, 4) if refused_all is not None else None,
        "refused_by_source": {s: round(v, 4) for s, v in refused.items()},
        "answerable_queries": len(answerable),
        "answerable_found": found,
        "unanswerable_queries": total,
    }


def evaluate(
    search: SearchService,
    workspace_id: str,
    answerable: Mapping[str, tuple[str, set[str]]],
    beir_id_of: Mapping[str, str],
    unanswerable: Mapping[str, list[str]],
    *,
    min_score: float,
) -> dict:
    """`measure` through `search` (the real service); `beir_id_of` maps Bunko document ids
    to the set's ids; `unanswerable` as `unanswerable_queries` gives them."""

    def found(query: str, cutoff: float) -> list[str]:
        options = SearchOptions(limit=RESULT_LIMIT, min_score=cutoff)
        result = search.search(workspace_id, query, options)
        return [beir_id_of[item.document_id] for item in result.items]

    return measure(found, answerable, unanswerable, min_score=min_score)


def unanswerable_queries(directory: Path) -> dict[str, list[str]]:
    """The other BEIR sets' queries beside `directory`, and random strings, by source."""
    return {**foreign_queries(directory), "random": random_queries()}


def format_line(figures: dict) -> str:
    return (
        f"abstention at min_score {figures['min_score']}: answerable kept "
        f"{figures['answerable_kept']} ({figures['answerable_found']} found of "
        f"{figures['answerable_queries']}; of all {figures['answerable_kept_all']}), "
        f"unanswerable refused {figures['unanswerable_refused']} "
        f"{figures['refused_by_source']}"
    )
