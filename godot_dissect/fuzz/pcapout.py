"""Write a recorded exchange (``target.Event`` list) as a classic pcap that ``godot-dissect read``
and Wireshark open: Ethernet + IPv4/IPv6 + UDP/TCP, TCP with a handshake, sequence numbers, FIN/RST."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from .target import Event, Target

_SEG = 32768  # bytes of payload per TCP segment
SYN, FIN, RST, PSH, ACK = 0x02, 0x01, 0x04, 0x08, 0x10


class PcapWriter:
    def __init__(self, path: str | Path | BinaryIO) -> None:
        """``path``: a file to create, or an open binary file (written to, not closed)."""
        self._owned = not hasattr(path, "write")
        self.f: BinaryIO = open(path, "wb") if self._owned else path  # type: ignore[arg-type,assignment]  # noqa: SIM115
        self.f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))

    def packet(self, t: float, src: str, dst: str, proto: int, header: bytes, payload: bytes) -> None:
        if ":" in src:
            ip = struct.pack("!IHBB16s16s", 6 << 28, len(header) + len(payload), proto, 64,
                             socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst))
            ethertype = b"\x86\xdd"
        else:
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(header) + len(payload), 0, 0x4000, 64, proto, 0,
                             socket.inet_aton(src), socket.inet_aton(dst))
            ethertype = b"\x08\x00"
        frame = b"\0" * 12 + ethertype + ip + header + payload
        sec = int(t)
        self.f.write(struct.pack("<IIII", sec, int((t - sec) * 1e6), len(frame), len(frame)))
        self.f.write(frame)

    def udp(self, t: float, src: tuple, dst: tuple, payload: bytes) -> None:
        self.packet(t, src[0], dst[0], 17, struct.pack("!HHHH", src[1], dst[1], 8 + len(payload), 0), payload)

    def tcp(self, t: float, src: tuple, dst: tuple, seq: int, ack: int, flags: int, payload: bytes = b"") -> None:
        self.packet(t, src[0], dst[0], 6, struct.pack("!HHIIBBHHH", src[1], dst[1], seq & 0xFFFFFFFF,
                                                      ack & 0xFFFFFFFF, 5 << 4, flags, 65535, 0, 0), payload)

    def close(self) -> None:
        if self._owned:
            self.f.close()


def write_exchange(path: str | Path, events: Iterable[Event], target: Target) -> int:
    """Write the events; return the number of packets."""
    w = PcapWriter(path)
    server = (target.address[0], target.port)
    n = 0
    conns: dict[int, dict] = {}
    local = ("127.0.0.1", 40000) if ":" not in server[0] else ("::1", 40000)
    try:
        for ev in events:
            if target.scheme == "udp":
                if ev.local:
                    local = (ev.local[0], ev.local[1])
                if ev.direction == "c2s":
                    w.udp(ev.time, local, server, ev.data)
                else:
                    w.udp(ev.time, server, local, ev.data)
                n += 1
                continue
            c = conns.get(ev.conn)
            if ev.kind == "open":
                client = (ev.local[0], ev.local[1]) if ev.local else (local[0], 40000 + ev.conn % 20000)
                c = conns[ev.conn] = {"client": client, "cseq": 1000, "sseq": 5000}
                w.tcp(ev.time, client, server, 999, 0, SYN)
                w.tcp(ev.time, server, client, 4999, 1000, SYN | ACK)
                w.tcp(ev.time, client, server, 1000, 5000, ACK)
                n += 3
                continue
            if c is None:
                continue
            cl = c["client"]
            if ev.kind == "data":
                for i in range(0, len(ev.data), _SEG):
                    part = ev.data[i:i + _SEG]
                    if ev.direction == "c2s":
                        w.tcp(ev.time, cl, server, c["cseq"], c["sseq"], PSH | ACK, part)
                        c["cseq"] += len(part)
                    else:
                        w.tcp(ev.time, server, cl, c["sseq"], c["cseq"], PSH | ACK, part)
                        c["sseq"] += len(part)
                    n += 1
            elif ev.kind in ("close", "reset"):
                flag = FIN | ACK if ev.kind == "close" else RST | ACK
                if ev.direction == "c2s":
                    w.tcp(ev.time, cl, server, c["cseq"], c["sseq"], flag)
                    c["cseq"] += 1
                else:
                    w.tcp(ev.time, server, cl, c["sseq"], c["cseq"], flag)
                    c["sseq"] += 1
                n += 1
    finally:
        w.close()
    return n
