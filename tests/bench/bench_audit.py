"""What the audit trail costs on the embedded default (docs/audit.md).

    .venv/bin/python -m tests.bench.bench_audit [--requests 200] [--events 10000]

1. Latency: one server's services behind two apps on two ports, the same app but for the
   audit trail (`create_app` on `services`, and on a copy of them with `audit=None`), each
   served by uvicorn on loopback. A signed-in user sends `PUT /user-settings` (a write that
   changes a row), alternating between the two apps, `--requests` times each, over kept-alive
   connections. Prints p50 and p90 of each, the p50 difference (the added latency), and the
   median of the gaps between each request with the trail and the one without sent beside it.
2. Size: `--events` events like a busy library's (a user, a key and its maker, a library, a
   file id, an address, a route template) appended to a fresh SQLite database through the
   store; prints the database's growth in bytes, and per 10,000 events.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path


def latency(requests: int, data_dir: Path) -> dict:
    import httpx

    from bunko.server_app import create_app
    from tests.e2e.live_server import LiveServer
    from tests.e2e.rest_harness import serve

    with serve(data_dir) as rest:
        off = dataclasses.replace(rest.services, audit=None)
        admin = rest.admin()
        with LiveServer(create_app(off)) as quiet:
            clients = {
                "on": httpx.Client(base_url=rest.url, headers=admin.client.headers),
                "off": httpx.Client(base_url=quiet.url, headers=admin.client.headers),
            }
            times: dict[str, list[float]] = {"on": [], "off": []}
            pairs: list[float] = []
            for i in range(requests + 20):  # the first 20 of each warm up
                for name in ("on", "off") if i % 2 else ("off", "on"):
                    body = {"topK": 5 + i % 5}
                    started = time.perf_counter()
                    response = clients[name].put("/user-settings", json=body)
                    elapsed = time.perf_counter() - started
                    assert response.status_code == 200, response.text
                    if i >= 20:
                        times[name].append(elapsed * 1000)
                if i >= 20:
                    pairs.append(times["on"][-1] - times["off"][-1])
    result = {}
    for name, values in times.items():
        values.sort()
        result[name] = {
            "p50_ms": round(statistics.median(values), 3),
            "p90_ms": round(values[int(len(values) * 0.9)], 3),
            "n": len(values),
        }
    result["added_p50_ms"] = round(result["on"]["p50_ms"] - result["off"]["p50_ms"], 3)
    # each "on" request beside the "off" one sent next to it: the median of the pairs' gaps
    result["paired_median_ms"] = round(statistics.median(pairs), 3)
    return result


def size(events: int, data_dir: Path) -> dict:
    from bunko.adapters.local.sqlite.audit import SqliteAuditStore
    from bunko.adapters.local.sqlite.db import SqliteDatabase
    from bunko.domain.audit import AuditEvent

    db = SqliteDatabase(data_dir / "bunko.db")
    store = SqliteAuditStore(db, retention_days=365)

    def used() -> int:
        conn = db.connect()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        return (pages - free) * conn.execute("PRAGMA page_size").fetchone()[0]

    start = used()
    people = [str(uuid.uuid4()) for _ in range(20)]
    libraries = [str(uuid.uuid4()) for _ in range(5)]
    actions = ["POST /upload", "DELETE /knowledge-bases/{file_id}", "sign_in",
               "PUT /knowledge-bases/{file_id}/metadata", "mcp:add_item_text"]  # fmt: skip
    rng = random.Random(7)
    for _ in range(events):
        action = rng.choice(actions)
        keyed = action.startswith("mcp:")
        store.append(
            AuditEvent(
                action=action,
                outcome="ok",
                status=200,
                user_id=None if keyed else rng.choice(people),
                api_key_id=str(uuid.uuid4()) if keyed else None,
                key_maker=rng.choice(people) if keyed else None,
                library_id=rng.choice(libraries),
                object_kind="file" if "file_id" in action else None,
                object_id=str(uuid.uuid4()) if "file_id" in action else None,
                client=f"192.0.2.{rng.randint(1, 254)}",
                door="mcp" if keyed else "rest",
            )
        )
    grown = used() - start
    db.close()
    return {"events": events, "bytes": grown, "bytes_per_10000": round(grown * 10000 / events)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--events", type=int, default=10000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print({"latency": latency(args.requests, Path(tmp) / "serve")})
        print({"size": size(args.events, Path(tmp) / "size")})


if __name__ == "__main__":
    main()
