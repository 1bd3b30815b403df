"""Bounded, self-stopping load (issue 13, point 5) against a real `bunko serve` on loopback:
several users upload, search, replace and delete in parallel for a fixed number of requests.
No 5xx, no error in the server's log, every file ends `completed`, each user's list is what
that user's own requests left, the index holds exactly metadata's chunks, and the server's
peak memory stays bounded. The figures go to stdout (`-s`) for the closing note.

BUNKO_LOAD_USERS and BUNKO_LOAD_REQUESTS (per user) scale it; defaults: 4 × 25."""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.conftest import make_services
from tests.e2e.cli_harness import BUNKO
from tests.waiting import free_port

pytestmark = pytest.mark.slow  # a load test

USERS = int(os.environ.get("BUNKO_LOAD_USERS", "4"))
REQUESTS = int(os.environ.get("BUNKO_LOAD_REQUESTS", "25"))
THREADS_PER_USER = 2
PEAK_RSS_LIMIT_MIB = 1024
WORDS = [
    "harbour",
    "lantern",
    "granite",
    "meadow",
    "thistle",
    "copper",
    "willow",
    "saffron",
    "otter",
    "heron",
]
ACCEPT = {"Accept": "application/json, text/event-stream"}


class Load:
    def __init__(self, url: str, token: str, seed: int) -> None:
        self.client = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120
        )
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.files: dict[str, str] = {}  # id → the word its latest text holds
        self.latencies: list[float] = []
        self.statuses: list[int] = []

    def _timed(self, method: str, path: str, **kwargs) -> httpx.Response:
        started = time.perf_counter()
        response = self.client.request(method, path, **kwargs)
        with self.lock:
            self.latencies.append(time.perf_counter() - started)
            self.statuses.append(response.status_code)
        return response

    def step(self, n: int) -> None:
        with self.lock:
            owned = list(self.files)
            roll = self.random.random()
            word = self.random.choice(WORDS)
        text = f"Note {n} about the {word}. " * 40
        if roll < 0.4 or not owned:
            name = f"note-{n % 5}.txt"  # same names on purpose: each is a distinct file
            response = self._timed(
                "POST", "/upload", files={"file": (name, text.encode(), "text/plain")}
            )
            if response.status_code == 201:
                with self.lock:
                    self.files[response.json()["id"]] = word
        elif roll < 0.7:
            self._timed("POST", "/mcp", headers=ACCEPT, json={
                "jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "search_text", "arguments": {"content": word}},
            })  # fmt: skip
        elif roll < 0.85:
            target = self.random.choice(owned)
            response = self._timed(
                "POST", "/upload", data={"replaceId": target},
                files={"file": ("v.txt", text.encode(), "text/plain")},
            )  # fmt: skip
            if response.status_code == 201:
                with self.lock:
                    if target in self.files:  # not deleted by another thread meanwhile
                        self.files[target] = word
        else:
            target = self.random.choice(owned)
            with self.lock:  # claimed before the call: no other thread replaces it meanwhile
                if self.files.pop(target, None) is None:
                    return
            self._timed("DELETE", f"/knowledge-bases/{target}")


def _serve(data: Path, log: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "BUNKO_DATA_DIR": str(data), "BUNKO_EMBEDDER": "none",
           "BUNKO_JWT_SECRET": "load-" + "s" * 40, "BUNKO_SIGNUP": "open"}  # fmt: skip
    server = subprocess.Popen(
        [*BUNKO, "serve", "--port", str(port), "--mcp-port", str(free_port()), "--no-watch"],
        env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
            return server
        except httpx.TransportError:
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline
            time.sleep(0.2)


def _peak_rss_mib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return 0


def _register(url: str, n: int) -> str:
    with httpx.Client(base_url=url, timeout=60) as client:
        credentials = {"username": f"load-user-{n}", "password": "correct horse battery"}
        assert client.post("/auth/register", json=credentials).status_code == 201
        return client.post("/auth/login", json=credentials).json()["access_token"]


def test_bounded_mixed_load_from_several_users(tmp_path):
    data, log, port = tmp_path / "data", tmp_path / "serve.log", free_port()
    server = _serve(data, log, port)
    url = f"http://127.0.0.1:{port}"
    try:
        loads = [Load(url, _register(url, n), seed=n) for n in range(USERS)]
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=USERS * THREADS_PER_USER) as pool:
            list(pool.map(lambda job: job[0].step(job[1]),
                          [(load, n) for n in range(REQUESTS) for load in loads]))  # fmt: skip
        elapsed = time.perf_counter() - started
        for load in loads:  # wait until every file is indexed
            deadline = time.monotonic() + 300
            while True:
                listed = load.client.get("/knowledge-bases").json()
                if all(f["status"] in ("completed", "failed") for f in listed):
                    break
                assert time.monotonic() < deadline, listed
                time.sleep(0.2)
            assert {f["id"] for f in listed} == set(load.files)
            assert all(f["status"] == "completed" for f in listed), listed
        peak = _peak_rss_mib(server.pid)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    statuses = [s for load in loads for s in load.statuses]
    latencies = sorted(x for load in loads for x in load.latencies)
    assert all(s < 500 for s in statuses), statuses
    text = log.read_text()
    assert "Traceback" not in text and " ERROR " not in text, text[-3000:]
    services = make_services(data, embedder="none")
    try:
        assert services.index.count() == services.metadata.count_chunks()
    finally:
        services.close()
    assert peak < PEAK_RSS_LIMIT_MIB
    figures = {
        "users": USERS, "requests": len(statuses), "concurrency": USERS * THREADS_PER_USER,
        "seconds": round(elapsed, 1),
        "p50_ms": round(statistics.median(latencies) * 1000, 1),
        "p95_ms": round(latencies[int(len(latencies) * 0.95) - 1] * 1000, 1),
        "errors_5xx": sum(s >= 500 for s in statuses),
        "other_statuses": sorted({s for s in statuses if s not in (200, 201)}),
        "peak_rss_mib": peak,
    }  # fmt: skip
    print("\nload figures:", json.dumps(figures))
