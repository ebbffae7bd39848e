"""What every benchmark here reports: medians of interleaved rounds with their min-max, and whether
Python's garbage collector ran while a measured side was being timed (it stays on: its cost is part
of the figure; what the code does about it is to create fewer tracked objects)."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Samples:
    """One side's timings (seconds) over the rounds, and the collections that ran inside them."""

    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # this process's CPU time over the same calls
    gc_runs: list[int] = field(default_factory=lambda: [0, 0, 0])  # by generation

    def add(self, t: float) -> None:
        self.times.append(t)

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu) if self.cpu else float("nan")

    def span(self, scale: float = 1e3, digits: int = 2) -> str:
        """``median (min-max)`` in ms by default."""
        if not self.times:
            return "n/a"
        return (f"{self.median * scale:.{digits}f} ({min(self.times) * scale:.{digits}f}"
                f"-{max(self.times) * scale:.{digits}f})")

    def gc_note(self) -> str:
        """The collections per generation that ran inside the timed regions, e.g. ``0/0/0``."""
        return "/".join(str(n) for n in self.gc_runs)

    def as_dict(self) -> dict[str, Any]:
        return {"median_s": self.median, "min_s": min(self.times, default=float("nan")),
                "max_s": max(self.times, default=float("nan")), "times_s": self.times, "cpu_s": self.cpu,
                "gc_runs": self.gc_runs}


class _GcWatch:
    """Counts collections (by generation) while armed."""

    def __init__(self) -> None:
        self.target: Samples | None = None
        gc.callbacks.append(self._cb)

    def _cb(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start" and self.target is not None:
            self.target.gc_runs[info["generation"]] += 1


_WATCH = _GcWatch()


def timed(fn: Callable[[], Any], into: Samples) -> None:
    """Time one call of ``fn`` into ``into``, counting the collections that ran during it. The
    result is released after the clock stops (the engine's side frees its previous result before
    its clock starts too): what is timed is making the value, not freeing it."""
    _WATCH.target = into
    c0 = time.process_time()
    t0 = time.perf_counter()
    r = fn()
    t = time.perf_counter() - t0
    c = time.process_time() - c0
    _WATCH.target = None
    into.add(t)
    into.cpu.append(c)
    del r


def ratio(slow: Samples, fast: Samples) -> float:
    """How many times faster ``fast`` is than ``slow``, by medians."""
    return slow.median / fast.median
