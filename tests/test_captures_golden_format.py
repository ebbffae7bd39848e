"""Sanity of the committed real-engine captures (captures/, made by tools/captures/make_captures.py).

Only the files' shape is checked here: every capture has its pcapng and golden, every golden line
parses and carries what a reader test needs. Comparing a reader's output with the goldens is the
readers' tests' job.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

CAPTURES = Path(__file__).resolve().parents[1] / "captures"
MANIFEST = CAPTURES / "manifest.json"
PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"
FLOW = re.compile(r"^(udp|tcp) 127\.0\.0\.1:(\d+) -> 127\.0\.0\.1:(\d+)$")
HEX = re.compile(r"^(?:[0-9a-f]{2})*$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _manifest() -> dict:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def _names() -> list[str]:
    return sorted(_manifest()) if MANIFEST.exists() else []


def _golden(name: str) -> list[dict]:
    lines = (CAPTURES / f"{name}.golden.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(ln) for ln in lines]


def test_manifest_lists_every_pcap():
    assert MANIFEST.exists(), "captures/manifest.json is missing (run tools/captures/make_captures.py)"
    pcaps = {p.name[: -len(".pcapng")] for p in CAPTURES.glob("*.pcapng")}
    assert pcaps == set(_manifest()), "every captures/*.pcapng needs a manifest entry, and the reverse"
    for name in _names():
        assert (CAPTURES / f"{name}.golden.jsonl").exists(), name
    assert {"godot3-udp-all-types", "godot3-tcp-stream", "godot3-debugger"} <= set(_names())


# the Godot 3 goldens' shape; the godot4-* captures carry their own keys (captures/README.md)
@pytest.mark.parametrize("name", [n for n in _names() if n.startswith("godot3-")])
def test_pcapng_and_manifest_entry(name):
    entry = _manifest()[name]
    data = (CAPTURES / entry["pcap"]).read_bytes()
    assert data[:4] == PCAPNG_MAGIC
    assert len(data) == entry["pcap_bytes"]
    assert len(data) < 1_000_000, "keep committed captures small"
    assert entry["golden"] == f"{name}.golden.jsonl"
    assert entry["description"] and entry["engine"].startswith("godot3-server 3.2.3")


# one Variant per line; the *-multiplayer goldens (one multiplayer packet per line) are checked in
# tests/test_captures_multiplayer_golden.py, godot3-enet-compressed in tests/test_enet_compressed.py
@pytest.mark.parametrize("name", [n for n in _names() if n.startswith("godot3-") and "multiplayer" not in n
                                  and n != "godot3-enet-compressed"])
def test_golden_lines(name):
    recs = _golden(name)
    entry = _manifest()[name]
    assert len(recs) == entry["messages"] > 0
    assert [r["seq"] for r in recs] == list(range(len(recs)))
    per_flow: dict[str, list[int]] = {}
    for r in recs:
        m = FLOW.match(r["flow"])
        assert m, r["flow"]
        per_flow.setdefault(r["flow"], []).append(r["index"])
        assert isinstance(r["type"], int) and 0 <= r["type"] < 27  # Godot 3 Variant::Type
        assert isinstance(r["type_name"], str)
        if "hex" in r:
            assert HEX.match(r["hex"]) and len(r["hex"]) >= 8 and len(r["hex"]) % 8 == 0, r
            assert int(r["hex"][:2], 16) == r["type"], "the header's low byte is the type id"
            assert isinstance(r["text"], str)
        else:  # a large value: digests printed by the engine
            assert r["size"] > 4096 and SHA256.match(r["hex_sha256"]) and SHA256.match(r["text_sha256"])
            assert isinstance(r["text_head"], str) and r["text_size"] >= len(r["text_head"])
        for k in ("sender_hex", "recv_hex"):
            if k in r:
                assert HEX.match(r[k]) and len(r[k]) == len(r["hex"]) or r["type"] == 17, (k, r)
    for flow, idx in per_flow.items():
        assert sorted(idx) == list(range(len(idx))), flow
    assert sorted(f["flow"] for f in entry["flows"]) == sorted(per_flow)


@pytest.mark.parametrize("name", [n for n in _names() if "debugger" in n])
def test_debugger_golden_groups_messages(name):
    recs = _golden(name)
    game = [r for r in recs if r["direction"] == "game->editor"]
    editor = [r for r in recs if r["direction"] == "editor->game"]
    assert game and editor
    assert all(r["part"] == "command" and r["type"] == 19 for r in editor)
    # game->editor: name String, argc int, then argc argument PDUs, message after message.
    i = 0
    while i < len(game):
        head, count = game[i], game[i + 1]
        assert head["part"] == "name" and head["type"] == 4, head
        assert count["part"] == "argc" and count["type"] == 2, count
        n = int(count["text"])
        args = game[i + 2:i + 2 + n]
        assert [a["arg"] for a in args] == list(range(n))
        assert {a["message_index"] for a in [head, count, *args]} == {head["message_index"]}
        i += 2 + n
    stdout = CAPTURES / f"{name}.game-stdout.txt"
    assert stdout.exists()
