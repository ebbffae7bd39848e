"""A dict of row accumulators with a row limit, and fixed-width time windows."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Any

from ..spec.stats import MAX_ROWS

OTHER = "(other)"


class Rows:
    """``key -> accumulator`` made by ``new()``; past ``limit`` distinct keys, new keys share the
    accumulator of ``other_key`` (counted in ``folded``)."""

    def __init__(self, new: Callable[[], Any], other_key: Hashable, limit: int = MAX_ROWS) -> None:
        self.new = new
        self.other_key = other_key
        self.limit = limit
        self.rows: dict[Hashable, Any] = {}
        self.folded = 0

    def get(self, key: Hashable) -> Any:
        row = self.rows.get(key)
        if row is None:
            if len(self.rows) >= self.limit:
                self.folded += 1
                key = self.other_key
                row = self.rows.get(key)
                if row is not None:
                    return row
            row = self.rows[key] = self.new()
        return row

    def items(self) -> Iterator[tuple[Any, Any]]:
        return iter(self.rows.items())

    def __len__(self) -> int:
        return len(self.rows)


class Windows:
    """Bytes per fixed time window, streamed: min / mean / max bytes per second over every window
    from a row's first active window to its last (idle windows in between count as 0 B/s).

    A message that arrives with a time before the open window (capture order is not always time
    order) counts in the open window (for min and max; the mean's span reaches back to it). Window
    numbers may be negative: a row whose frames all come before the capture's first frame in time (a
    clock stepped back, merged captures) has its own rates.
    """

    __slots__ = ("first", "cur", "open", "low", "high", "total")

    def __init__(self) -> None:
        self.first = 0
        self.cur: int | None = None  # the open window; None before the first byte
        self.open = 0.0
        self.low: float | None = None
        self.high = 0.0
        self.total = 0.0

    def add(self, window: int, n: float) -> None:
        self.total += n
        cur = self.cur
        if cur is None:
            self.first = window
        elif window <= cur:
            self.open += n
            if window < self.first:  # the mean is over the whole span
                self.first = window
            return
        else:
            self._close()
            if window > cur + 1:
                self.low = 0.0
        self.cur, self.open = window, n

    def _close(self) -> None:
        b = self.open
        if b > self.high:
            self.high = b
        if self.low is None or b < self.low:
            self.low = b

    def rates(self, interval: float) -> tuple[float, float, float]:
        """(min, mean, max) bytes per second."""
        if self.cur is None:
            return 0.0, 0.0, 0.0
        b = self.open
        low = b if self.low is None else min(self.low, b)
        high = max(self.high, b)
        n = self.cur - self.first + 1
        return low / interval, self.total / (n * interval), high / interval


