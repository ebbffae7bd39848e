"""Commands and datagrams -> bytes, from the spec tables (for crafting, tests, fuzzing and wrapping
engine-made Godot packets in ENet).

Values are written as given, so malformed datagrams can be crafted too (a ``data_length`` that
disagrees with the data, flags ENet never sets, ...); only values that do not fit their field are
refused with ValueError.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from ..spec import enet as spec
from ..spec.words import BitField
from .model import Command, Datagram

_COMMAND_STRUCTS = {
    c.number: struct.Struct(spec.COMMAND_HEADER_FORMAT + c.body_format[len(spec.BYTE_ORDER):])
    for c in spec.COMMANDS
}
_HEADER_STRUCT = struct.Struct(spec.COMMAND_HEADER_FORMAT)
_WORD = struct.Struct(spec.HEADER_PEER_WORD.code)
_SENT_TIME = struct.Struct(spec.HEADER_SENT_TIME.code)
_CHECKSUM = struct.Struct(spec.HEADER_CHECKSUM.code)


def _fits(name: str, value: int, bitfield: BitField) -> None:
    if not 0 <= value < 1 << bitfield.width:
        raise ValueError(f"{name} {value} does not fit in {bitfield.width} bits")


def build_command_bytes(cmd: Command) -> bytes:
    """One command on the wire: header, fixed body in spec order, then the data."""
    d = spec.COMMANDS_BY_NUMBER.get(cmd.number)
    if d is None:
        # not a real command: only the header can be written (fuzzing ENet's "unknown command")
        return _HEADER_STRUCT.pack(cmd.command_byte, cmd.channel, cmd.reliable_seq)
    values = dict(cmd.fields)
    data = cmd.data or b""
    if d.data_length is not None:
        values.setdefault(d.data_length, len(data))
    missing = [n for n in d.field_names if n not in values]
    if missing:
        raise ValueError(f"{d.name}: missing field(s) {', '.join(missing)}")
    try:
        head = _COMMAND_STRUCTS[d.number].pack(cmd.command_byte, cmd.channel, cmd.reliable_seq,
                                               *(values[n] for n in d.field_names))
    except struct.error as e:
        raise ValueError(f"{d.name}: a value does not fit its field ({e})") from None
    return head + data


def build_datagram(peer_id: int, commands: Iterable[Command], sent_time: int | None = None, session_id: int = 0,
                   *, compressed_body: bytes | None = None, checksum: int | None = None) -> bytes:
    """A UDP payload: the header (SENT_TIME flag set when ``sent_time`` is given) and the commands.

    ``compressed_body``: bytes to send instead of the commands, with the COMPRESSED flag set (what a
    host with a compressor sends; make them with ``godot_dissect.enet.compression.compress``).
    ``checksum``: a u32 after the header (hosts with a checksum callback; not Godot).
    """
    _fits("peer_id", peer_id, spec.PEER_ID)
    _fits("session_id", session_id, spec.SESSION_ID)
    word = (spec.PEER_ID.put(peer_id) | spec.SESSION_ID.put(session_id)
            | spec.FLAG_COMPRESSED.put(int(compressed_body is not None))
            | spec.FLAG_SENT_TIME.put(int(sent_time is not None)))
    out = [_WORD.pack(word)]
    if sent_time is not None:
        out.append(_SENT_TIME.pack(sent_time & 0xFFFF))
    if checksum is not None:
        out.append(_CHECKSUM.pack(checksum))
    if compressed_body is not None:
        out.append(bytes(compressed_body))
    else:
        out.extend(build_command_bytes(c) for c in commands)
    return b"".join(out)


def rebuild(dg: Datagram) -> bytes:
    """The bytes of a parsed datagram again (compressed datagrams keep their compressed body)."""
    return build_datagram(dg.peer_id, dg.commands, dg.sent_time, dg.session_id,
                          compressed_body=dg.body if dg.compressed else None, checksum=dg.checksum)


# --- one builder per command ---------------------------------------------------------------------

def command(name: str, channel: int, reliable_seq: int = 0, payload: bytes | None = None, *, ack: bool = False,
            unsequenced: bool = False, **fields: int) -> Command:
    """Any command by spec name with its body fields as keyword arguments (``payload``: the packet
    data of the data commands; CONNECT and DISCONNECT have a u32 body field called ``data``)."""
    d = spec.COMMANDS_BY_NAME[name]
    unknown = set(fields) - set(d.field_names)
    if unknown:
        raise ValueError(f"{name} has no field(s) {', '.join(sorted(unknown))}; it has {', '.join(d.field_names)}")
    if d.data_length is not None:
        fields.setdefault(d.data_length, len(payload or b""))
    flags = spec.FLAG_ACKNOWLEDGE.put(int(ack)) | spec.FLAG_UNSEQUENCED.put(int(unsequenced))
    return Command(d.number, channel, reliable_seq, dict(fields), (payload or b"") if d.data_length else None, flags)


def acknowledge(channel: int, received_reliable_seq: int, received_sent_time: int) -> Command:
    """ENet copies the acked command's channel and reliable_seq into the ACK's header."""
    return command("ACKNOWLEDGE", channel, received_reliable_seq, received_reliable_seq=received_reliable_seq,
                   received_sent_time=received_sent_time)


@dataclass(frozen=True)
class Handshake:
    """The fields CONNECT and VERIFY_CONNECT share besides the peer, connection id and channel count;
    the defaults are what a fresh ENet host sends."""

    mtu: int = spec.DEFAULT_MTU[3]
    window_size: int = spec.MAX_WINDOW_SIZE
    incoming_bandwidth: int = 0
    outgoing_bandwidth: int = 0
    # enet.h: ENET_PEER_PACKET_THROTTLE_INTERVAL / _ACCELERATION / _DECELERATION
    packet_throttle_interval: int = 5000
    packet_throttle_acceleration: int = 2
    packet_throttle_deceleration: int = 2


def _handshake(name: str, outgoing_peer_id: int, connect_id: int, channel_count: int, reliable_seq: int,
               incoming_session_id: int, outgoing_session_id: int, options: dict[str, int],
               **extra: int) -> Command:
    fields = asdict(Handshake(**options))  # an unknown option is a TypeError naming it
    return command(name, spec.CONTROL_CHANNEL, reliable_seq, ack=True, outgoing_peer_id=outgoing_peer_id,
                   incoming_session_id=incoming_session_id, outgoing_session_id=outgoing_session_id,
                   channel_count=channel_count, connect_id=connect_id, **fields, **extra)


def connect(outgoing_peer_id: int, connect_id: int, data: int, channel_count: int, *, reliable_seq: int = 1,
            incoming_session_id: int = 0xFF, outgoing_session_id: int = 0xFF, **options: int) -> Command:
    """CONNECT (reliable, channel 0xFF); Godot puts the client's unique id in ``data``. ``options``: any
    :class:`Handshake` field (mtu, window_size, bandwidths, throttle), ENet's defaults otherwise."""
    return _handshake("CONNECT", outgoing_peer_id, connect_id, channel_count, reliable_seq, incoming_session_id,
                      outgoing_session_id, options, data=data)


def verify_connect(outgoing_peer_id: int, connect_id: int, channel_count: int, *, reliable_seq: int = 1,
                   incoming_session_id: int = 0, outgoing_session_id: int = 0, **options: int) -> Command:
    """VERIFY_CONNECT, the server's answer to CONNECT; ``options`` as :func:`connect`."""
    return _handshake("VERIFY_CONNECT", outgoing_peer_id, connect_id, channel_count, reliable_seq,
                      incoming_session_id, outgoing_session_id, options)


def disconnect(data: int = 0, *, reliable_seq: int = 0, ack: bool = True) -> Command:
    """DISCONNECT; ENet asks for an ACK when connected and sends it UNSEQUENCED otherwise."""
    return command("DISCONNECT", spec.CONTROL_CHANNEL, reliable_seq, ack=ack, unsequenced=not ack, data=data)


def ping(reliable_seq: int) -> Command:
    return command("PING", spec.CONTROL_CHANNEL, reliable_seq, ack=True)


def send_reliable(channel: int, reliable_seq: int, data: bytes) -> Command:
    return command("SEND_RELIABLE", channel, reliable_seq, data, ack=True)


def send_unreliable(channel: int, reliable_seq: int, unreliable_seq: int, data: bytes) -> Command:
    """``reliable_seq`` is the channel's last reliable sequence number (ENet orders against it)."""
    return command("SEND_UNRELIABLE", channel, reliable_seq, data, unreliable_seq=unreliable_seq)


def send_unsequenced(channel: int, unsequenced_group: int, data: bytes) -> Command:
    return command("SEND_UNSEQUENCED", channel, 0, data, unsequenced=True, unsequenced_group=unsequenced_group)


def send_fragment(channel: int, reliable_seq: int, start_seq: int, fragment_count: int, fragment_number: int,
                  total_length: int, fragment_offset: int, data: bytes, *, reliable: bool = True) -> Command:
    """One SEND_FRAGMENT (``reliable``) or SEND_UNRELIABLE_FRAGMENT."""
    return command("SEND_FRAGMENT" if reliable else "SEND_UNRELIABLE_FRAGMENT", channel, reliable_seq, data,
                   ack=reliable, start_seq=start_seq, fragment_count=fragment_count,
                   fragment_number=fragment_number, total_length=total_length, fragment_offset=fragment_offset)


def bandwidth_limit(reliable_seq: int, incoming_bandwidth: int, outgoing_bandwidth: int) -> Command:
    return command("BANDWIDTH_LIMIT", spec.CONTROL_CHANNEL, reliable_seq, ack=True,
                   incoming_bandwidth=incoming_bandwidth, outgoing_bandwidth=outgoing_bandwidth)


def throttle_configure(reliable_seq: int, interval: int, acceleration: int, deceleration: int) -> Command:
    return command("THROTTLE_CONFIGURE", spec.CONTROL_CHANNEL, reliable_seq, ack=True,
                   packet_throttle_interval=interval, packet_throttle_acceleration=acceleration,
                   packet_throttle_deceleration=deceleration)


def fragment_length(mtu: int, checksum: bool = False) -> int:
    """Data bytes per fragment, as ``enet_peer_send`` computes it (header with sent time assumed)."""
    head = _WORD.size + _SENT_TIME.size + (_CHECKSUM.size if checksum else 0)
    return mtu - head - spec.COMMANDS_BY_NAME["SEND_FRAGMENT"].size


def fragments(channel: int, data: bytes, start_seq: int, *, mtu: int = spec.DEFAULT_MTU[3], reliable: bool = True,
              reliable_seq: int = 0) -> list[Command]:
    """Split a packet the way ``enet_peer_send`` does. Reliable fragments get reliable_seq
    start_seq, start_seq + 1, ...; unreliable ones share ``reliable_seq`` and unreliable start_seq."""
    step = fragment_length(mtu)
    count = max(1, -(-len(data) // step))
    out = []
    for n in range(count):
        off = n * step
        seq = (start_seq + n) % spec.SEQ_MODULO if reliable else reliable_seq
        out.append(send_fragment(channel, seq, start_seq, count, n, len(data), off, data[off:off + step],
                                 reliable=reliable))
    return out
