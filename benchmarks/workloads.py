"""The codec benchmark workloads (issue: four workloads, same bytes for us and the engine)."""

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
