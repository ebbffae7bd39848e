"""Write a recorded exchange (``target.Event`` list) as a pcapng that ``godot-dissect read`` and
Wireshark open: Ethernet + IPv4/IPv6 + UDP/TCP, TCP with a handshake, sequence numbers, FIN/RST.

The Section Header Block carries a comment (Wireshark: Statistics > Capture File Properties) naming
the dialect, framing, target and case, in lines ``key: value`` after ``COMMENT_TITLE``. ``read``
takes the dialect and the target port from such a comment when the user names neither
(``capture_hint``), so a finding opens as what it is with no options.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from ..pcap.packets import LINK_ETHERNET, TCP_ACK, TCP_FIN, TCP_PSH, TCP_RST, TCP_SYN
from ..pcap.pcapng import EPB, IDB, OPT_COMMENT, OPT_END, OPT_TSRESOL, SHB

if TYPE_CHECKING:  # the reader imports this module for capture_hint: no sockets at start-up
    from .target import Event, Target

_SEG = 32768  # bytes of payload per TCP segment
SYN, FIN, RST, PSH, ACK = TCP_SYN, TCP_FIN, TCP_RST, TCP_PSH, TCP_ACK
#: the first line of the comment this writer puts in the Section Header Block
COMMENT_TITLE = "godot-dissect fuzz exchange"
_SHB, _IDB, _EPB = SHB, IDB, EPB
_OPT_END, _OPT_COMMENT, _OPT_TSRESOL = OPT_END, OPT_COMMENT, OPT_TSRESOL
_LINK_ETHERNET = LINK_ETHERNET


def _option(code: int, value: bytes) -> bytes:
    return struct.pack("<HH", code, len(value)) + value + b"\0" * (-len(value) & 3)


def _block(btype: int, body: bytes) -> bytes:
    length = 12 + len(body)
    return struct.pack("<II", btype, length) + body + struct.pack("<I", length)


def comment_text(fields: Mapping[str, object]) -> str:
    return "\n".join([COMMENT_TITLE, *(f"{k}: {v}" for k, v in fields.items() if v is not None)])


def parse_comment(text: str) -> dict[str, str] | None:
    """The ``key: value`` lines of a comment this writer made; None for any other comment."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != COMMENT_TITLE:
        return None
    out: dict[str, str] = {}
    for line in lines[1:]:
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


class CaptureHint(NamedTuple):
    """What a godot-dissect comment says about a capture: read it with this dialect on these ports.
    (A NamedTuple, not a dataclass: the reader imports this module for every capture; start-up time.)"""

    dialect: str
    ports: tuple[int, ...]
    debugger_ports: tuple[int, ...]
    evidence: str


def hint_from_comments(comments: Iterable[str]) -> CaptureHint | None:
    """The hint of the first godot-dissect comment among a section's comments."""
    for text in comments:
        info = parse_comment(text)
        if not info or not info.get("dialect") or not info.get("target"):
            continue
        # loaded only for a comment of ours (``read`` of any other capture: start-up time)
        from ..spec import DIALECT_NAMES, get_dialect
        from .target import parse_target

        try:
            dialect = get_dialect(info["dialect"]).name
            target = parse_target(info["target"], allow_remote=True)
        except (KeyError, ValueError):
            continue
        if dialect not in DIALECT_NAMES:
            continue
        debugger = info.get("framing", "").startswith("debugger")
        ports = () if debugger else (target.port,)
        why = (f"the capture's godot-dissect comment (fuzz {info.get('framing', '?')} {info['target']}, "
               f"case {info.get('case', '?')})")
        return CaptureHint(dialect, ports, (target.port,) if debugger else (), why)
    return None


class PcapWriter:
    def __init__(self, path: str | Path | BinaryIO, comment: str | None = None) -> None:
        """``path``: a file to create, or an open binary file (written to, not closed)."""
        self._owned = not hasattr(path, "write")
        self.f: BinaryIO = open(path, "wb") if self._owned else path  # type: ignore[arg-type,assignment]  # noqa: SIM115
        shb = struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)
        if comment:
            shb += _option(_OPT_COMMENT, comment.encode("utf-8"))
        self.f.write(_block(_SHB, shb + _option(_OPT_END, b"")))
        idb = struct.pack("<HHI", _LINK_ETHERNET, 0, 262144) + _option(_OPT_TSRESOL, b"\x06") + _option(_OPT_END, b"")
        self.f.write(_block(_IDB, idb))

    def packet(self, t: float, src: str, dst: str, proto: int, header: bytes, payload: bytes) -> None:
        import socket  # here: the reader imports this module (capture_hint), and needs no sockets

        if ":" in src:
            ip = struct.pack("!IHBB16s16s", 6 << 28, len(header) + len(payload), proto, 64,
                             socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst))
            ethertype = b"\x86\xdd"
        else:
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(header) + len(payload), 0, 0x4000, 64, proto, 0,
                             socket.inet_aton(src), socket.inet_aton(dst))
            ethertype = b"\x08\x00"
        frame = b"\0" * 12 + ethertype + ip + header + payload
        ticks = int(round(t * 1e6))
        body = struct.pack("<IIIII", 0, ticks >> 32, ticks & 0xFFFFFFFF, len(frame), len(frame))
        self.f.write(_block(_EPB, body + frame + b"\0" * (-len(frame) & 3)))

    def udp(self, t: float, src: tuple, dst: tuple, payload: bytes) -> None:
        self.packet(t, src[0], dst[0], 17, struct.pack("!HHHH", src[1], dst[1], 8 + len(payload), 0), payload)

    def tcp(self, t: float, src: tuple, dst: tuple, seq: int, ack: int, flags: int, payload: bytes = b"") -> None:
        self.packet(t, src[0], dst[0], 6, struct.pack("!HHIIBBHHH", src[1], dst[1], seq & 0xFFFFFFFF,
                                                      ack & 0xFFFFFFFF, 5 << 4, flags, 65535, 0, 0), payload)

    def close(self) -> None:
        if self._owned:
            self.f.close()


def write_exchange(path: str | Path, events: Iterable[Event], target: Target,
                   comment: Mapping[str, object] | None = None) -> int:
    """Write the events; return the number of packets. ``comment``: the dialect, framing, target and case
    (``comment_text``), written in the Section Header Block."""
    w = PcapWriter(path, comment_text(comment) if comment else None)
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


def capture_hint(path: str) -> CaptureHint | None:
    """The hint in the Section Header Block comment of a pcapng file (None: no file, not pcapng, no
    godot-dissect comment). Reads only that first block, with the pcapng reader's option parser."""
    from ..pcap import pcapng

    if path == "-":  # standard input is read once, by the reader
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(pcapng._SHB_HEAD)
            if len(head) < pcapng._SHB_HEAD or head[:4] != pcapng.MAGIC:
                return None
            order = "<" if struct.unpack_from("<I", head, 8)[0] == pcapng._BOM else ">"
            length = struct.unpack_from(order + "I", head, 4)[0]
            if length > 1 << 16 or length < pcapng._SHB_HEAD:
                return None
            # the options start after the 24-byte header; the block ends with its length again
            options = (head + f.read(length - pcapng._SHB_HEAD))[24:length - 4]
    except OSError:
        return None
    comments = [value.decode("utf-8", "replace") for _, code, value in pcapng._options(options, order, 0)
                if code == _OPT_COMMENT]
    return hint_from_comments(comments)
