"""The embedded server's one scheduler (bunko/scheduler.py): due times on an injected clock,
one run of a job at a time, a failing job recorded and the others untouched, wakes, and a
clean shutdown that tells running jobs to stop."""

from __future__ import annotations

import threading

from bunko.scheduler import Scheduler


class Clock:
    def __init__(self) -> None:
        self.at = 1000.0

    def __call__(self) -> float:
        return self.at


def test_jobs_run_when_due_and_again_every_period():
    clock = Clock()
    s = Scheduler(clock=clock)
    ran: list[str] = []
    s.add("often", lambda stop: ran.append("often"), every=10)
    s.add("later", lambda stop: ran.append("later"), every=100, after=50)
    s.add("once", lambda stop: ran.append("once"))
    s.add("woken", lambda stop: ran.append("woken"), after=None)
    assert s.run_due() == ["often", "once"]
    assert s.run_due() == []  # nothing is due twice at one time
    clock.at += 10
    assert s.run_due() == ["often"]
    clock.at += 40
    assert sorted(s.run_due()) == ["later", "often"]
    assert s.jobs["once"].next_at is None and s.jobs["woken"].next_at is None
    s.wake("woken")
    s.wake("nobody")  # not scheduled: ignored
    assert s.run_due() == ["woken"]
    assert ran.count("once") == 1 and ran.count("woken") == 1


def test_a_job_may_say_when_it_is_due_again():
    clock = Clock()
    s = Scheduler(clock=clock)
    s.add("sources", lambda stop: 7.0, every=60)
    s.run_due()
    assert s.jobs["sources"].next_at == clock.at + 7


def test_a_failing_job_is_recorded_and_never_stops_the_others(caplog):
    clock = Clock()
    s = Scheduler(clock=clock)
    ran: list[str] = []

    def broken(stop):
        raise RuntimeError("the place is down")

    s.add("a-broken", broken, every=10)
    s.add("b-fine", lambda stop: ran.append("fine"), every=10)
    for _ in range(3):
        assert s.run_due() == ["a-broken", "b-fine"]
        clock.at += 10
    job = s.jobs["a-broken"]
    assert (job.runs, job.failures, job.last_error) == (3, 3, "RuntimeError: the place is down")
    assert job.next_at == clock.at  # due again as usual
    assert ran == ["fine"] * 3 and s.jobs["b-fine"].failures == 0
    assert "background job a-broken failed" in caplog.text


def test_a_job_never_runs_twice_at_once_and_a_wake_meanwhile_runs_it_once_more():
    s = Scheduler()
    inside = threading.Semaphore(0)
    release = threading.Event()
    running, most, runs = [0], [0], [0]
    lock = threading.Lock()

    def slow(stop):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        inside.release()
        release.wait(timeout=60)
        with lock:
            running[0] -= 1
            runs[0] += 1

    s.add("slow", slow, after=None)
    s.start()
    try:
        s.wake("slow")
        assert inside.acquire(timeout=60)  # running now
        for _ in range(20):
            s.wake("slow")
        assert s.run_due() == []  # the caller's thread may not start it either
        release.set()
        assert inside.acquire(timeout=60)  # the one more run the wakes asked for
    finally:
        assert s.stop(timeout=60) == []
    assert most[0] == 1 and runs[0] == 2


def test_stop_tells_running_jobs_and_waits_for_them():
    s = Scheduler()
    started, ended = threading.Event(), threading.Event()

    def long(stop):
        started.set()
        stop.wait(timeout=60)  # a long job checks the scheduler's stop
        ended.set()

    s.add("long", long)
    s.add("never", lambda stop: None, after=3600)
    s.start()
    assert started.wait(timeout=60)
    assert s.stop(timeout=60) == []
    assert ended.is_set() and s.jobs["never"].runs == 0
    assert not any(t.name == "bunko-scheduler" for t in threading.enumerate())
    assert s.run_due() == []  # stopped: nothing more runs
