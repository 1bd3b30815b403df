"""A local index killed mid-write (SIGKILL) reopens agreeing with what was committed."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from bunko.adapters.local.engine import LocalSearchIndex
from bunko.ports import SearchFilter

WS = "ws-crash"
BATCH = 20

# Snapshots every 60 entries and graph adds every 32 rows, so the kill lands in any phase:
# a SQLite commit, a graph add, a snapshot being written.
WRITER = textwrap.dedent(
    f"""
    import sys
    import numpy as np
    from bunko.adapters.local.engine import EngineTuning, LocalSearchIndex
    from bunko.ports import IndexEntry

    tuning = EngineTuning(save_rows=60, pending_max=32, exact_max=8)
    index = LocalSearchIndex(sys.argv[1], dimension=8, tuning=tuning)
    rng = np.random.default_rng(0)
    for batch in range(10_000):
        vectors = rng.standard_normal(({BATCH}, 8))
        index.index([
            IndexEntry(f"c{{batch}}-{{i}}", f"d{{batch}}", "{WS}", 1, f"word{{batch}} common", None, v)
            for i, v in enumerate(vectors)
        ])
        if batch % 7 == 3:
            index.delete_chunks("{WS}", [f"c{{batch - 1}}-0"])
        print(batch, flush=True)
    """
)


@pytest.mark.parametrize("batches", [3, 11, 40])
def test_a_write_killed_midway_reopens_with_every_committed_chunk(tmp_path: Path, batches: int):
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": ":".join(sys.path)},
    )
    assert writer.stdout is not None
    for _ in range(batches):
        done = int(writer.stdout.readline())
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    # Lines the writer printed before it died are still in the pipe.
    done = max([done, *map(int, writer.stdout.read().split())])

    index = LocalSearchIndex(tmp_path, dimension=8)
    every = SearchFilter(workspace_id=WS)
    keyword = {h.chunk_id for h in index.keyword_search("common", every, 100_000)}
    vectors = {h.chunk_id for h in index.vector_search(np.ones(8), every, 100_000)}
    # Each call is there whole or not at all: the batch being written when the kill came,
    # and the delete that follows it.
    assert keyword in states_after(done)
    assert vectors == keyword
    assert index.count(WS) == len(keyword)
    newest = {h.chunk_id for h in index.keyword_search(f"word{done}", every, 100)}
    assert newest == {f"c{done}-{i}" for i in range(BATCH)} & keyword
    index.close()


def states_after(done: int) -> list[set[str]]:
    """What the index may hold once batch `done` was reported written."""
    chunks: set[str] = set()
    for batch in range(done + 1):
        chunks |= {f"c{batch}-{i}" for i in range(BATCH)}
        if batch % 7 == 3:
            chunks.discard(f"c{batch - 1}-0")
    written = chunks | {f"c{done + 1}-{i}" for i in range(BATCH)}
    states = [chunks, written]
    if (done + 1) % 7 == 3:
        states.append(written - {f"c{done}-0"})
    return states
