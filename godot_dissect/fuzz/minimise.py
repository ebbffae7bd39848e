"""Shrink a reproducer while it still kills the target: depth, counts, lengths, bytes.

Steps, each a binary search that keeps only candidates that still kill a fresh target:

1. the recipe's numbers (``depth`` of a nesting recipe: the payload is rebuilt with fewer levels);
2. the longest run of a repeated unit in the bytes (nesting that came from elsewhere);
3. a conversation's other messages (all, then halves);
4. counts and lengths (field map) towards 0;
5. trailing bytes.

``kills(case) -> bool`` runs the target; the budget bounds the number of runs and the time. The
result is checked twice more at the end; if it turns out flaky, the next bigger candidate that
killed is taken.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..spec.dialects import Dialect, get_dialect
from .cases import Case
from .fields import COUNT, LENGTH, field_map
from .generate import nest, nest_levels

Kills = Callable[[Case], bool]


class _Budget(Exception):
    pass


@dataclass
class MinimiseResult:
    case: Case
    original_size: int
    runs: int = 0
    steps: list[str] = field(default_factory=list)
    seconds: float = 0.0
    verified: bool = False

    def to_json(self) -> dict:
        return {"from_size": self.original_size, "to_size": len(self.case.payload), "runs": self.runs,
                "steps": self.steps, "seconds": round(self.seconds, 2), "verified": self.verified,
                "recipe": self.case.recipe}


class Minimiser:
    def __init__(self, dialect: Dialect | str, kills: Kills, budget: int = 80, seconds: float = 120.0,
                 log: Callable[[str], None] | None = None) -> None:
        self.d = get_dialect(dialect)
        self._kills = kills
        self.budget = budget
        self.deadline = time.monotonic() + seconds
        self.runs = 0
        self.log = log or (lambda s: None)
        self.killers: list[Case] = []  # every candidate that killed, for the final check

    def kills(self, c: Case) -> bool:
        if self.runs >= self.budget or time.monotonic() > self.deadline:
            raise _Budget
        self.runs += 1
        k = self._kills(c)
        if k:
            self.killers.append(c)
        return k

    def _bisect(self, lo: int, hi: int, make: Callable[[int], Case]) -> tuple[int, Case | None]:
        """Smallest n in (lo, hi] whose case kills, assuming ``make(hi)`` kills and ``make(lo)`` does not."""
        best: Case | None = None
        while hi - lo > 1:
            mid = (lo + hi) // 2
            c = make(mid)
            if self.kills(c):
                hi, best = mid, c
            else:
                lo = mid
        return hi, best

    def run(self, case: Case) -> MinimiseResult:
        started = time.monotonic()
        res = MinimiseResult(case, len(case.payload))
        cur = case
        try:
            cur = self._recipe(cur, res)
            if cur is case:  # no recipe to follow: work on the bytes
                cur = self._runs(cur, res)
                cur = self._conversation(cur, res)
                cur = self._fields(cur, res)
                cur = self._tail(cur, res)
        except _Budget:
            res.steps.append("budget exhausted")
        res.case = cur
        res.runs = self.runs
        # final check: the smallest killer that kills twice more (a border case can be flaky)
        candidates = sorted({id(c): c for c in [cur, *self.killers, case]}.values(), key=lambda c: len(c.payload))
        candidates = [c for c in candidates if c is cur or len(c.payload) > len(cur.payload)]
        for cand in candidates[:6]:
            ok = True
            for _ in range(2):
                self.runs += 1
                if not self._kills(cand):
                    ok = False
                    break
            if ok:
                if cand is not cur:
                    res.steps.append(f"result was flaky; took the {len(cand.payload)}-byte candidate")
                res.case, res.verified = cand, True
                break
        res.runs = self.runs
        res.seconds = time.monotonic() - started
        return res

    # -- steps -----------------------------------------------------------------------------------------
    def _recipe(self, c: Case, res: MinimiseResult) -> Case:
        r = c.recipe or {}
        if "nest" in r and "depth" in r:
            shape, depth = r["nest"], int(r["depth"])

            def make(n: int) -> Case:
                data = nest(self.d, shape, n)
                assert data is not None
                return c.with_payload(data, recipe={"nest": shape, "depth": n},
                                      name=f"{shape} nested {nest_levels(shape, n)} levels")
            n, best = self._bisect(0, depth, make)
            if best is not None:
                a, b = nest_levels(shape, depth), nest_levels(shape, n)
                res.steps.append(f"{shape} nesting {a} -> {b} levels")
                self.log(f"  minimise: {shape} nesting {a} -> {b} levels")
                # the border itself can be flaky (stack layout): keep a 5% margin when it still kills
                m = min(depth, n + max(1, n // 20))
                if m > n:
                    c2 = make(m)
                    if self.kills(c2):
                        res.steps.append(f"{nest_levels(shape, m)} levels kept (5% margin)")
                        return c2
                return best
        return c

    def _runs(self, c: Case, res: MinimiseResult) -> Case:
        data = c.payload
        best_run = None  # (saved bytes, start, unit, count)
        for unit in range(4, 68, 4):
            i = 0
            limit = len(data) - 2 * unit
            while i <= limit:
                if data[i:i + unit] == data[i + unit:i + 2 * unit]:
                    j = i + unit
                    while data[j:j + unit] == data[i:i + unit]:
                        j += unit
                    count = (j - i) // unit
                    if count >= 8 and (best_run is None or (count - 1) * unit > best_run[0]):
                        best_run = ((count - 1) * unit, i, unit, count)
                    i = j
                else:
                    i += 4
            if best_run is not None and best_run[3] > 1000:
                break
        if best_run is None:
            return c
        _, start, unit, count = best_run
        chunk = data[start:start + unit]

        def make(n: int) -> Case:
            return c.with_payload(data[:start] + chunk * n + data[start + unit * count:], recipe=None)
        n, best = self._bisect(0, count, make)
        if best is not None:
            res.steps.append(f"{count} repeats of a {unit}-byte unit -> {n}")
            self.log(f"  minimise: {count} repeats of a {unit}-byte unit -> {n}")
            return best
        return c

    def _conversation(self, c: Case, res: MinimiseResult) -> Case:
        if not c.before and not c.after:
            return c
        alone = c.with_payload(c.payload, before=(), after=())
        if self.kills(alone):
            res.steps.append(f"dropped the {len(c.before) + len(c.after)} other messages")
            return alone
        if c.after:
            t = c.with_payload(c.payload, after=())
            if self.kills(t):
                res.steps.append(f"dropped the {len(c.after)} messages after")
                c = t
        return c

    def _fields(self, c: Case, res: MinimiseResult) -> Case:
        fm = field_map(c.payload, self.d, limit=5000)
        vals = [(int.from_bytes(c.payload[f.offset:f.offset + 4], "little"), f) for f in fm.by_role(COUNT, LENGTH)]
        vals = sorted(((v, f) for v, f in vals if v > 4), key=lambda x: -x[0])[:6]
        for v, f in vals:
            for cand in (0, 1, v >> 16, v >> 8, v >> 4, v >> 1):
                if cand >= v:
                    continue
                buf = bytearray(c.payload)
                if f.offset + 4 > len(buf):
                    break
                buf[f.offset:f.offset + 4] = cand.to_bytes(4, "little")
                t = c.with_payload(bytes(buf), recipe=None)
                if self.kills(t):
                    res.steps.append(f"{f.role} @{f.offset}: {v:#x} -> {cand:#x}")
                    c = t
                    break
        return c

    def _tail(self, c: Case, res: MinimiseResult) -> Case:
        n = len(c.payload)
        if n <= 4:
            return c
        data = c.payload

        def make(k: int) -> Case:
            return c.with_payload(data[:k * 4], recipe=None)
        k, best = self._bisect(0, (n + 3) // 4, make)
        if best is not None and len(best.payload) < n:
            res.steps.append(f"{n} -> {len(best.payload)} bytes")
            return best
        return c
