"""Whole Godot multiplayer messages from dissected packets: ENet reassembly and path caches.

scapy dissects one packet at a time; two things need the packets before it:

* ENet fragments: :func:`enet_reassemble` feeds each direction's commands (read from the scapy
  layers) to ``godot_dissect.enet.EnetReassembler`` and dissects every packet the receiving ENet
  would hand to Godot (``ReassembledPacket.layer``);
* node paths: a RPC names its node by the sender's path cache id; :func:`multiplayer_messages`
  keeps each conversation's SIMPLIFY_PATH announcements per sender and fills ``node`` in.

Both take packets in capture order (``rdpcap``, or ``sniff(offline=..., session=TCPSession)`` so
that WebSocket messages split over TCP segments are whole).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.packet import NoPayload, Packet, Raw

from ..enet import Command, Datagram, EnetReassembler
from ..spec import enet as spec
from ..spec.multiplayer import WS3_TYPES
from .enet import ENet, ENetCommand, ENetCompressedBody, commands_of, major_of
from .fields import MISSING
from .framing import GodotWebSocket
from .mplayout import MPBase, lookup
from .mpsettings import scapy_name
from .multiplayer import WS3_DATA_TYPE, GodotWSMultiplayer3, godot_payload_class, read_layer
from .wsmultiplayer import direction_of

Endpoint = tuple[str, int]


# -- ENet reassembly ---------------------------------------------------------------------------------
@dataclass
class ReassembledPacket:
    """One packet as the receiving ENet hands it to Godot. ``frame`` (from 1) completed it;
    ``layer`` is its Godot layer (None with ``error`` for a fragment group that never completed)."""

    frame: int
    time: float
    src: Endpoint
    dst: Endpoint
    channel: int | None
    delivery: str
    fragments: int
    data: bytes
    layer: Packet | None
    error: str | None = None


def _endpoints(pkt: Packet) -> tuple[Endpoint, Endpoint] | None:
    ip = pkt.getlayer(IP) or pkt.getlayer(IPv6)
    l4 = pkt.getlayer(UDP) or pkt.getlayer(TCP)
    if ip is None or l4 is None:
        return None
    return (ip.src, l4.sport), (ip.dst, l4.dport)


def datagram_of(enet: Packet) -> Datagram:
    """The ``godot_dissect.enet`` model of a dissected (or crafted) ENet layer."""
    g = enet.getfieldval
    compressed = bool(enet.get_field("compressed").i2m(enet, g("compressed")))
    body = enet.getlayer(ENetCompressedBody)
    dg = Datagram(g("peer_id"), g("session_id"), compressed, g(scapy_name("sent_time")))
    if compressed and (body is None or isinstance(body.payload, NoPayload)):
        dg.body = bytes(body.getfieldval("data") or b"") if body is not None else b""
        return dg  # opaque: no codec
    if compressed:
        dg.decompressed = b""  # decoded: the commands below are what ENet reads
    for c in commands_of(enet):
        d = getattr(type(c), "definition", None)
        if not isinstance(c, ENetCommand) or d is None:
            continue
        data = bytes(c.payload) if d.data_length is not None and not isinstance(c.payload, NoPayload) else b""
        fields = {f.name: c.getfieldval(scapy_name(f.name)) for f in d.fields}
        if d.data_length is not None and fields[d.data_length] is None:
            fields[d.data_length] = len(data)
        flags = spec.FLAG_ACKNOWLEDGE.put(c.ack_requested) | spec.FLAG_UNSEQUENCED.put(c.unsequenced)
        dg.commands.append(Command(d.number, c.channel, c.reliable_seq, fields,
                                   data if d.data_length is not None else None, flags))
    return dg


def enet_reassemble(packets: Iterable[Packet]) -> list[ReassembledPacket]:
    """Every packet the receiving ENet hands to Godot, per direction, in capture order: fragments
    joined, retransmissions delivered once; fragment groups still open at the end are errors."""
    out: list[ReassembledPacket] = []
    sides: dict[tuple[Endpoint, Endpoint], tuple[EnetReassembler, ENet]] = {}
    for i, pkt in enumerate(packets, 1):
        enet = pkt.getlayer(ENet)
        ends = _endpoints(pkt)
        if enet is None or ends is None:
            continue
        r = sides.get(ends)
        if r is None:
            r = sides[ends] = (EnetReassembler(), enet)
        for p in r[0].feed(datagram_of(enet), i, float(pkt.time)):
            out.append(_reassembled(p, ends, enet))
    for ends, (r, enet) in sides.items():
        out += [_reassembled(p, ends, enet) for p in r.finish()]
    return out


def _reassembled(p: Any, ends: tuple[Endpoint, Endpoint], enet: ENet) -> ReassembledPacket:
    layer = None
    if p.error is None and p.data:
        major = major_of(enet, p.data, p.channel)
        layer = godot_payload_class(major, p.channel)(p.data) if major is not None else Raw(p.data)
    return ReassembledPacket(p.frame, p.time, ends[0], ends[1], p.channel, p.delivery, p.fragments, p.data,
                             layer, p.error)


# -- messages ---------------------------------------------------------------------------------------
@dataclass
class MultiplayerMessage:
    """One Godot multiplayer message read from scapy layers, with its node path resolved through
    the sender's path cache when the capture announced it."""

    frame: int
    src: Endpoint
    dst: Endpoint
    transport: str  # "enet" | "websocket"
    direction: str  # "c2s" | "s2c"
    layer: Packet  # the multiplayer layer (GodotMP3*, GodotMP4*, a transport message)
    kind: str
    command: str
    node: str | None = None
    node_id: int | None = None
    method: str | None = None
    method_id: int | None = None
    args: list[Any] | None = None
    value: Any = None
    peer: int | None = None
    sender: Any = None
    channel: int | None = None
    inner: MultiplayerMessage | None = None
    fields: dict[str, Any] = field(default_factory=dict)


def multiplayer_messages(packets: Iterable[Packet]) -> list[MultiplayerMessage]:
    """Every multiplayer message in the packets: ENet (reassembled) and WebSocket."""
    pkts = list(packets)
    out: list[MultiplayerMessage] = []
    clients: dict[frozenset, Endpoint] = {}
    convs: dict[frozenset, _Conversation] = {}
    for i, pkt in enumerate(pkts, 1):
        ends = _endpoints(pkt)
        if ends is None:
            continue
        key = frozenset(ends)
        client = clients.setdefault(key, ends[0])  # the side that opened the conversation
        direction = "c2s" if ends[0] == client else "s2c"
        ws = pkt.getlayer(GodotWebSocket)
        while isinstance(ws, GodotWebSocket):
            layer = ws.payload
            if isinstance(layer, MPBase):
                wdir = direction_of(ws)
                out += convs.setdefault(key, _Conversation()).messages(layer, i, ends, "websocket", wdir, None)
            ws = _next_message(ws)
    for rp in enet_reassemble(pkts):
        if rp.layer is None or not isinstance(rp.layer, MPBase):
            continue
        key = frozenset((rp.src, rp.dst))
        client = clients.setdefault(key, rp.src)
        direction = "c2s" if rp.src == client else "s2c"
        out += convs.setdefault(key, _Conversation()).messages(rp.layer, rp.frame, (rp.src, rp.dst), "enet",
                                                               direction, rp.channel)
    out.sort(key=lambda m: m.frame)
    return out


def _next_message(ws: Packet) -> Packet | None:
    layer = ws.payload
    while layer is not None and not isinstance(layer, NoPayload):
        if isinstance(layer, GodotWebSocket):
            return layer
        layer = layer.payload
    return None


class _Conversation:
    """Path caches of one conversation, per sender (SceneCacheInterface / MultiplayerAPI)."""

    def __init__(self) -> None:
        self.paths: dict[Any, dict[int, str]] = {}
        self.client_id: int | None = None

    def messages(self, layer: Packet, frame: int, ends: tuple[Endpoint, Endpoint], transport: str, direction: str,
                 channel: int | None) -> list[MultiplayerMessage]:
        sender: Any = None
        if isinstance(layer, GodotWSMultiplayer3):
            sender = lookup(layer, "from")
            if lookup(layer, "type") != WS3_DATA_TYPE:
                sys = read_layer(layer.payload) if isinstance(layer.payload, MPBase) else {}
                sys["command"] = WS3_TYPES.get(lookup(layer, "type"), "")
                return [self._message(sys or dict(kind="peer", command=""), layer, frame, ends, transport,
                                      direction, channel, sender)]
            layer = layer.payload
        elif type(layer).__name__.startswith("GodotENetPeerHeader3"):
            sender = lookup(layer, "src")
            layer = layer.payload
        if not isinstance(layer, MPBase):
            return []
        got = read_layer(layer)
        if got.get("command") == "PEER_ID":
            self.client_id = got.get("peer")
        if sender is None and type(layer).__name__.startswith("GodotMP4"):
            sender = 1 if direction == "s2c" else (self.client_id if self.client_id is not None else "client")
        msg = self._message(got, layer, frame, ends, transport, direction, channel, sender)
        if type(layer).case is not None and isinstance(layer.payload, MPBase):  # SYS RELAY
            inner_sender = msg.peer if direction == "s2c" else sender
            msg.inner = self._message(read_layer(layer.payload), layer.payload, frame, ends, transport, direction,
                                      channel, inner_sender)
        return [msg]

    def _message(self, got: dict[str, Any], layer: Packet, frame: int, ends: tuple[Endpoint, Endpoint],
                 transport: str, direction: str, channel: int | None, sender: Any) -> MultiplayerMessage:
        m = MultiplayerMessage(frame, ends[0], ends[1], transport, direction, layer, got.get("kind", "error"),
                               got.get("command", ""), got.get("node"), got.get("node_id"), got.get("method"),
                               got.get("method_id"), got.get("args"), got.get("value"), got.get("peer"), sender,
                               channel)
        if m.kind == "simplify_path" and m.node is not None and m.node_id is not None:
            self.paths.setdefault(sender, {})[m.node_id] = m.node
        elif m.kind in ("rpc", "rset") and m.node is None and m.node_id is not None:
            m.node = self.paths.get(sender, {}).get(m.node_id)
        if m.args is not None and any(a is MISSING for a in m.args):
            m.kind = "error"
        return m
