"""``Record.wire_bytes`` against tshark: per conversation and direction, the records' shares of the
frames plus the frames that carried no Godot message bytes add up to the bytes tshark counts.

Frames that carry no message bytes are told apart here without the reader: TCP segments without
payload, the HTTP upgrade, TCP retransmissions (tshark's analysis: bytes already delivered),
frames tshark dissects as WebSocket control frames only, and ENet datagrams without a data
command (ACKNOWLEDGE, PING, CONNECT ...)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from godot_dissect.enet import parse_datagram
from godot_dissect.pcap.packets import Segment
from godot_dissect.pcap.reader import read_pcap

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "captures"
MANIFEST = json.loads((CAPTURES / "manifest.json").read_text())
#: the compressed capture: the ENet codec of each server port (manifest description)
CODEC_PORTS = {"range_coder": 4280, "fastlz": 4282, "zlib": 4284, "zstd": 4286}
pytestmark = pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark")

Key = tuple[str, tuple[str, int], tuple[str, int]]
RETRANSMISSION = 256  # an "opcode" for frames tshark says repeat bytes already sent


def _tshark(path: Path) -> tuple[Counter[Key], dict[int, list[int]]]:
    """Bytes per (proto, src, dst) as tshark counts frame lengths, and WebSocket opcodes per frame
    (a frame whose bytes tshark reassembles into a later one gets that one's opcodes)."""
    out = subprocess.run(["tshark", "-r", str(path), "-T", "fields", "-e", "frame.number", "-e", "frame.len",
                          "-e", "ip.src", "-e", "udp.srcport", "-e", "tcp.srcport", "-e", "ip.dst", "-e", "udp.dstport",
                          "-e", "tcp.dstport", "-e", "websocket.opcode", "-e", "tcp.segment",
                          "-e", "tcp.analysis.retransmission"],
                         capture_output=True, text=True, check=True).stdout
    counts: Counter[Key] = Counter()
    opcodes: dict[int, list[int]] = {}
    later: dict[int, int] = {}  # frame -> the frame its bytes were reassembled in
    for line in out.splitlines():
        n, length, s, us, ts, d, ud, td, op, parts, retransmission = line.split("\t")
        proto = "udp" if us else "tcp"
        counts[(proto, (s, int(us or ts)), (d, int(ud or td)))] += int(length)
        opcodes[int(n)] = [int(x) for x in op.split(",") if x]
        if retransmission:
            opcodes[int(n)] = [RETRANSMISSION]
        for part in parts.split(","):  # the segments of a PDU tshark reassembled in this frame
            if part and int(part) != int(n):
                later[int(part)] = int(n)
    for n, m in later.items():
        opcodes[n] = opcodes[n] or [o for o in opcodes.get(m, []) if o != RETRANSMISSION]
    return counts, opcodes


def _no_message_bytes(seg: Segment, opcodes: dict[int, list[int]], codec: str | None) -> bool:
    p = seg.payload
    if not p or p[:4] in (b"GET ", b"HTTP"):
        return True
    if seg.proto == "tcp":
        ops = opcodes.get(seg.frame)
        return bool(ops) and all(o >= 8 for o in ops)
    dg = parse_datagram(p, codec)
    return not dg.opaque and dg.error is None and not any(c.data for c in dg.commands)


def _check(path: Path, codec: str | None = None, only_port: int | None = None) -> int:
    counts, opcodes = _tshark(path)
    frames: list[Segment] = []
    wire: Counter[Key] = Counter()
    for r in read_pcap(str(path), enet_compression=codec, on_frame=frames.append):
        proto = "tcp" if r.transport == "websocket" else r.transport
        wire[(proto, (r.src, r.sport), (r.dst, r.dport))] += r.wire_bytes
    enet = "enet" in path.name
    for seg in frames:
        if _no_message_bytes(seg, opcodes, codec) if (seg.proto == "tcp" or enet) else not seg.payload:
            wire[(seg.proto, (seg.src, seg.sport), (seg.dst, seg.dport))] += seg.frame_len
    checked = 0
    for key, n in counts.items():
        if only_port is not None and only_port not in (key[1][1], key[2][1]) and only_port + 1 not in (
                key[1][1], key[2][1]):
            continue
        assert wire[key] == pytest.approx(n, abs=0.01), key
        checked += 1
    return checked


@pytest.mark.parametrize("name", [n for n in MANIFEST if n != "godot3-enet-compressed"])
def test_wire_bytes_add_up_to_what_tshark_counts(name: str) -> None:
    assert _check(CAPTURES / MANIFEST[name]["pcap"]) >= 2


@pytest.mark.parametrize("codec", sorted(CODEC_PORTS))
def test_wire_bytes_of_compressed_enet_add_up(codec: str) -> None:
    path = CAPTURES / MANIFEST["godot3-enet-compressed"]["pcap"]
    assert _check(path, codec, CODEC_PORTS[codec]) == 2
