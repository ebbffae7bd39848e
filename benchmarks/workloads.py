"""The codec benchmark workloads (same bytes for us and the engine).

``workloads()``: one big value each, decoded/encoded in one call. ``message_workloads()``: many small
values, each its own message, decoded/encoded one by one (the shape of game traffic).
"""

from __future__ import annotations

import random
from typing import Any

from godot_dissect import values as V


def workloads() -> dict[str, Any]:
    rnd = random.Random(42)
    return {
        "packed_float32_1m": V.PackedFloat32Array(rnd.random() for _ in range(1_000_000)),
        "array_int_100k": [rnd.randrange(-(2**31), 2**31) for _ in range(100_000)],
        "state_dicts_20k": [
            {"id": i, "name": f"player{i}", "pos": V.Vector3(rnd.random(), rnd.random(), rnd.random()),
             "hp": rnd.random(), "tags": ["alive", "team" + str(i % 4)]}
            for i in range(20_000)
        ],
        "packed_string_100k": V.PackedStringArray(f"item-{i}-{rnd.random():.6f}" for i in range(100_000)),
    }


def message_workloads() -> dict[str, list[Any]]:
    rnd = random.Random(43)
    return {
        # 88 bytes each in Godot 3 (floats on a 1/64 grid: float32 on the wire), 25 in msgpack
        "small_dicts_100k": [
            {"id": rnd.randrange(1 << 20), "x": rnd.randrange(-8192, 8192) / 64, "y": rnd.randrange(-8192, 8192) / 64,
             "hp": rnd.randrange(101)}
            for _ in range(100_000)
        ],
    }
