"""One small scheduler for the embedded server's background work (bootstrap/background.py
names the jobs): each job has a due time, runs in a thread of its own when due, never twice
at once, and is due again `every` seconds after it ends (or when its work says, or when
woken). A job that raises is logged and recorded on the job, and is due again as usual; the
other jobs never notice. `stop()` tells every running job (through the event its work is
given) and waits for them.

The ingest worker is not a job: it is a queue's consumer (adapters/local/worker.py). On AWS
the same work has other triggers: SQS for ingest, EventBridge Scheduler for sources.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

# A job's work: given the scheduler's stop event (set at shutdown: a long job checks it);
# returns None (due again `every` after it ends) or the seconds until it is due again.
Work = Callable[[threading.Event], float | None]


@dataclass
class Job:
    name: str
    work: Work = field(repr=False)
    every: float | None  # None: runs when first due, then only when woken
    next_at: float | None  # on the scheduler's clock; None: not due until woken
    running: bool = False
    again: bool = False  # woken while running: due again as soon as it ends
    runs: int = 0
    failures: int = 0
    last_error: str | None = None
    last_started: float | None = None
    last_ended: float | None = None


class Scheduler:
    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        """`clock`: the time due times are kept in (tests pass their own and call
        `run_due`, which runs what is due in the caller's thread)."""
        self.clock = clock
        self.jobs: dict[str, Job] = {}
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._changed = threading.Event()
        self._loop: threading.Thread | None = None
        self._threads: dict[str, threading.Thread] = {}

    def add(
        self, name: str, work: Work, *, every: float | None = None, after: float | None = 0.0
    ) -> Job:
        """A job, first due `after` seconds from now (or, with `after` None, when woken)."""
        with self._lock:
            if name in self.jobs:
                raise ValueError(f"a job named {name!r} is scheduled already")
            due = None if after is None else self.clock() + after
            job = self.jobs[name] = Job(name, work, every, due)
        self._changed.set()
        return job

    def wake(self, name: str) -> None:
        """Make the job due now; if it is running, once more as soon as it ends. A name not
        (yet) scheduled is ignored."""
        with self._lock:
            job = self.jobs.get(name)
            if job is None:
                return
            if job.running:
                job.again = True
            else:
                job.next_at = self.clock()
        self._changed.set()

    def due(self) -> list[Job]:
        now = self.clock()
        with self._lock:
            return [
                j
                for j in self.jobs.values()
                if not j.running and j.next_at is not None and j.next_at <= now
            ]

    def run_due(self) -> list[str]:
        """Run every job that is due now, one after another in this thread; their names."""
        ran = []
        for job in self.due():
            if self._claim(job):
                self._run(job)
                ran.append(job.name)
        return ran

    def _claim(self, job: Job) -> bool:
        with self._lock:
            if job.running or self.stopping.is_set():
                return False
            job.running, job.again = True, False
            job.last_started = self.clock()
            return True

    def _run(self, job: Job) -> None:
        """The claimed job's work, once; whatever it raises is its own."""
        wanted: float | None = None
        error: str | None = None
        try:
            wanted = job.work(self.stopping)
        except Exception as exc:
            log.exception("background job %s failed", job.name)
            error = f"{type(exc).__name__}: {exc}"
        with self._lock:
            job.running = False
            job.runs += 1
            job.last_ended = now = self.clock()
            if error is not None:
                job.failures += 1
                job.last_error = error
            if job.again:
                job.next_at = now
            elif wanted is not None:
                job.next_at = now + max(0.0, wanted)
            elif job.every is not None:
                job.next_at = now + job.every
            else:
                job.next_at = None
            self._threads.pop(job.name, None)
        self._changed.set()

    # -- in the background ------------------------------------------------------------------

    def start(self) -> None:
        self._loop = threading.Thread(target=self._serve, name="bunko-scheduler", daemon=True)
        self._loop.start()

    def _serve(self) -> None:
        while True:
            # Cleared before the scan: a wake (or stop) after it is seen by the wait below.
            self._changed.clear()
            if self.stopping.is_set():
                return
            for job in self.due():
                if self._claim(job):
                    thread = threading.Thread(
                        target=self._run, args=(job,), name=f"bunko-{job.name}", daemon=True
                    )
                    with self._lock:
                        self._threads[job.name] = thread
                    thread.start()
            self._changed.wait(timeout=self._wait())

    def _wait(self) -> float:
        """Seconds until the next job is due (at most a minute: the clock is the truth)."""
        with self._lock:
            times = [j.next_at for j in self.jobs.values() if j.next_at is not None]
        if not times:
            return 60.0
        return min(60.0, max(0.0, min(times) - self.clock()))

    def stop(self, timeout: float = 30.0) -> list[str]:
        """Stop starting jobs, tell the running ones, wait up to `timeout` seconds for them;
        the names of those still running then (daemon threads: they end with the process)."""
        self.stopping.set()
        self._changed.set()
        if self._loop is not None:
            self._loop.join(timeout=timeout)
        deadline = time.monotonic() + timeout
        with self._lock:
            threads = list(self._threads.items())
        left = []
        for name, thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                left.append(name)
        if left:
            log.warning("background jobs still running at shutdown: %s", ", ".join(left))
        return left
