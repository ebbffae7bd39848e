"""Room for the recursive walkers (JSON form, text notation) on values nested up to the
decoder's depth limit: Python's default limit of 1000 frames is below Godot's 1024 levels."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: enough frames for a few frames per level at the engine's 1024-level limit
DEEP_LIMIT = 12000


@contextmanager
def deep_recursion(limit: int = DEEP_LIMIT) -> Iterator[None]:
    old = sys.getrecursionlimit()
    if old < limit:
        sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        if old < limit:
            sys.setrecursionlimit(old)
