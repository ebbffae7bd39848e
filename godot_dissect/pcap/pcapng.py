"""pcapng blocks: (timestamp, frame) of every packet, read as dpkt's pcapng reader reads them.

Same rules as dpkt 1.9 (whose output the reader was built on) for a capture of one interface: its
Interface Description Block gives the link type, time resolution and offset of every packet; Enhanced
Packet Blocks and obsolete Packet Blocks are packets, every other block is skipped; a timestamp is
``tsoffset + ticks / divisor``. As Wireshark reads them (dpkt does not), a packet takes these from the
interface it names (a capture of several interfaces: ``dumpcap -i any -i lo``), each Section Header
Block starts a section with its own byte order and interfaces (pcapng files concatenated), and a packet
naming an interface its section does not describe is damage. A block cut short raises EOFError; a block whose
length fields make no sense, or longer than ``MAX_CAPTURE_BLOCK`` (Wireshark's limit), raises ValueError.
Blocks are read one at a time (memory does not grow with the file), big ones in pieces (a claimed length
allocates nothing the file lacks), and a block that holds no packet is skipped without being held.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import BinaryIO

from ..spec.transports import MAX_CAPTURE_BLOCK, MAX_CAPTURE_INTERFACES

MAGIC = b"\x0a\x0d\x0d\x0a"  # Section Header Block type
_BOM = 0x1A2B3C4D
SHB = int.from_bytes(MAGIC, "little")
#: block types (Interface Description, Packet, Enhanced Packet) and option codes (the reader's and fuzz.pcapout's)
IDB, PB, EPB = 1, 2, 6
OPT_END, OPT_COMMENT, OPT_TSRESOL, OPT_TSOFFSET = 0, 1, 9, 14
_SHB_HEAD = 28  # type, length, byte-order magic, version, section length, trailing length
_PACKET_HEAD = 20  # after type and length: interface, timestamp high/low, captured, original length
_PIECE = 1 << 20  # bytes read at a time from a big block
_CHUNK = 1 << 16  # bytes asked for at a time when blocks are cut out of chunks (less than malloc's mmap threshold)


def read(f: BinaryIO, original_length: bool = False, cut: Callable[..., tuple] | None = None) -> tuple[int, Iterator]:
    """Link type and packets (timestamp, frame) of the pcapng file ``f`` (positioned at its
    start); ``original_length``: (timestamp, frame, length on the wire) instead. ``cut`` (with
    ``original_length``; ``packets.Parser.cut``): runs of whole Enhanced Packet Blocks come as one list of
    what it makes of each packet (its Segment or None), numbered from 1 in file order, between the tuples."""
    head = f.read(_SHB_HEAD)
    if len(head) < _SHB_HEAD or head[:4] != MAGIC:
        raise ValueError("offset 0: invalid pcapng header")
    if struct.unpack_from("<I", head, 8)[0] == _BOM:
        order = "<"
    elif struct.unpack_from(">I", head, 8)[0] == _BOM:
        order = ">"
    else:
        raise ValueError("offset 8: unknown endianness")
    length, _, major = struct.unpack_from(order + "IIH", head, 4)
    if major != 1:
        raise ValueError(f"offset 12: unknown pcapng version {major}")
    if length < _SHB_HEAD or length % 4:
        raise ValueError(f"offset 4: bad section header length {length}")
    _check_length(length, 0)
    if len(read_up_to(f, length - _SHB_HEAD)) < length - _SHB_HEAD:  # its options
        raise EOFError(f"offset 0: section header block cut short (claims {length} bytes)")
    at = length  # file offset of the next block
    while True:  # up to the first interface
        idb_at = at
        btype, body = _block(f, struct.Struct(order + "II"), at)
        if btype is None:
            raise ValueError(f"offset {at}: IDB not found")
        at += 8 + len(body)
        if btype == IDB:
            break
        if btype in (EPB, PB):  # (its packet names an interface not described: damage, as Wireshark)
            _interface_of(btype, body, 0, order, [], idb_at)
    interfaces = [_interface(body, order, idb_at)]
    if cut is not None and original_length and getattr(f, "read1", None) is not None:
        return interfaces[0][0], _packets_chunked(f.read1, order, interfaces, at, True, cut)
    return interfaces[0][0], _packets(f, order, interfaces, at, original_length)


def _interface(body: bytes, order: str, at: int) -> tuple[int, float, int]:
    """(link type, timestamp divisor, timestamp offset) of an Interface Description Block: ``body``, its
    bytes after type and length (the trailing length included); ``at``: its file offset."""
    if len(body) < 12:
        raise ValueError(f"offset {at}: interface description block too short")
    link = struct.unpack_from(order + "H", body)[0]
    divisor, offset = 1e6, 0
    for opt_at, code, value in _options(body[8:-4], order, at + 16):
        if code == OPT_TSRESOL and value:
            # MSB clear: a negative power of 10; set: a negative power of 2
            divisor = float((2 if value[0] & 0x80 else 10) ** (value[0] & 0x7F))
        elif code == OPT_TSOFFSET:
            if len(value) != 8:
                raise ValueError(f"offset {opt_at}: if_tsoffset option of {len(value)} bytes, needs 8")
            offset = struct.unpack(order + "q", value)[0]
    return link, divisor, offset


def _add_interface(interfaces: list, interface: tuple[int, float, int], at: int) -> None:
    if len(interfaces) >= MAX_CAPTURE_INTERFACES:
        raise ValueError(f"offset {at}: more than {MAX_CAPTURE_INTERFACES} interfaces in one section "
                         f"(MAX_CAPTURE_INTERFACES)")
    interfaces.append(interface)


def _order(bom: bytes, at: int) -> str:
    """The byte order of a section whose header's byte-order magic is ``bom``; ``at``: the header's offset."""
    if struct.unpack_from("<I", bom)[0] == _BOM:
        return "<"
    if struct.unpack_from(">I", bom)[0] == _BOM:
        return ">"
    raise ValueError(f"offset {at + 8}: unknown endianness")


def _interface_of(btype: int, head: bytes, pos: int, order: str, interfaces: list, at: int) -> tuple[int, float, int]:
    """The interface a packet block names (its id at ``head[pos:]``: u32 in an Enhanced Packet Block, u16 in a
    Packet Block); one its section does not describe is damage, as Wireshark reads it."""
    number = struct.unpack_from(order + ("I" if btype == EPB else "H"), head, pos)[0]
    if number >= len(interfaces):
        raise ValueError(f"offset {at}: packet block of interface {number}, but its section describes "
                         f"{len(interfaces)}")
    return interfaces[number]


def _body(f: BinaryIO, n: int, at: int) -> bytes:
    """A block's bytes after its type and length (n of them, the trailing length included);
    ``at``: the block's file offset."""
    if n < 4 or n % 4:
        raise ValueError(f"offset {at}: bad pcapng block length {n + 8}")
    _check_length(n + 8, at)
    return read_up_to(f, n)


def _check_length(length: int, at: int) -> None:
    if length > MAX_CAPTURE_BLOCK:
        raise ValueError(f"offset {at}: pcapng block length {length} is more than a capture holds "
                         f"({MAX_CAPTURE_BLOCK})")


def _skip(read: Callable[[int], bytes], n: int, length: int, at: int) -> None:
    """Read past the ``n`` bytes left of a block that holds no packet, a piece at a time (none held); ``length``
    and ``at``: the block's."""
    left = n
    while left > 0:
        part = read(min(left, _PIECE))
        if not part:
            raise EOFError(f"offset {at}: pcapng block cut short ({length - left} of {length} bytes)")
        left -= len(part)


def read_up_to(f: BinaryIO, n: int) -> bytes:
    """Up to n bytes; more than _PIECE in pieces, so that memory follows what the file holds."""
    if n <= _PIECE:
        return f.read(n)
    parts = []
    while n > 0 and (part := f.read(min(n, _PIECE))):
        parts.append(part)
        n -= len(part)
    return b"".join(parts)


def _block(f: BinaryIO, hdr: struct.Struct, at: int) -> tuple[int | None, bytes]:
    h = f.read(8)
    if len(h) < 8:
        return None, b""
    btype, length = hdr.unpack(h)
    body = _body(f, length - 8, at)
    if len(body) < length - 8:
        raise EOFError(f"offset {at}: pcapng block cut short ({len(body) + 8} of {length} bytes)")
    return btype, body


def _options(data: bytes, order: str, at: int) -> Iterator[tuple[int, int, bytes]]:
    """(file offset, code, value) of each option; ``at``: the file offset of ``data``."""
    tlv = struct.Struct(order + "HH")
    pos = 0
    while pos + 4 <= len(data):
        code, n = tlv.unpack_from(data, pos)
        if code == OPT_END:
            return
        yield at + pos, code, data[pos + 4:pos + 4 + n]
        pos += 4 + n + (-n & 3)


def _packets(f: BinaryIO, order: str, interfaces: list, at: int, original_length: bool) -> Iterator[tuple]:
    read1 = getattr(f, "read1", None)
    if read1 is None:  # a stream that can only read exactly: block by block
        return _packets_exact(f, order, interfaces, at, original_length)
    return _packets_chunked(read1, order, interfaces, at, original_length)


def _more(read1: Callable[[int], bytes], buf: bytes, pos: int, need: int) -> bytes:
    """``buf[pos:]`` and what the stream has after it, until at least ``need`` bytes or its end. ``read1``
    returns what is there (a pipe: what has arrived, blocking only for the first byte), so a live
    capture is read as it comes; a claimed length reads no more than the stream holds, in pieces."""
    parts = [buf[pos:]]
    have = len(buf) - pos
    while have < need:
        part = read1(min(max(need - have, _CHUNK), _PIECE))
        if not part:
            break
        parts.append(part)
        have += len(part)
    return b"".join(parts)


def _packets_chunked(read1: Callable[[int], bytes], order: str, interfaces: list, at: int,
                     original_length: bool, cut: Callable[..., tuple] | None = None) -> Iterator:
    """``_packets_exact``'s packets and errors, the blocks cut out of chunks (fewer calls per packet); ``cut``:
    see ``read`` (it takes the loop over whole Enhanced Packet Blocks of interface 0 below, and stops where it
    stops)."""
    hdr, pkt, epb = _structs(order)
    epb_min = 8 + _PACKET_HEAD + 4  # the least block length the checks below let through
    buf, pos = b"", 0
    little = order == "<"
    packets = 0  # so far (cut numbers its packets on from it)
    while True:
        if cut is not None:
            if pos + epb.size <= len(buf) and interfaces:
                link, divisor, offset = interfaces[0]
                batch, pos, at = cut(buf, pos, at, packets, little, divisor, offset, link)
                if batch:
                    packets += len(batch)
                    yield batch
        elif original_length and interfaces:  # the common case, one unpack: whole Enhanced Packet Blocks in the chunk
            link, divisor, offset = interfaces[0]
            epb_unpack, epb_size = epb.unpack_from, epb.size
            n = len(buf)
            while pos + epb_size <= n:
                btype, length, number, high, low, caplen, orig = epb_unpack(buf, pos)
                end = pos + length
                if btype != EPB or end > n or length < epb_min or length % 4 or number:
                    break  # anything else as below
                start = pos + epb_size
                frame = buf[start:min(start + caplen, end)]
                pos = end
                at += length
                yield offset + (((high << 32) | low) / divisor), frame, orig, link
        if len(buf) - pos < 12:  # (a section header's byte order is in its third word)
            buf, pos = _more(read1, buf, pos, 12), 0
            if len(buf) < 8:
                return
        btype = hdr.unpack_from(buf, pos)[0]
        if btype == SHB and len(buf) - pos >= 12:  # a new section: its own byte order and interfaces
            order = _order(buf[pos + 8:pos + 12], at)
            hdr, pkt, epb = _structs(order)
            little = order == "<"
            interfaces = []
        btype, length = hdr.unpack_from(buf, pos)
        block_at, at = at, at + length
        if length < 12 or length % 4:
            raise ValueError(f"offset {block_at}: bad pcapng block length {length}")
        _check_length(length, block_at)
        end = pos + length
        if btype != EPB and btype != PB and btype != IDB:
            if len(buf) < end:  # what the chunk lacks of it is read past, not held
                _skip(read1, end - len(buf), length, block_at)
                buf, pos = b"", 0
            else:
                pos = end
            continue
        if len(buf) < end:
            buf, pos = _more(read1, buf, pos, length), 0
            end = length
        if btype == IDB:
            if len(buf) < end:
                raise EOFError(f"offset {block_at}: pcapng block cut short ({len(buf) - pos} of {length} bytes)")
            _add_interface(interfaces, _interface(buf[pos + 8:end], order, block_at), block_at)
            pos = end
            continue
        if len(buf) < end or length - 8 < _PACKET_HEAD + 4:
            got = min(len(buf) - pos, length)
            raise EOFError(f"offset {block_at}: pcapng packet block cut short ({got} of {length} bytes)")
        link, divisor, offset = _interface_of(btype, buf, pos + 8, order, interfaces, block_at)
        high, low, caplen, orig = pkt.unpack_from(buf, pos + 8)
        start = pos + 8 + _PACKET_HEAD
        frame = buf[start:min(start + caplen, end)]
        pos = end
        packets += 1
        if original_length:
            yield offset + (((high << 32) | low) / divisor), frame, orig, link
        else:
            yield offset + (((high << 32) | low) / divisor), frame


def _structs(order: str) -> tuple[struct.Struct, struct.Struct, struct.Struct]:
    """Block type and length; a packet block's timestamp high and low, captured and original length (after its
    interface); and both with the interface, of an Enhanced Packet Block."""
    return struct.Struct(order + "II"), struct.Struct(order + "4xIIII"), struct.Struct(order + "IIIIIII")


def _packets_exact(f: BinaryIO, order: str, interfaces: list, at: int, original_length: bool) -> Iterator[tuple]:
    hdr, pkt, _ = _structs(order)
    read = f.read
    while True:
        h = read(8)
        if len(h) < 8:
            return
        btype, length = hdr.unpack(h)
        if btype == SHB:  # a new section: its own byte order and interfaces
            bom = read(4)
            if len(bom) < 4:
                raise EOFError(f"offset {at}: section header block cut short ({8 + len(bom)} bytes)")
            order = _order(bom, at)
            hdr, pkt, _ = _structs(order)
            interfaces = []
            btype, length = hdr.unpack(h)
            h += bom
        block_at, at = at, at + length
        if btype != EPB and btype != PB and btype != IDB:
            if length < 12 or length % 4:
                raise ValueError(f"offset {block_at}: bad pcapng block length {length}")
            _check_length(length, block_at)
            _skip(read, length - len(h), length, block_at)
            continue
        body = _body(f, length - 8, block_at)
        if btype == IDB:
            if len(body) < length - 8:
                raise EOFError(f"offset {block_at}: pcapng block cut short ({len(body) + 8} of {length} bytes)")
            _add_interface(interfaces, _interface(body, order, block_at), block_at)
            continue
        if len(body) < length - 8 or len(body) < _PACKET_HEAD + 4:
            raise EOFError(f"offset {block_at}: pcapng packet block cut short ({len(body) + 8} of {length} bytes)")
        link, divisor, offset = _interface_of(btype, body, 0, order, interfaces, block_at)
        high, low, caplen, orig = pkt.unpack_from(body)
        if original_length:
            yield offset + (((high << 32) | low) / divisor), body[_PACKET_HEAD:_PACKET_HEAD + caplen], orig, link
        else:
            yield offset + (((high << 32) | low) / divisor), body[_PACKET_HEAD:_PACKET_HEAD + caplen]
