"""Hostile constructions: inputs an attacker builds to crash, hang or bloat a dissector.

Each :class:`Hostile` class writes one input file at a size ``n`` (its unit: datagrams, segments,
flows, fragments, KB ...), so the harness (``tests/test_hostile.py``, ``benchmarks/bench_hostile.py``)
can run it at ``n`` and ``2n`` through ``read`` (every output format), scapy and tshark with the
generated Lua plugin, and check: exit 0 or a clean error, no traceback or Lua error, time and peak
RSS under the stated bounds, and no superlinear growth. The classes follow issue 15: lone
surrogates, deep Dictionary keys, huge length/count claims, 1-byte trickles (in order and
reversed), floods of flows, unbounded WebSocket frames, a debugger argument count of 2^31-1, ENet
tiny fragments and many-peer fragment groups, resync over fake length prefixes, a 2 GB
prefix then a trickle, junk after an implausible prefix, long PDUs cut by a gap or by the end of
their connection (RST, FIN, a new SYN on the same 4-tuple), cut captures, and .tscn files with many
sections or bad UTF-8.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..codec import encode
from ..enet import build as enet
from ..spec import enet as enet_spec
from ..spec.dialects import Dialect, get_dialect
from ..spec.transports import (
    DEBUGGER_PORTS,
    MAX_PDU,
    WS_BINARY,
    WS_CONTINUATION,
    WS_FIN,
    WS_LEN16,
    WS_LEN16_FIELD,
    WS_LEN64,
    WS_LEN64_FIELD,
)
from .pcapout import ACK, FIN, PSH, RST, SYN, PcapWriter

#: the port the constructions send Godot traffic to (``read -p``), the debugger's, an ENet port
PORT = 6000
DEBUGGER_PORT = DEBUGGER_PORTS[0]  # the reader's default: debugger_argc passes no --debugger-port
ENET_PORT = 6100
CLIENT, SERVER = ("10.0.0.1", 40000), ("10.0.0.2", PORT)

_U32 = struct.Struct("<I")
_GODOT3, _GODOT4 = get_dialect("godot3"), get_dialect("godot4")
_NULL = encode(None, _GODOT3)


def _head(d: Dialect, key: str, count: int) -> bytes:
    """A container or String header (the dialect's type id) with its count or byte length."""
    return _U32.pack(d.by_key(key).id) + _U32.pack(count)  # type: ignore[union-attr]


GOOD = encode("hello", _GODOT3)  # Godot 3/4 String "hello" (the same bytes in both)
SURROGATE = _head(_GODOT3, "STRING", 3) + b"\xed\xa0\x80\0"  # Godot 3 String: UTF-8 of U+D800 (the encoder refuses it)


def variant_array(depth: int) -> bytes:
    """A Godot 3 Array nested ``depth`` levels (the innermost empty)."""
    return _head(_GODOT3, "ARRAY", 1) * depth + _head(_GODOT3, "ARRAY", 0)


def deep_key_dictionary(depth: int) -> bytes:
    """A Godot 3 Dictionary whose one key is an Array nested ``depth`` levels, twice (equal keys), value null."""
    key = variant_array(depth)
    return _head(_GODOT3, "DICTIONARY", 2) + key + _NULL + key + _NULL


def nested_dictionary(depth: int) -> bytes:
    """A Godot 4 Dictionary nested ``depth`` levels as values: {1: {1: ... null}}."""
    return (_head(_GODOT4, "DICTIONARY", 1) + encode(1, _GODOT4)) * depth + encode(None, _GODOT4)


#: the segment size the hostile TCP streams are cut into (a typical Ethernet MSS, rounded)
MSS = 1400


class _Tcp:
    """One TCP connection in a PcapWriter: handshake, data (any segmentation), FIN."""

    def __init__(self, w: PcapWriter, client: tuple, server: tuple, handshake: bool = True, isn: int = 999,
                 t: float = 0.0) -> None:
        self.w, self.client, self.server = w, client, server
        self.cseq, self.sseq, self.t = isn + 1, isn + 4001, t
        if handshake:
            w.tcp(t, client, server, isn, 0, SYN)
            w.tcp(t, server, client, isn + 4000, isn + 1, SYN | ACK)
            w.tcp(t, client, server, isn + 1, isn + 4001, ACK)

    def send(self, data: bytes, c2s: bool = True) -> None:
        self.t += 1e-4
        if c2s:
            self.w.tcp(self.t, self.client, self.server, self.cseq, self.sseq, PSH | ACK, data)
            self.cseq += len(data)
        else:
            self.w.tcp(self.t, self.server, self.client, self.sseq, self.cseq, PSH | ACK, data)
            self.sseq += len(data)

    def send_segments(self, data: bytes, size: int = MSS) -> None:
        """Client data cut into segments of at most ``size`` bytes, in order."""
        for i in range(0, len(data), size):
            self.send(data[i:i + size])

    def segments_at(self, pieces: list[tuple[int, bytes]]) -> None:
        """Client data at explicit stream offsets (for reordering)."""
        for off, data in pieces:
            self.t += 1e-4
            self.w.tcp(self.t, self.client, self.server, self.cseq + off, self.sseq, PSH | ACK, data)

    def close(self) -> None:
        self.w.tcp(self.t + 1e-4, self.client, self.server, self.cseq, self.sseq, FIN | ACK)

    def reset(self) -> None:
        self.t += 1e-4
        self.w.tcp(self.t, self.client, self.server, self.cseq, self.sseq, RST | ACK)


# --- the constructions: build(n, path) ---------------------------------------------------------------

def _udp(path: Path, payloads: list[bytes]) -> None:
    w = PcapWriter(path)
    for i, p in enumerate(payloads):
        w.udp(i * 1e-3, CLIENT, SERVER, p)
    w.close()


def surrogates(n: int, path: Path) -> None:
    """Good Strings and Godot 3 Strings holding the UTF-8 of a lone surrogate, alternating."""
    _udp(path, [GOOD if i % 2 == 0 else SURROGATE for i in range(n)])


def deep_keys(n: int, path: Path) -> None:
    """Dictionaries keyed by an Array nested 500 and 1023 levels (the engine allows 1024), and one
    past the limit; good Strings between them."""
    depths = (500, 1023, 1024)
    _udp(path, [p for i in range(n) for p in (GOOD, deep_key_dictionary(depths[i % 3]))])


def deep_json(n: int, path: Path) -> None:
    """Godot 4 Dictionaries nested 333 levels (a JSON line 999 deep if written naively)."""
    _udp(path, [nested_dictionary(333)] * n)


def huge_claims(n: int, path: Path) -> None:
    """Counts and lengths of 2^31-1 (and 2^32-1) in every container and string, over short bodies;
    then a TCP stream whose length prefix claims 2 GB."""
    claims = []
    for type_id in (4, 18, 19, 20, 21, 22, 23, 24, 25, 26):  # String, Dictionary, Array, Pool*Arrays
        for count in (0x7FFFFFFF, 0xFFFFFFFF, 0x40000000):
            claims.append(_U32.pack(type_id) + _U32.pack(count) + b"\1\0\0\0" * 3)
    w = PcapWriter(path)
    for i in range(n):
        w.udp(i * 1e-3, CLIENT, SERVER, claims[i % len(claims)])
    tcp = _Tcp(w, ("10.0.0.1", 40001), SERVER)
    tcp.send(_U32.pack(0x7FFFFFFF) + GOOD)
    for _ in range(n):
        tcp.send(GOOD)
    tcp.close()
    w.close()


def _one_pdu(n: int) -> bytes:
    body = _U32.pack(29) + _U32.pack(n) + bytes(range(256)) * (n // 256) + bytes(n % 256)
    body += bytes(-len(body) % 4)
    return _U32.pack(len(body)) + body


def trickle(n: int, path: Path) -> None:
    """One length-prefixed PDU of about n bytes sent as n 1-byte TCP segments."""
    w = PcapWriter(path)
    tcp = _Tcp(w, CLIENT, SERVER)
    data = _one_pdu(n)
    for i in range(len(data)):
        tcp.send(data[i:i + 1])
    tcp.close()
    w.close()


def reversed_trickle(n: int, path: Path) -> None:
    """The same PDU as 1-byte segments in reverse order."""
    w = PcapWriter(path)
    tcp = _Tcp(w, CLIENT, SERVER)
    data = _one_pdu(n)
    tcp.segments_at([(i, data[i:i + 1]) for i in range(len(data) - 1, -1, -1)])
    w.close()


def big_prefix_trickle(n: int, path: Path) -> None:
    """A 2 GB length prefix, then n 1-byte segments (one error per skipped run, not per segment)."""
    w = PcapWriter(path)
    tcp = _Tcp(w, CLIENT, SERVER)
    tcp.send(_U32.pack(0x7FFFFFF0))
    for i in range(n):
        tcp.send(bytes((i & 0xFF,)))
    tcp.close()
    w.close()


def resync(n: int, path: Path) -> None:
    """A stream caught mid-way (no SYN) whose every 4-aligned word looks like a big length prefix."""
    w = PcapWriter(path)
    tcp = _Tcp(w, CLIENT, SERVER, handshake=False)
    data = bytes.fromhex("00004000") * (n * 256)
    tcp.send_segments(data)
    w.close()


GOOD_PDU = _U32.pack(len(GOOD)) + GOOD
#: a length prefix past MAX_PDU (lost synchronisation) and a long message's prefix (past the plugin's
#: LUA_DESEGMENT_MAX: collected by the plugin, not by Wireshark's reassembly)
IMPLAUSIBLE = _U32.pack(0xFFFFFFF0)


def _long_claim(size: int) -> bytes:
    """The first 8 bytes of a PDU whose body is a PackedByteArray of ``size`` bytes (a plausible header)."""
    return _U32.pack(size + 8) + _head(_GODOT3, "PACKED_BYTE_ARRAY", size)


def resync_junk(n: int, path: Path) -> None:
    """A confirmed stream, an implausible length prefix, then n KB of zeros and junk, then good PDUs
    (one skipped run; every good PDU after it decoded)."""
    w = PcapWriter(path)
    tcp = _Tcp(w, CLIENT, SERVER)
    for _ in range(3):
        tcp.send(GOOD_PDU)
    data = IMPLAUSIBLE + bytes(n * 512) + b"\xee" * (n * 512)
    tcp.send_segments(data)
    for _ in range(5):
        tcp.send(GOOD_PDU)
    tcp.send(GOOD_PDU * 3)
    tcp.close()
    w.close()


LONG_MARK = "long message after the run"


def _long_pdu(size: int) -> bytes:
    """A length-prefixed Godot 3 Array [String LONG_MARK, PackedByteArray of ``size`` bytes]: past the plugin's
    LUA_RESYNC_MAX / LUA_DESEGMENT_MAX when ``size`` is."""
    body = _head(_GODOT3, "ARRAY", 2) + encode(LONG_MARK, _GODOT3) + _head(_GODOT3, "PACKED_BYTE_ARRAY", size)
    body += bytes(range(256)) * (size // 256) + bytes(size % 256) + bytes(-size % 4)
    return _U32.pack(len(body)) + body


def resync_long_pdu(n: int, path: Path) -> None:
    """A confirmed stream, an implausible length prefix, 3 KB of junk, then a PDU of n KB (the first after the
    skipped run: longer than the plugin resynchronises on by its own bytes), then good PDUs."""
    w = PcapWriter(path)
    tcp = _Tcp(w, CLIENT, SERVER)
    for _ in range(3):
        tcp.send(GOOD_PDU)
    data = IMPLAUSIBLE + b"\xee" * 3000 + _long_pdu(n * 1024) + GOOD_PDU * 4
    tcp.send_segments(data)
    tcp.close()
    w.close()


def lost_then_reused(n: int, path: Path) -> None:
    """A skipped run whose candidate is a long PDU (n KB) that stops after 9000 bytes; the client closes (FIN)
    and a new connection on the same addresses and ports (new ISN) sends that PDU whole, then good PDUs. The
    old candidate's missing bytes are the new connection's first ones: joined, they read as a plausible message
    that no connection sent (the reader ends the run at the FIN and decodes the new connection's PDU)."""
    w = PcapWriter(path)
    tcp = _Tcp(w, CLIENT, SERVER)
    for _ in range(3):
        tcp.send(GOOD_PDU)
    tcp.send(IMPLAUSIBLE)
    long = _long_pdu(n * 1024)
    tcp.send_segments(long[:9000])
    tcp.close()
    tcp2 = _Tcp(w, CLIENT, SERVER, isn=777_000, t=tcp.t + 1e-3)
    data = long + GOOD_PDU * 4
    tcp2.send_segments(data)
    tcp2.close()
    w.close()


def reused_4tuple(n: int, path: Path) -> None:
    """n connections one after another on the same addresses and ports (new ISNs), each a good PDU, an implausible
    prefix and the first 5000 bytes of a 20 KB PDU (a skipped run holding a long candidate), ended in turn by a
    FIN, a RST, and a FIN with a segment of the old connection arriving after the next one's SYN; then a
    connection that sends the 20 KB PDU whole and good PDUs. Whatever a run held must end with its connection
    (never completed with the next connection's bytes), each connection decoded as the reader has it."""
    w = PcapWriter(path)
    long = _long_pdu(20 * 1024)
    t, late = 0.0, None
    for k in range(n + 1):
        tcp = _Tcp(w, CLIENT, SERVER, isn=1000 + k * 100_000, t=t)
        if late is not None:  # the old connection's next segment, after this one's handshake
            late.t = tcp.t
            late.send(long[5000:5000 + MSS])
            tcp.t, late = late.t, None
        if k == n:
            break
        tcp.send(GOOD_PDU)
        tcp.send(IMPLAUSIBLE)
        tcp.send_segments(long[:5000])
        if k % 3 == 1:
            tcp.reset()
        else:
            tcp.close()
            if k % 3 == 2:
                late = tcp
        t = tcp.t + 1e-3
    data = long + GOOD_PDU * 4
    tcp.send_segments(data)
    tcp.close()
    w.close()


def midway_long_claim(n: int, path: Path) -> None:
    """A stream the capture joins part-way (no SYN) whose first bytes claim a plausible n MB PDU that never comes:
    2 KB of junk, then good PDUs, a 16 KB PDU and good PDUs (the reader resynchronises on the first good PDU)."""
    w = PcapWriter(path)
    tcp = _Tcp(w, CLIENT, SERVER, handshake=False)
    data = _long_claim(n << 20) + b"\xee" * 2048 + GOOD_PDU * 3 + _long_pdu(16 * 1024) + GOOD_PDU * 3
    tcp.send_segments(data)
    tcp.close()
    w.close()


def held_then_closed(n: int, path: Path) -> None:
    """Two connections whose long PDU (announcing 2n KB) stops after n KB and the client closes (FIN): on the
    first nothing more is sent either way; on the second the server answers with a good PDU before closing."""
    w = PcapWriter(path)
    for port, answer in ((40000, False), (40001, True)):
        tcp = _Tcp(w, (CLIENT[0], port), SERVER, t=port - 40000)
        tcp.send(GOOD_PDU)
        body = _long_claim(n * 2048) + bytes(n * 1024)
        for i in range(0, len(body), 1000):
            tcp.send(body[i:i + 1000])
        tcp.close()
        if answer:
            tcp.send(GOOD_PDU, c2s=False)
    w.close()


def cut_connections(n: int, path: Path) -> None:
    """Long PDUs (announcing 2n KB) cut after n KB: one by a RST, one by a new SYN (new ISN) on the same
    addresses and ports; each then a new connection on the same 4-tuple with good PDUs."""
    w = PcapWriter(path)
    for port, rst in ((40000, True), (40001, False)):
        client = (CLIENT[0], port)
        tcp = _Tcp(w, client, SERVER, t=port - 40000)
        for _ in range(2):
            tcp.send(GOOD_PDU)
        body = _long_claim(n * 2048) + bytes(n * 1024)
        for i in range(0, len(body), 1000):
            tcp.send(body[i:i + 1000])
        if rst:
            tcp.reset()
        tcp2 = _Tcp(w, client, SERVER, isn=777_000 + port, t=tcp.t + 1e-3)
        for _ in range(4):
            tcp2.send(GOOD_PDU)
        tcp2.close()
    w.close()


def held_gap(n: int, path: Path) -> None:
    """A long PDU (n KB) with one segment never captured in its middle, then good PDUs."""
    w = PcapWriter(path)
    tcp = _Tcp(w, CLIENT, SERVER)
    for _ in range(2):
        tcp.send(GOOD_PDU)
    body = _long_claim(n * 1024 - 8) + bytes(n * 1024 - 8)
    gap = (len(body) // 2000) * 1000
    for i in range(0, len(body), 1000):
        if i == gap:
            tcp.cseq += len(body[i:i + 1000])  # lost
            continue
        tcp.send(body[i:i + 1000])
    for _ in range(4):
        tcp.send(GOOD_PDU)
    tcp.close()
    w.close()


def ended_flows(n: int, path: Path) -> None:
    """n connections whose long PDU (announcing MAX_PDU bytes) ends unfinished by a RST or a FIN, more than
    the capture's MAX_HELD_BYTES in all; then a connection with a whole 8 KB PDU (what an ended flow held
    must be released, or the last PDU would go past the budget)."""
    w = PcapWriter(path)
    t = 0.0
    for i in range(n):
        tcp = _Tcp(w, (CLIENT[0], 41000 + i), SERVER, t=t)
        tcp.send(GOOD_PDU)
        tcp.send(_long_claim(MAX_PDU - 8) + bytes(1992))
        tcp.reset() if i % 2 == 0 else tcp.close()
        t = tcp.t + 1e-3
    tcp = _Tcp(w, (CLIENT[0], 40999), SERVER, t=t)
    tcp.send(GOOD_PDU)
    body = _long_claim(8192) + bytes(8192)
    for i in range(0, len(body), 1000):
        tcp.send(body[i:i + 1000])
    tcp.close()
    w.close()


def flows(n: int, path: Path) -> None:
    """n DNS-like UDP exchanges and n short non-Godot TCP connections, each its own conversation."""
    w = PcapWriter(path)
    for i in range(n):
        client = (f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}", 1024 + i % 60000)
        w.udp(i * 1e-4, client, ("10.255.0.53", 53), b"\x12\x34\x01\x00\x00\x01" + bytes(20))
        w.udp(i * 1e-4, ("10.255.0.53", 53), client, b"\x12\x34\x81\x80\x00\x01" + bytes(40))
        tcp = _Tcp(w, client, ("10.255.0.80", 80))
        tcp.send(b"GET / HTTP/1.0\r\n\r\n")
        tcp.close()
    w.close()


def _ws_handshake(tcp: _Tcp) -> None:
    tcp.send(b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    tcp.send(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n", c2s=False)


def websocket_unbounded(n: int, path: Path) -> None:
    """A WebSocket binary frame claiming 2^63-1 bytes, then n KB; and a message never FIN'd."""
    w = PcapWriter(path)
    tcp = _Tcp(w, CLIENT, SERVER)
    _ws_handshake(tcp)
    tcp.send(bytes((WS_FIN | WS_BINARY, WS_LEN64)) + WS_LEN64_FIELD.pack((1 << 63) - 1), c2s=False)
    for _ in range(n):
        tcp.send(bytes(1024), c2s=False)
    tcp.close()
    tcp2 = _Tcp(w, ("10.0.0.1", 40002), SERVER)
    _ws_handshake(tcp2)
    for i in range(n):  # a binary frame without FIN, then continuation frames without FIN
        opcode = WS_BINARY if i == 0 else WS_CONTINUATION
        tcp2.send(bytes((opcode, WS_LEN16)) + WS_LEN16_FIELD.pack(1024) + bytes(1024), c2s=False)
    tcp2.close()
    w.close()


def debugger_argc(n: int, path: Path) -> None:
    """Godot 3 debugger: a message name, then an argument count of 2^31-1, then n small packets."""
    w = PcapWriter(path)
    tcp = _Tcp(w, CLIENT, ("10.0.0.2", DEBUGGER_PORT))

    def packet(v: bytes) -> bytes:
        return _U32.pack(len(v)) + v

    name = packet(encode("output", _GODOT3))
    tcp.send(name + packet(encode(0x7FFFFFFF, _GODOT3)))
    for i in range(n):
        tcp.send(packet(encode(i, _GODOT3)))
    tcp.close()
    w.close()


def _enet_connect(w: PcapWriter, client: tuple, server: tuple) -> None:
    w.udp(0, client, server, enet.build_datagram(enet_spec.UNASSIGNED_PEER_ID, [
        enet.connect(0, 0x1234, 0, 2)], sent_time=1))


def enet_tiny_fragments(n: int, path: Path) -> None:
    """ENet SEND_FRAGMENTs of groups of 2^20 fragments, never completed: dataLength 1 (the least
    ENet takes) and, every 8th, dataLength 0 (which ENet refuses)."""
    w = PcapWriter(path)
    client, server = ("10.0.0.1", 40000), ("10.0.0.2", ENET_PORT)
    _enet_connect(w, client, server)
    count = enet_spec.MAX_FRAGMENT_COUNT
    per = enet_spec.MAX_PACKET_COMMANDS
    for i in range(0, n, per):
        cmds = [enet.send_fragment(0, (i + k) & 0xFFFF, 1, count, i + k, count, i + k,
                                   b"" if (i + k) % 8 == 7 else b"x")
                for k in range(min(per, n - i))]
        w.udp(i * 1e-5, client, server, enet.build_datagram(0, cmds, sent_time=i & 0xFFFF))
    w.close()


def enet_many_peers(n: int, path: Path) -> None:
    """128 peers, each sending n KB of fragments of never-completed 32 MB groups."""
    w = PcapWriter(path)
    server = ("10.0.0.2", ENET_PORT)
    total = enet_spec.MAX_PACKET_SIZE
    step = 1024
    for peer in range(128):
        _enet_connect(w, ("10.0.1.1", 41000 + peer), server)
    t = 0.0
    for k in range(n):
        for peer in range(128):
            t += 1e-5
            cmd = enet.send_fragment(0, (k + 1) & 0xFFFF, 1, total // step, k, total, k * step, bytes(step))
            w.udp(t, ("10.0.1.1", 41000 + peer), server, enet.build_datagram(0, [cmd], sent_time=k & 0xFFFF))
    w.close()


def enet_command_flood(peers: int, per_peer: int, path: Path) -> None:
    """``peers`` ENet peers, each sending ``per_peer`` reliable commands whose sequence numbers never repeat
    (interleaved, MAX_PACKET_COMMANDS a datagram): every command is remembered to tell a retransmission, so
    many peers together fill what the capture remembers (SEEN_TOTAL) many times over."""
    w = PcapWriter(path)
    server = ("10.0.0.2", ENET_PORT)
    per = enet_spec.MAX_PACKET_COMMANDS
    clients = [(f"10.1.{peer >> 8}.{peer & 255}", 41000) for peer in range(peers)]
    for c in clients:
        _enet_connect(w, c, server)
    t = 0.0
    for i in range(1, per_peer + 1, per):
        cmds = [enet.send_reliable(1, seq & 0xFFFF, b"") for seq in range(i, min(i + per, per_peer + 1))]
        datagram = enet.build_datagram(0, cmds, sent_time=i & 0xFFFF)
        for c in clients:
            t += 1e-5
            w.udp(t, c, server, datagram)
    w.close()


def cut_captures(n: int, path: Path, source: Path) -> None:
    """A real capture cut at n places (here: the cut nearest n bytes from the start)."""
    data = source.read_bytes()
    path.write_bytes(data[:max(24, min(len(data) - 1, n))])


def tscn_sections(n: int, path: Path) -> None:
    """A .tscn with n node sections."""
    out = ['[gd_scene load_steps=1 format=2]\n\n[node name="Root" type="Node"]\n']
    out += [f'\n[node name="N{i}" type="Node2D" parent="."]\nposition = Vector2( {i}, 2 )\n' for i in range(n)]
    path.write_text("".join(out), encoding="utf-8")


def tscn_bad_utf8(n: int, path: Path) -> None:
    """A .tscn with n good sections, then a line that is not UTF-8."""
    tscn_sections(n, path)
    with open(path, "ab") as f:
        f.write(b'\n[node name="\xff\xfe" type="Node"]\n')


@dataclass(frozen=True)
class Hostile:
    """One class of hostile input: how to build it and how to read it."""

    name: str
    build: Callable[[int, Path], None]
    sizes: tuple[int, int]  # the small and the large n of CI (the large is twice the small)
    unit: str
    suffix: str = ".pcap"
    read_args: tuple[str, ...] = ("-p", str(PORT))
    scales: bool = True  # the 2x-input time check applies
    lua: bool = True  # tshark + the Lua plugin read it
    #: error records ``read`` must give at any size (min, max; None: no upper bound): what a bound
    #: cuts off is reported, once per cut run and not once per segment
    errors: tuple[int, int | None] = (0, None)


CLASSES: tuple[Hostile, ...] = (
    Hostile("surrogate", surrogates, (200, 400), "datagrams", errors=(0, 0)),
    Hostile("deep_key", deep_keys, (6, 12), "datagrams", errors=(2, 4)),  # the 1024-level keys
    Hostile("deep_json", deep_json, (5, 10), "datagrams", errors=(0, 0)),
    Hostile("huge_claims", huge_claims, (300, 600), "datagrams + segments", errors=(1, None)),
    Hostile("trickle", trickle, (4000, 8000), "1-byte segments", errors=(0, 0)),
    Hostile("reversed", reversed_trickle, (4000, 8000), "1-byte segments", errors=(0, 0)),
    Hostile("big_prefix_trickle", big_prefix_trickle, (4000, 8000), "1-byte segments", errors=(1, 4)),
    Hostile("resync", resync, (64, 128), "KB", errors=(1, 8)),
    Hostile("resync_junk", resync_junk, (64, 128), "KB", errors=(1, 1)),
    Hostile("cut_connections", cut_connections, (64, 128), "KB", errors=(2, 2)),
    Hostile("held_gap", held_gap, (64, 128), "KB", errors=(1, 2)),
    Hostile("ended_flows", ended_flows, (16, 32), "connections", errors=(16, 32)),
    Hostile("reused_4tuple", reused_4tuple, (500, 1000), "connections", errors=(500, 1000)),
    Hostile("flows", flows, (1000, 2000), "UDP + TCP flows"),
    Hostile("websocket", websocket_unbounded, (500, 1000), "KB", errors=(1, 8)),
    Hostile("debugger_argc", debugger_argc, (4000, 8000), "packets", read_args=("-d", "godot3"), errors=(1, 8)),
    Hostile("enet_tiny_fragments", enet_tiny_fragments, (20000, 40000), "fragments",
            read_args=("--enet-port", str(ENET_PORT)), errors=(1, None)),
    Hostile("enet_peers", enet_many_peers, (16, 32), "KB per peer", read_args=("--enet-port", str(ENET_PORT)),
            errors=(128, None)),
    Hostile("tscn_sections", tscn_sections, (4000, 8000), "sections", suffix=".tscn", read_args=(), lua=False),
    Hostile("tscn_bad_utf8", tscn_bad_utf8, (100, 200), "sections", suffix=".tscn", read_args=(), scales=False,
            lua=False),
)

BY_NAME = {h.name: h for h in CLASSES}
