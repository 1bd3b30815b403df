"""MCP numbers, rerunnable:

    .venv/bin/python -m tests.bench.bench_mcp [--embedder use] [--chunks 10000] [--queries 300]

1. tools/list size in bytes for each profile (core, full), transport and output-schema switch.
2. p50/p95 latency of `search_text` over streamable HTTP, measured at the official MCP client,
   against a knowledge base of at least --chunks chunks (SciFact abstracts, ingested through
   the real pipeline). The knowledge base is kept in --data-dir and reused by later runs.
Queries are SciFact's claims, asked one after another over one connection after a warm-up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from mcp_types import ListToolsResult  # noqa: E402

from bunko.domain import DEFAULT_WORKSPACE_ID  # noqa: E402
from bunko.mcp.registry import PROFILES, TRANSPORTS  # noqa: E402
from bunko.mcp.tool_server import listed_tools, tool_definition  # noqa: E402

EVAL_DIR = Path(os.environ.get("BUNKO_EVAL_DIR", REPO.parent / "shared" / "eval"))


def tools_list_sizes() -> list[dict]:
    rows = []
    for transport in TRANSPORTS:
        for profile in PROFILES:
            for schemas in (False, True):
                specs = listed_tools(profile=profile, transport=transport)
                result = ListToolsResult(
                    tools=[tool_definition(s, output_schemas=schemas) for s in specs]
                )
                body = result.model_dump_json(by_alias=True, exclude_none=True)
                rows.append(
                    {"transport": transport, "profile": profile, "output_schemas": schemas,
                     "tools": len(specs), "bytes": len(body.encode())}
                )  # fmt: skip
    return rows


def build_kb(services, corpus: Path, target: int) -> float:
    """Ingest abstracts until the workspace holds `target` chunks; returns seconds spent."""
    started = time.perf_counter()
    documents = [json.loads(line) for line in corpus.open(encoding="utf-8")]
    position = 0
    while services.metadata.count_chunks(DEFAULT_WORKSPACE_ID) < target:
        if position >= len(documents):
            raise SystemExit(f"{corpus} has too little text for {target} chunks")
        for doc in documents[position : position + 200]:
            services.ingest.submit_text(
                DEFAULT_WORKSPACE_ID, path=f"scifact/{doc['_id']}.txt",
                content=f"{doc.get('title', '')}\n\n{doc['text']}", category="scifact",
                source="cli",  # the operator's bulk load, as `bunko ingest`: no upload quota
            )  # fmt: skip
        position += 200
        services.queue.join()
        print(f"  {services.metadata.count_chunks(DEFAULT_WORKSPACE_ID)} chunks", file=sys.stderr)
    return time.perf_counter() - started


async def measure(url: str, key: str, queries: list[str], warmup: int) -> list[float]:
    from tests.e2e.mcp_harness import http_client, ok

    latencies = []
    async with http_client(url, key) as client:
        for n, query in enumerate(queries):
            started = time.perf_counter()
            result = ok(await client.call_tool("search_text", {"content": query}))
            elapsed = time.perf_counter() - started
            assert isinstance(result["items"], list)
            if n >= warmup:
                latencies.append(elapsed * 1000)
    return latencies


def in_process(services, queries: list[str], warmup: int) -> list[float]:
    from bunko.services.search.search import SearchOptions

    latencies = []
    for n, query in enumerate(queries):
        started = time.perf_counter()
        services.search.search_safely(DEFAULT_WORKSPACE_ID, query, SearchOptions())
        if n >= warmup:
            latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def summary(latencies: list[float]) -> dict:
    return {
        "n": len(latencies),
        "p50": round(percentile(latencies, 50), 2),
        "p95": round(percentile(latencies, 95), 2),
        "p99": round(percentile(latencies, 99), 2),
        "mean": round(statistics.fmean(latencies), 2),
        "max": round(max(latencies), 2),
    }


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "bunko-bench-mcp"
    )
    parser.add_argument("--embedder", default="use", choices=["use", "lsa", "e5", "none"])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()

    from bunko.mcp.http import create_mcp_app
    from tests.conftest import make_services
    from tests.e2e.live_server import LiveServer

    data_dir = args.data_dir / args.embedder
    print(f"knowledge base in {data_dir} ({args.embedder})", file=sys.stderr)
    services = make_services(data_dir, embedder=args.embedder)
    report: dict = {"tools_list": tools_list_sizes(), "embedder": args.embedder}
    try:
        report["ingest_seconds"] = round(
            build_kb(services, EVAL_DIR / "scifact" / "corpus.jsonl", args.chunks), 1
        )
        if args.embedder == "lsa" and services.index.count() == 0:
            services.pipeline.reindex(retrain=True)
        report["chunks"] = services.metadata.count_chunks(DEFAULT_WORKSPACE_ID)
        report["documents"] = services.metadata.count_documents(DEFAULT_WORKSPACE_ID)
        _, key = services.apikeys.create(workspace_id=DEFAULT_WORKSPACE_ID, scopes="kb:read")
        queries = [
            json.loads(line)["text"]
            for line in (EVAL_DIR / "scifact" / "queries.jsonl").open(encoding="utf-8")
        ][: args.queries + args.warmup]
        with LiveServer(create_mcp_app(services)) as server:
            latencies = anyio.run(measure, server.url, key, queries, args.warmup)
        report["search_text_ms"] = summary(latencies)
        # The same queries without MCP and HTTP: what the protocol layers add.
        report["in_process_search_ms"] = summary(in_process(services, queries, args.warmup))
    finally:
        services.close()
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print("\ntools/list size (bytes of the JSON result)")
    for row in report["tools_list"]:
        print(
            f"  {row['transport']:5} {row['profile']:4} output schemas {'on ' if row['output_schemas'] else 'off'}"
            f"  {row['tools']:2} tools  {row['bytes']:6} bytes"
        )
    lat = report["search_text_ms"]
    print(
        f"\nsearch_text over streamable HTTP, {report['chunks']} chunks "
        f"({report['documents']} documents, embedder {args.embedder}), {lat['n']} queries:\n"
        f"  p50 {lat['p50']} ms  p95 {lat['p95']} ms  p99 {lat['p99']} ms  mean {lat['mean']} ms"
    )
    base = report["in_process_search_ms"]
    print(
        f"the same searches in process (no MCP, no HTTP):\n"
        f"  p50 {base['p50']} ms  p95 {base['p95']} ms  p99 {base['p99']} ms  mean {base['mean']} ms"
    )


if __name__ == "__main__":
    main()
