"""How much this process's resident memory grows while a block runs: sampled every few
milliseconds from /proc/self/statm, with the kernel's own peak as a second witness. The
block starts by resetting that peak (`clear_refs` 5, Linux), so it counts from the block and
not from whatever an earlier test in the same xdist worker grew to; where the reset is
refused, the lifetime peak (`ru_maxrss`) stands in and can only under-count. The larger of
the two witnesses is taken. Do what costs memory for other reasons (registering a user:
argon2 takes 64 MB) before the block."""

from __future__ import annotations

import gc
import os
import resource
import threading

MB = 1024 * 1024
_PAGE = os.sysconf("SC_PAGE_SIZE")


def resident() -> int:
    """Bytes resident now (Linux), or 0 where /proc is missing."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except OSError:
        return 0


def peak() -> int:
    """The process's highest resident size since the last `reset_peak`, in bytes."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def reset_peak() -> None:
    """Start the kernel's high-water mark again from what is resident now, where allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
    except OSError:
        pass


class RssGrowth:
    """`with RssGrowth() as rss: ...`, then `rss.growth`: bytes above the start."""

    def __init__(self, interval: float = 0.002) -> None:
        self.interval = interval
        self.growth = 0
        self._stop = threading.Event()

    def __enter__(self) -> RssGrowth:
        gc.collect()
        reset_peak()
        self.before, self.peak_before = resident(), peak()
        self.highest = self.before
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.highest = max(self.highest, resident())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.highest = max(self.highest, resident())
        self.growth = max(self.highest - self.before, peak() - self.peak_before)
