"""Hand-built hostile captures for the Lua dissector (issue 15's constructions; tests/test_lua_layers.py
and the README's hostile-input figures): ENet fragments that never complete, a huge TCP length claim
followed by a trickle of 1-byte segments."""

from __future__ import annotations

from pathlib import Path

from godot_dissect.enet.build import build_datagram
from godot_dissect.enet.model import Command
from godot_dissect.spec import enet as E

from .resegment import _PcapWriter

CLIENT, SERVER = ("10.0.0.2", 40000), ("10.0.0.1", 4270)


def enet_zero_fragments(path: Path, fragments: int, peers: int = 1, per_datagram: int = 1) -> None:
    """``fragments`` SEND_UNRELIABLE_FRAGMENT commands with dataLength 0 of one group claiming
    MAX_FRAGMENT_COUNT fragments (never completed), from each of ``peers`` clients."""
    frag = E.COMMANDS_BY_NAME["SEND_UNRELIABLE_FRAGMENT"]
    count = E.MAX_FRAGMENT_COUNT
    w = _PcapWriter(str(path))
    for p in range(peers):
        src = f"10.0.{1 + p // 250}.{2 + p % 250}"
        n = 0
        while n < fragments:
            cmds = []
            for _ in range(min(per_datagram, fragments - n)):
                cmds.append(Command(frag.number, 1, 0, {"start_seq": 1, "data_length": 0, "fragment_count": count,
                                                        "fragment_number": n, "total_length": count,
                                                        "fragment_offset": n}, b""))
                n += 1
            w.udp(src, CLIENT[1], SERVER[0], SERVER[1], build_datagram(0, cmds))
    w.close()


def tcp_trickle(path: Path, segments: int, claim: int = 8 << 20) -> None:
    """A TCP flow whose first segment is a u32 length claiming ``claim`` bytes, then ``segments``
    segments of one byte each."""
    w = _PcapWriter(str(path))
    seq = 1000
    w.tcp(CLIENT[0], CLIENT[1], SERVER[0], 5000, seq, 0x18, claim.to_bytes(4, "little"))
    seq += 4
    for i in range(segments):
        w.tcp(CLIENT[0], CLIENT[1], SERVER[0], 5000, seq, 0x18, bytes([i & 0xFF]))
        seq += 1
    w.close()
