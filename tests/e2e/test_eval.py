"""`bunko eval` end to end on a tiny BEIR set: a real process, the real pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.cli_harness import run

pytestmark = pytest.mark.slow  # real `bunko eval` processes

TINY = Path(__file__).resolve().parents[1] / "data" / "beir_tiny"


def test_eval_json_report(tmp_path):
    proc = run(["eval", str(TINY), "--json", "--embedder", "none"], tmp_path / "data")
    report = json.loads(proc.stdout)
    methods = ["keyword", "vector", "max", "rrf"] + [
        f"convex(w={w})" for w in ("0.1", "0.2", "0.3", "0.5", "0.7")
    ]
    methods.append("adaptive(w=0.3)")  # what search does: the weight follows the query
    methods.append("shown")  # the list search shows, sorted by its similarity
    assert list(report) == [*methods, "default", "meta", "abstention", "reliability", "libraries"]
    meta = report["meta"]
    assert (meta["dataset"], meta["embedder"]) == ("beir_tiny", "none")
    assert (meta["documents"], meta["chunks"], meta["queries"]) == (8, 8, 4)
    assert report["vector"] == {"ndcg@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    keyword = report["keyword"]
    assert keyword["mrr@10"] == 1.0  # every query's first hit is a judged-relevant document
    assert 0.5 < keyword["ndcg@10"] <= 1.0 and 0.5 < keyword["recall@100"] <= 1.0
    assert report["default"]["method"] == "adaptive(w=0.3)"
    # Small libraries: beir_tiny's documents are their own topics (no shared titles)
    small = report["libraries"]
    assert set(small) == {"1"} and small["1"]["libraries"] == 40
    assert small["1"]["kept"] >= 0.75 and small["1"]["refused"] >= 0.9
    # No sibling set beside beir_tiny: random strings are the unanswerable queries.
    abstention = report["abstention"]
    assert abstention["min_score"] == 0.3 and list(abstention["refused_by_source"]) == ["random"]
    assert abstention["unanswerable_queries"] == 200 and abstention["unanswerable_refused"] >= 0.95
    assert abstention["answerable_found"] == 4 and abstention["answerable_kept"] == 1.0
    # The shown similarity against the share relevant: every hit of every question, binned
    reliability = report["reliability"]
    assert reliability["hits"] == sum(b["hits"] for b in reliability["bins"]) > 0
    assert 0.0 <= reliability["ece"] <= 1.0 and len(reliability["bins"]) == 10
    assert report["shown"]["mrr@10"] == 1.0  # sorted by similarity, the first is still right


def test_eval_table(tmp_path):
    proc = run(["eval", str(TINY), "--embedder", "none", "--max-queries", "2"], tmp_path / "d")
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("dataset beir_tiny  embedder none  8 docs / 8 chunks / 2 queries")
    assert lines[1].split() == ["method", "nDCG@10", "R@100", "MRR@10"]
    assert any(line.startswith("default=adaptive(w=0.3)") for line in lines)
    assert any(line.startswith("shown ") for line in lines)
    at = next(i for i, line in enumerate(lines) if line.startswith("indexing "))
    assert lines[at + 1].startswith("abstention at min_score 0.3: answerable kept ")
    assert lines[at + 2].startswith("small libraries: 1-document libraries (40): kept ")
    assert lines[at + 3].startswith("similarity reliability (")
    assert lines[at + 4].split() == ["similarity", "hits", "mean", "relevant"]


def test_scratch_graph_takes_a_corpus_larger_than_the_upload_rate():
    """`bunko eval` and the ingest bench load thousands of documents into a scratch graph:
    the per-user upload rate (60 a minute) must not stop them."""
    from bunko.bootstrap.scratch import scratch_services
    from bunko.domain import DEFAULT_WORKSPACE_ID

    with scratch_services(embedder="none") as (services, queue):
        for n in range(services.settings.upload_rate_per_minute + 5):
            services.ingest.submit_text(DEFAULT_WORKSPACE_ID, path=f"d{n}.txt", content=f"doc {n}")
        assert len(queue.take()) == services.settings.upload_rate_per_minute + 5


def test_a_scratch_graph_with_a_worker_indexes_files_as_they_arrive():
    """The ingest bench's --arriving: the worker thread `bunko serve` runs takes each upload
    while the next arrives, and every file ends searchable."""
    from bunko.bootstrap.scratch import scratch_services
    from bunko.domain import DEFAULT_WORKSPACE_ID
    from bunko.services.search.search import SearchOptions

    with scratch_services(embedder="none", worker=True) as (services, queue):
        assert queue is None
        for n in range(30):
            services.ingest.submit_text(
                DEFAULT_WORKSPACE_ID, path=f"d{n}.txt", content=f"arriving file number{n}"
            )
        assert services.queue.join(timeout=60)
        for n in (0, 29):
            found = services.search.search(
                DEFAULT_WORKSPACE_ID, f"number{n}", SearchOptions(min_score=0)
            )
            assert [hit.path for hit in found.items][:1] == [f"d{n}.txt"]
        assert services.metadata.count_documents(DEFAULT_WORKSPACE_ID) == 30


def test_eval_measures_chat_answers_where_the_set_ships_gold_answers(tmp_path):
    """A set with answers.jsonl (as JSQuAD's): each question goes through the real chat
    service, and the report says how often the answer holds a gold answer and cites the
    judged paragraph, and how often unanswerable questions are refused."""
    import shutil

    tiny = tmp_path / "sets" / "tiny"
    shutil.copytree(TINY, tiny)
    gold = {
        "q1": ["boils water"],
        "q2": ["ａｉｒ　ｐｒｅｓｓｕｒｅ"],  # full-width: equal after NFKC
        "q3": ["本を借りる"],
        "q4": ["lava"],
    }
    (tiny / "answers.jsonl").write_text(
        "".join(
            json.dumps({"_id": q, "answers": a}, ensure_ascii=False) + "\n" for q, a in gold.items()
        ),
        encoding="utf-8",
    )
    proc = run(["eval", str(tiny), "--json", "--embedder", "none"], tmp_path / "data")
    answers = json.loads(proc.stdout)["answers"]
    assert answers["questions"] == 4
    # The extractive answerer quotes the passage: q1-q3 hold their gold (q2's after NFKC and
    # without spaces); q4's gold ("lava") is in another paragraph, so 3 of 4.
    assert answers["contains_gold"] == 0.75
    assert answers["answered"] == 1.0 and answers["gold_in_sources"] == 1.0
    assert answers["cites_gold"] == 1.0
    assert answers["unanswerable_abstained"]["random"] >= 0.95
    assert answers["answer_p50_ms"] > 0
    table = run(["eval", str(tiny), "--embedder", "none"], tmp_path / "d2").stdout
    assert any(
        line.startswith("chat answers (4 questions): contain a gold answer 0.75")
        for line in table.splitlines()
    )
