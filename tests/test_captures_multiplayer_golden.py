"""The Godot 3.2.3 multiplayer captures (tools/captures/make_multiplayer_captures.py): golden shape,
and every golden line's bytes against the pcap read by tshark (no godot_dissect code involved).

Decoding them is the multiplayer reader's tests' job; this only keeps the committed files consistent.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import struct
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "captures"
MANIFEST = json.loads((CAPTURES / "manifest.json").read_text(encoding="utf-8"))
NAMES = sorted(n for n in MANIFEST if n.startswith("godot3-") and n.endswith("-multiplayer"))
FLOW = re.compile(r"^(udp|websocket) 127\.0\.0\.1:(\d+) -> 127\.0\.0\.1:(\d+)$")
COMMANDS = {"REMOTE_CALL", "REMOTE_SET", "SIMPLIFY_PATH", "CONFIRM_PATH", "RAW",
            "ADD_PEER", "REMOVE_PEER", "SYS_ID", "SYS_ADD", "SYS_DEL"}


def golden(name: str) -> list[dict]:
    return [json.loads(ln) for ln in (CAPTURES / MANIFEST[name]["golden"]).read_text(encoding="utf-8").splitlines()]


def packet(r: dict) -> bytes | None:
    return bytes.fromhex(r["hex"]) if "hex" in r else None


def test_both_captures_exist():
    assert NAMES == ["godot3-enet-multiplayer", "godot3-websocket-multiplayer"]


@pytest.mark.parametrize("name", NAMES)
def test_golden_shape(name):
    recs = golden(name)
    entry = MANIFEST[name]
    assert len(recs) == entry["messages"]
    assert [r["seq"] for r in recs] == list(range(len(recs)))
    per_flow: dict[str, list[int]] = {}
    for r in recs:
        assert FLOW.match(r["flow"]) and r["kind"] == "multiplayer" and r["command"] in COMMANDS, r
        per_flow.setdefault(r["flow"], []).append(r["index"])
        assert r["golden_source"]
        assert ("hex" in r) != ("size" in r and len(r["hex_sha256"]) == 64)
        if r["command"] in ("REMOTE_CALL", "REMOTE_SET"):
            assert r["method"] and r["node_path"] and r["node"] == "/root/" + r["node_path"]
            assert r["remote_sender_id"] == r["peer_src"]
            p = packet(r)
            if p is None:
                continue
            assert p[0] == (0 if r["command"] == "REMOTE_CALL" else 1)
            (target,) = struct.unpack_from("<I", p, 1)
            if r["node_target"] == "path":
                assert target == 0x80000000 | r["node_path_offset"]
                assert p[r["node_path_offset"]:] == r["node_path"].encode() + b"\0"
            else:
                assert target == r["node_cache_id"] < 0x80000000
            # the arguments' var2bytes, as printed by the engines, follow the name (and argc) on the wire
            body = r["method"].encode() + b"\0"
            if r["command"] == "REMOTE_CALL":
                body += bytes([r["argc"]])
            body += b"".join(bytes.fromhex(a["var_to_bytes"]) for a in r["args"])
            assert p[5:5 + len(body)] == body
            texts = [a["text"] for a in r["args"]]
            expected = f"{r['method']}({', '.join(texts)})" if r["command"] == "REMOTE_CALL" else \
                f"{r['method']} = {texts[0]}"
            assert r["text"] == expected
        elif r["command"] == "RAW":
            assert r["hex"] == "04" + r["data_hex"]
    for flow, idx in per_flow.items():
        assert idx == list(range(len(idx))), flow
    assert sorted(f["flow"] for f in entry["flows"]) == sorted(per_flow)


def test_enet_capture_covers_the_issue():
    recs = golden("godot3-enet-multiplayer")
    calls = {r["call"] for r in recs if "call" in r}
    assert {"rpc", "rpc_id", "rpc_unreliable", "rpc_unreliable_id", "rset", "rset_id", "rset_unreliable",
            "send_bytes"} <= calls
    assert {r["enet_command"] for r in recs} >= {"SEND_RELIABLE", "SEND_UNSEQUENCED", "SEND_UNRELIABLE",
                                                 "SEND_FRAGMENT"}
    assert {r["node_target"] for r in recs if "node_target" in r} == {"path", "cache"}
    assert any(r.get("relayed") for r in recs) and any(r.get("peer_dst", 0) < 0 for r in recs)
    assert any(r.get("argc") == 0 for r in recs)
    frag = [r for r in recs if r["enet_command"] == "SEND_FRAGMENT"]
    assert {r["transfer"] for r in frag} == {"reliable", "unreliable"}  # 3.x: both go as reliable fragments


def _driver():
    sys.path.insert(0, str(ROOT / "tools" / "captures"))
    import make_multiplayer_captures as driver

    return driver


@pytest.mark.skipif(not shutil.which("tshark"), reason="tshark not installed")
@pytest.mark.parametrize("name", NAMES)
def test_golden_bytes_are_the_pcap(name):
    """tshark's udp.payload / tcp.payload, ENet commands walked and WebSocket frames unmasked by the
    capture driver's self-check: each flow holds exactly the golden's packets, in order."""
    driver = _driver()
    pcap = CAPTURES / MANIFEST[name]["pcap"]
    recs = golden(name)
    if "enet" in name:
        roles = {port: role for role, port in driver.ENET_PORTS.items()}
        hops, datagrams = driver.enet_hops("tshark", pcap, roles)
        assert len(datagrams) == MANIFEST[name]["enet"]["datagrams"]
        assert [json.loads(ln) for ln in (CAPTURES / f"{name}.enet.jsonl").read_text().splitlines()] == datagrams
    else:
        ports = {int(p) for r in recs for p in FLOW.match(r["flow"]).groups()[1:]}  # type: ignore[union-attr]
        hops, _ = driver.ws_hops("tshark", pcap, {p: "s" if p == driver.WS_PORT else "c" for p in ports})
    wire: dict[str, list[bytes]] = {}
    for h in sorted(hops, key=lambda h: h.order):
        wire.setdefault(h.flow, []).append(h.data)
    for r in recs:
        data = wire[r["flow"]][r["index"]]
        if r["command"] in ("ADD_PEER", "REMOVE_PEER"):
            body = data  # ENet channel 0: no peer header
        else:
            head = 8 if "enet" in name else 9
            body = data[head:]
            assert struct.unpack_from("<ii", data, head - 8) == (r["peer_src"], r["peer_dst"])
        if "hex" in r:
            assert body.hex() == r["hex"], r["seq"]
        else:
            assert (len(body), hashlib.sha256(body).hexdigest()) == (r["size"], r["hex_sha256"]), r["seq"]
    assert sum(len(v) for v in wire.values()) == len(recs)
