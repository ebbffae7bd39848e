"""Re-segment the TCP streams of a real capture: same bytes, other segment boundaries.

Used by the reassembly tests: every way of cutting, duplicating, reordering or truncating the
segments must give the reader the same messages as the original capture (or, for a cut start,
the same messages after the resynchronisation point).
"""

from __future__ import annotations

import random
import socket
import struct
from collections.abc import Callable

from godot_dissect.pcap.packets import TCP_SYN, segments

Plan = Callable[[bytes], list[tuple[int, bytes]]]  # stream -> [(relative seq, data)] in send order


def one_byte(stream: bytes) -> list[tuple[int, bytes]]:
    return [(i, stream[i:i + 1]) for i in range(len(stream))]


def all_in_one(stream: bytes) -> list[tuple[int, bytes]]:
    """As few segments as IPv4 allows (every PDU of a short stream in one segment)."""
    return [(i, stream[i:i + 65000]) for i in range(0, len(stream), 65000)]


def duplicated_and_reordered(stream: bytes, seed: int = 7) -> list[tuple[int, bytes]]:
    rnd = random.Random(seed)
    parts, i = [], 0
    while i < len(stream):
        n = rnd.randint(1, 40)
        parts.append((i, stream[i:i + n]))
        i += n
    out = []
    for k, p in enumerate(parts):
        out.append(p)
        if k % 3 == 0:
            out.append(p)  # retransmission
        if k % 4 == 1:
            j = p[0] + max(1, len(p[1]) // 2)  # overlapping retransmission
            out.append((j, stream[j:p[0] + len(p[1]) + 3]))
    # swap neighbours to reorder
    for k in range(1, len(out) - 1, 5):
        out[k], out[k + 1] = out[k + 1], out[k]
    return out


def cut_start(skip: int) -> Plan:
    def plan(stream: bytes) -> list[tuple[int, bytes]]:
        return [(i, stream[i:i + 100]) for i in range(skip, len(stream), 100)]
    return plan


class _PcapWriter:
    """Minimal Ethernet/IPv4 pcap writer: scapy takes minutes for 200,000 one-byte segments."""

    def __init__(self, path: str) -> None:
        self.f = open(path, "wb")  # noqa: SIM115 - closed in close()
        self.f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
        self.t = 0

    def packet(self, src: str, dst: str, proto: int, header: bytes, payload: bytes) -> None:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(header) + len(payload), 0, 0x4000, 64, proto, 0,
                         socket.inet_aton(src), socket.inet_aton(dst))
        frame = b"\0" * 12 + b"\x08\x00" + ip + header + payload
        self.t += 1
        self.f.write(struct.pack("<IIII", 1000 + self.t // 1000000, self.t % 1000000, len(frame), len(frame)))
        self.f.write(frame)

    def udp(self, src: str, sport: int, dst: str, dport: int, payload: bytes) -> None:
        self.packet(src, dst, 17, struct.pack("!HHHH", sport, dport, 8 + len(payload), 0), payload)

    def tcp(self, src: str, sport: int, dst: str, dport: int, seq: int, flags: int, payload: bytes) -> None:
        self.packet(src, dst, 6, struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, 0, 5 << 4, flags,
                                             65535, 0, 0), payload)

    def close(self) -> None:
        self.f.close()


def resegment(src: str, dst: str, plan: Plan, keep_syn: bool = True) -> None:
    """Write ``dst``: the UDP packets of ``src`` unchanged, each TCP direction re-cut by ``plan``."""
    streams: dict[tuple, bytearray] = {}
    isn: dict[tuple, int] = {}
    order: list[tuple] = []
    w = _PcapWriter(dst)
    for seg in segments(src):
        key = (seg.src, seg.sport, seg.dst, seg.dport)
        if seg.proto == "udp":
            w.udp(seg.src, seg.sport, seg.dst, seg.dport, seg.payload)
            continue
        if key not in streams:
            streams[key] = bytearray()
            isn[key] = seg.seq + 1 if seg.flags & TCP_SYN else seg.seq
            order.append(key)
        if seg.payload:
            rel = (seg.seq - isn[key]) & 0xFFFFFFFF
            s = streams[key]
            if rel + len(seg.payload) > len(s) and rel <= len(s):
                s[rel:] = seg.payload
    for key in order:
        s, sp, d, dp = key
        base = 1000
        if keep_syn:
            w.tcp(s, sp, d, dp, base - 1, 0x02, b"")
        for rel, data in plan(bytes(streams[key])):
            w.tcp(s, sp, d, dp, base + rel, 0x18, data)
    w.close()
