"""Shared by the scapy tests: the differences between the core reader's messages and scapy's."""

from __future__ import annotations


def diff_messages(core: dict, ours: dict, width: int = 150) -> list[str]:
    """Per flow key: a count mismatch, and the first message that differs (each shown up to ``width``)."""
    problems = []
    for key in sorted(set(core) | set(ours)):
        a, b = core.get(key, []), ours.get(key, [])
        if len(a) != len(b):
            problems.append(f"{key}: core reader {len(a)} messages, scapy {len(b)}")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                problems.append(f"{key} #{i}: core {str(x)[:width]} / scapy {str(y)[:width]}")
                break
    return problems
