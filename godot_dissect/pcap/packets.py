"""Capture files to transport payloads: link layer, IPv4/IPv6, UDP/TCP headers.

Capture files are read by ``source.py`` (pcap, pcapng, gzip, standard input). Headers are parsed
with precompiled structs, because building dpkt objects per packet would cost more than decoding
the Godot payload.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from .source import CaptureError, Source, open_packets

__all__ = ["CaptureError", "Segment", "segment_batches", "segments"]

_ETH_TYPE = struct.Struct("!H")
_IP4 = struct.Struct("!BBHHHBBH4s4s")
_PORTS = struct.Struct("!HH")
_TCP = struct.Struct("!HHIIBB")
_NULL = struct.Struct("=I")

# link types (pcap LINKTYPE_*)
LINK_NULL, LINK_ETHERNET, LINK_RAW, LINK_LOOP = 0, 1, 101, 108
LINK_SLL, LINK_IPV4, LINK_IPV6, LINK_SLL2 = 113, 228, 229, 276
TCP_FIN, TCP_SYN, TCP_RST, TCP_PSH, TCP_ACK = 0x01, 0x02, 0x04, 0x08, 0x10


@dataclass(slots=True)
class Segment:
    """One UDP datagram or TCP segment with its addresses."""

    frame: int
    time: float
    proto: str  # "udp" | "tcp"
    src: str
    sport: int
    dst: str
    dport: int
    payload: bytes
    seq: int = 0
    flags: int = 0
    frame_len: int = 0  # the frame's length on the wire (the capture's original length)


_ip4 = "{}.{}.{}.{}".format  # (4 bytes) -> "a.b.c.d", as socket.inet_ntoa writes it (no socket module at start-up)


@lru_cache(maxsize=1024)
def _ip6(b: bytes) -> str:
    import ipaddress

    return str(ipaddress.IPv6Address(b))


def segments(source: Source) -> Iterator[Segment]:
    """Every UDP datagram and TCP segment in the capture, in file order (frame numbers from 1).
    ``source``: a path, ``"-"`` (standard input) or a binary file object, read as a stream."""
    for batch in segment_batches(source):
        for seg in batch:
            if seg is not None:
                yield seg


def segment_batches(source: Source) -> Iterator[list[Segment | None]]:
    """``segments`` in lists, with None for each packet that is not one: a run of a pcapng file's packet
    blocks in one list (cut out and parsed in C, ``_packets.c``: no Python per packet), any other packet
    alone in its own."""
    cut = fast_parse.cut if fast_parse is not None else None
    _, pkts = open_packets(source, cut)
    parse = fast_parse or _parse
    frame = 0
    for pkt in pkts:
        if type(pkt) is list:
            frame += len(pkt)
            yield pkt
        else:
            frame += 1
            yield [parse(frame, pkt[0], pkt[1], pkt[3], pkt[2])]  # (each packet its interface's link type)


def _parse(frame: int, ts: float, buf: bytes, link: int, frame_len: int = 0) -> Segment | None:
    # link layer -> (ethertype-ish, offset)
    if link == LINK_ETHERNET:
        if len(buf) < 14:
            return None
        et, off = _ETH_TYPE.unpack_from(buf, 12)[0], 14
        while et in (0x8100, 0x88A8) and len(buf) >= off + 4:  # VLAN tags
            et, off = _ETH_TYPE.unpack_from(buf, off + 2)[0], off + 4
    elif link in (LINK_NULL, LINK_LOOP):
        if len(buf) < 4:
            return None
        fam = _NULL.unpack_from(buf)[0]
        if fam > 0xFFFF:
            fam = struct.unpack_from(">I" if link == LINK_LOOP else "<I", buf)[0]
        et, off = (0x0800 if fam == 2 else 0x86DD), 4
    elif link == LINK_SLL:
        if len(buf) < 16:
            return None
        et, off = _ETH_TYPE.unpack_from(buf, 14)[0], 16
    elif link == LINK_SLL2:
        if len(buf) < 20:
            return None
        et, off = _ETH_TYPE.unpack_from(buf, 0)[0], 20
    elif link in (LINK_RAW, LINK_IPV4, LINK_IPV6):
        if not buf:
            return None
        et, off = (0x0800 if buf[0] >> 4 == 4 else 0x86DD), 0
    else:
        return None
    # network layer
    if et == 0x0800:
        if len(buf) < off + 20:
            return None
        vihl, _, total, _, frag, _, proto, _, s, d = _IP4.unpack_from(buf, off)
        if frag & 0x1FFF or frag & 0x2000:  # IP fragments are not reassembled (Godot stays below MTU)
            return None
        end = min(len(buf), off + total) if total else len(buf)
        off += (vihl & 0x0F) * 4
        src, dst = _ip4(*s), _ip4(*d)
    elif et == 0x86DD:
        if len(buf) < off + 40:
            return None
        plen, proto = struct.unpack_from("!HB", buf, off + 4)
        src, dst = _ip6(buf[off + 8:off + 24]), _ip6(buf[off + 24:off + 40])
        end = min(len(buf), off + 40 + plen)
        off += 40
    else:
        return None
    # transport
    if proto == 17:
        if end < off + 8:
            return None
        sp, dp = _PORTS.unpack_from(buf, off)
        return Segment(frame, ts, "udp", src, sp, dst, dp, bytes(buf[off + 8:end]), 0, 0, frame_len)
    if proto == 6:
        if end < off + 20:
            return None
        sp, dp, seq, _, doff, flags = _TCP.unpack_from(buf, off)
        hl = (doff >> 4) * 4
        return Segment(frame, ts, "tcp", src, sp, dst, dp, bytes(buf[off + hl:end]), seq, flags, frame_len)
    return None


def _compiled_parse() -> Callable[[int, float, bytes, int, int], Segment | None] | None:
    """``_parse`` in C for Ethernet/IPv4/UDP/TCP frames (``_packets.c``; it hands every other frame
    to ``_parse``), or None when not built or ``GODOT_DISSECT_PURE`` is set."""
    if os.environ.get("GODOT_DISSECT_PURE", "") not in ("", "0"):
        return None
    try:
        from ._packets import Parser
    except ImportError:
        return None
    return Parser(Segment, _parse, LINK_ETHERNET)


#: the parse segments() uses (tests compare it with ``_parse``)
fast_parse = _compiled_parse()

