"""Classic pcap (libpcap) files, read as a stream: a 24-byte file header, then per packet a
16-byte record header (seconds, micro- or nanoseconds, captured and original length) and the frame.

Timestamps as dpkt computes them (``seconds + fraction / 1e6`` or ``/ 1e9``). dpkt's reader is not
used because its iterator drops the original length, which ``Segment.frame_len`` needs, and a
record cut short must be an error naming its offset, not a silent end. A record header cut short
or a frame cut short raises EOFError; a record capturing more than ``MAX_CAPTURED_FRAME`` bytes raises ValueError
(Wireshark's limit: the file is damaged there), so a claimed length never has the reader hold the rest of the file.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import BinaryIO

from ..spec.transports import MAX_CAPTURED_FRAME
from .pcapng import read_up_to

_HEAD = 24
_RECORD = 16
#: magic number -> (byte order, timestamp fraction divisor)
_MAGICS = {
    b"\xd4\xc3\xb2\xa1": ("<", 1e6), b"\xa1\xb2\xc3\xd4": (">", 1e6),
    b"\x4d\x3c\xb2\xa1": ("<", 1e9), b"\xa1\xb2\x3c\x4d": (">", 1e9),
}


def read(f: BinaryIO) -> tuple[int, Iterator[tuple[float, bytes, int, int]]]:
    """Link type and packets (timestamp, frame, original length, link type) of the pcap stream ``f``."""
    head = f.read(_HEAD)
    found = _MAGICS.get(head[:4])
    if found is None:
        raise ValueError(f"offset 0: unknown magic number {head[:4].hex()}")
    if len(head) < _HEAD:
        raise ValueError(f"pcap file header cut short ({len(head)} of {_HEAD} bytes)")
    order, divisor = found
    link = struct.unpack_from(order + "I", head, 20)[0]
    return link, _packets(f, struct.Struct(order + "IIII"), divisor, link)


def _packets(f: BinaryIO, rec: struct.Struct, divisor: float, link: int) -> Iterator[tuple[float, bytes, int, int]]:
    read = f.read
    at = _HEAD
    while True:
        h = read(_RECORD)
        if len(h) < _RECORD:
            if h:
                raise EOFError(f"offset {at}: pcap record header cut short ({len(h)} of {_RECORD} bytes)")
            return
        sec, frac, caplen, orig = rec.unpack(h)
        if caplen > MAX_CAPTURED_FRAME:
            raise ValueError(f"offset {at}: pcap record of {caplen} captured bytes, more than a capture "
                             f"holds ({MAX_CAPTURED_FRAME})")
        data = read_up_to(f, caplen)
        if len(data) < caplen:
            raise EOFError(f"offset {at}: pcap record cut short ({len(data)} of {caplen} captured bytes)")
        yield sec + frac / divisor, data, orig, link
        at += _RECORD + caplen
