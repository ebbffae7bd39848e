"""Bytes -> Datagram, accepting and rejecting what ENet's receiver does
(``enet_protocol_handle_incoming_commands``): the first command ENet would stop at becomes
``Datagram.error`` and the commands before it are kept."""

from __future__ import annotations

import struct

from ..spec import enet as spec
from .checks import describe, first_failure
from .compression import CompressionError, decompress
from .model import Command, Datagram, EnetError

_WORD = struct.Struct(spec.HEADER_PEER_WORD.code)
_SENT_TIME = struct.Struct(spec.HEADER_SENT_TIME.code)
_CHECKSUM = struct.Struct(spec.HEADER_CHECKSUM.code)
#: header + fixed body of every command, precompiled
_COMMAND_STRUCTS = {
    c.number: struct.Struct(spec.COMMAND_HEADER_FORMAT + c.body_format[len(spec.BYTE_ORDER):])
    for c in spec.COMMANDS
}


def parse_datagram(data: bytes, compression: str | None = None, checksum: bool = False) -> Datagram:
    """Read one UDP payload as ENet.

    ``compression`` names the codec the hosts were set up with (``spec.enet.COMPRESSIONS``); the
    wire does not say, so by default a compressed datagram keeps its body undecoded. ``checksum``:
    the hosts use ENet's checksum callback (Godot never does). Never raises on bad bytes.
    """
    data = bytes(data)
    if len(data) < _WORD.size:
        return Datagram(0, 0, False, None, error=EnetError(0, f"{len(data)} bytes: shorter than the "
                                                             f"{_WORD.size}-byte ENet header"), body=data)
    word = _WORD.unpack_from(data)[0]
    has_sent_time = bool(spec.FLAG_SENT_TIME.get(word))
    dg = Datagram(spec.PEER_ID.get(word), spec.SESSION_ID.get(word), bool(spec.FLAG_COMPRESSED.get(word)), None)
    pos = _WORD.size
    # the optional header words, in wire order: (present, struct, attribute, what is missing when cut)
    for present, word_struct, attr, missing in (
            (has_sent_time, _SENT_TIME, "sent_time",
             "header has the sent-time flag but the datagram ends before the sent time"),
            (checksum, _CHECKSUM, "checksum", "datagram ends before the checksum")):
        if not present:
            continue
        if len(data) < pos + word_struct.size:
            dg.error = EnetError(pos, missing)
            dg.header_size, dg.body = pos, data[pos:]
            return dg
        setattr(dg, attr, word_struct.unpack_from(data, pos)[0])
        pos += word_struct.size
    dg.header_size, dg.body = pos, data[pos:]
    commands = dg.body
    if dg.compressed:
        if not dg.body:
            dg.error = EnetError(pos, "compressed flag set but nothing follows the header")
            return dg
        if compression in (None, "none"):
            return dg  # opaque: shown as compressed
        try:
            # ENet decompresses into packetData[1]: at most MAX_MTU bytes including the header
            dg.decompressed = decompress(dg.body, compression, spec.MAX_MTU - pos)
        except CompressionError as e:
            dg.error = EnetError(pos + e.offset, f"compressed body could not be decoded as {compression}: {e.reason}")
            return dg
        dg.compression = compression
        commands = dg.decompressed
    if not commands:
        dg.error = EnetError(pos, "no commands after the header (ENet never sends that)")
        return dg
    _parse_commands(dg, commands, pos, has_sent_time)
    if dg.error is not None and dg.decompressed is not None:
        dg.error = EnetError(dg.error.offset, dg.error.reason + " (offset in the decompressed datagram)")
    return dg


def _parse_commands(dg: Datagram, buf: bytes, base: int, has_sent_time: bool) -> None:
    """Append commands from ``buf`` (whose byte 0 is datagram offset ``base``) until ENet would stop."""
    pos, end = 0, len(buf)
    have_peer = dg.peer_id != spec.UNASSIGNED_PEER_ID
    while pos < end:
        at = base + pos
        left = end - pos
        if left < spec.COMMAND_HEADER_SIZE:
            if dg.decompressed is not None and not any(buf[pos:]):
                dg.padding = left
                return
            dg.error = EnetError(at, f"{left} bytes left: too short for a command header "
                                     f"({spec.COMMAND_HEADER_SIZE} bytes)")
            return
        byte = buf[pos]
        number = spec.COMMAND_NUMBER.get(byte)
        d = spec.COMMANDS_BY_NUMBER.get(number)
        if d is None:
            if dg.decompressed is not None and not any(buf[pos:]):
                dg.padding = left  # FastLZ zero padding: ENet stops at command 0
                return
            dg.error = EnetError(at, f"unknown command number {number} (command byte 0x{byte:02x})")
            return
        if left < d.size:
            dg.error = EnetError(at, f"{d.name} needs {d.size} bytes, only {left} left")
            return
        values = _COMMAND_STRUCTS[number].unpack_from(buf, pos)
        _, channel, seq = values[:3]
        fields = dict(zip(d.field_names, values[3:], strict=True))
        if d.needs_peer and not have_peer:
            dg.error = EnetError(at, f"{d.name} in a datagram from the unassigned peer id "
                                     f"0x{spec.UNASSIGNED_PEER_ID:x}: ENet accepts only CONNECT from it")
            return
        if not d.needs_peer and have_peer:
            dg.error = EnetError(at, f"{d.name} from a peer that already has an id: ENet rejects it")
            return
        payload = None
        size = d.size
        if d.data_length is not None:
            n = fields[d.data_length]
            if left < d.size + n:
                dg.error = EnetError(at, f"{d.name} claims {n} data bytes, only {left - d.size} left in the datagram")
                return
            payload = bytes(buf[pos + d.size:pos + d.size + n])
            size += n
        if d.checks:
            check_values = {**fields, "channel": channel, "reliable_seq": seq}
            bad = first_failure(d.checks, check_values)
            if bad is not None:
                dg.error = EnetError(at, f"{d.name}: {describe(bad, check_values)}")
                return
        flags = byte & ~spec.COMMAND_NUMBER.mask & 0xFF
        cmd = Command(number, channel, seq, fields, payload, flags, at)
        dg.commands.append(cmd)
        pos += size
        have_peer = True
        if cmd.ack_requested and not has_sent_time:
            dg.error = EnetError(at, f"{d.name} asks for an acknowledgement but the header has no sent time: "
                                     "ENet ignores the rest of the datagram")
            return
