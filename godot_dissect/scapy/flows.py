"""Which dialect and which framing a conversation speaks, remembered per flow.

There is no version marker on the wire. Each flow's messages go to the flow's
``detect.DialectGuess`` -- the one ``read_pcap`` uses -- (candidates: ``detect.CANDIDATES``
without the paper-only ones); once the best reading of the flow belongs to one engine family,
the flow's dialect is settled and later messages are read with it first. While dialects tie,
the tie goes to what other flows of the capture settled on, then to the preference order. A
message the flow's dialect does not read exactly is read with the best dialect that does. A port
bound with a dialect (``bind_godot_ports(..., dialect=...)``) skips all of this. What a TCP flow
carries is decided by ``detect``'s classifier (``http_head``, ``pdu_start``), as for ``read_pcap``.

The table is bounded (oldest flows are forgotten first); ``reset_flows()`` empties it.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from scapy.layers.inet import TCP, UDP
from scapy.packet import Packet

from ..codec import decode_prefix
from ..detect import CANDIDATES as _DETECT_CANDIDATES
from ..detect import DialectGuess, http_head, pdu_start, plausible
from ..enet import looks_like_enet, parse_datagram
from ..errors import DecodeError
from ..spec import enet as ENET
from ..spec import get_dialect
from ..spec.transports import MAX_DEPTH, MAX_HTTP_HEAD
from .mpsettings import port_compression

__all__ = ["CANDIDATES", "choose", "classify_stream", "plausible", "reset_flows"]
#: dialects tried on traffic, in preference order (the docs-table dialect exists only on paper)
CANDIDATES = tuple(d for d in _DETECT_CANDIDATES if not get_dialect(d).doc_only)
MAX_FLOWS = 65536
#: kept for callers of the old name: ``detect.pdu_start``
pdu_start_plausible = pdu_start


@dataclass(slots=True)
class Flow:
    kind: str | None = None  # "variant" | "pdu" | "debugger" | "websocket" | "enet" | "ignore"
    dialect: str | None = None
    clear: bool = False  # the dialect was settled by a message only one engine family reads
    confirmed: bool = False  # a whole message was seen (heuristic flows)
    major: int | None = None  # Godot major of a multiplayer flow (ENet CONNECT, WebSocket first message)
    ws_peer_msg: bytes | None = None  # a Godot 4 WebSocket flow's peer-id message (read as such again)
    guess: DialectGuess | None = None  # while the dialect is not settled


class FlowTable:
    def __init__(self) -> None:
        self.flows: OrderedDict[Any, Flow] = OrderedDict()
        self.settled: Counter[str] = Counter()  # dialects flows of this capture settled on

    def get(self, key: Any) -> Flow | None:
        return self.flows.get(key) if key is not None else None

    def add(self, key: Any) -> Flow:
        f = self.flows.get(key)
        if f is None:
            f = self.flows[key] = Flow()
            if len(self.flows) > MAX_FLOWS:
                self.flows.popitem(last=False)
        return f


TABLE = FlowTable()
#: (proto, port) -> fixed dialect name, or None for "detect"; filled by bind_godot_ports
PORT_DIALECTS: dict[tuple[str, int], str | None] = {}


def reset_flows() -> None:
    """Forget every flow's dialect and framing (e.g. between two capture files)."""
    TABLE.flows.clear()
    TABLE.settled.clear()


# -- where a Godot layer sits: flow key and the port's fixed dialect ---------------------------
Context = tuple[Any, str | None]  # (flow key or None, fixed dialect or None)
NO_CONTEXT: Context = (None, None)


def flow_key(l4: Packet) -> Any:
    ip = l4.underlayer
    if ip is None:
        return None
    try:
        a = (ip.getfieldval("src"), l4.getfieldval("sport"))
        b = (ip.getfieldval("dst"), l4.getfieldval("dport"))
    except AttributeError:
        return None
    proto = "udp" if isinstance(l4, UDP) else "tcp"
    return (proto, a, b) if a <= b else (proto, b, a)


def fixed_dialect(l4: Packet) -> str | None:
    if not PORT_DIALECTS:
        return None
    proto = "udp" if isinstance(l4, UDP) else "tcp"
    return PORT_DIALECTS.get((proto, l4.getfieldval("sport"))) or PORT_DIALECTS.get((proto, l4.getfieldval("dport")))


def context_of(layer: Packet | None) -> Context:
    """The flow context of whatever a Godot layer was dissected under."""
    while layer is not None:
        ctx = getattr(type(layer), "_has_ctx", False) and layer._ctx
        if ctx:
            return ctx
        if isinstance(layer, (UDP, TCP)):
            return flow_key(layer), fixed_dialect(layer)
        layer = layer.underlayer
    return NO_CONTEXT


def context_of_packet(pkt: Packet | None) -> Context:
    """The flow context of a whole packet (TCPSession hands it over in ``metadata["original"]``)."""
    if pkt is None:
        return NO_CONTEXT
    l4 = pkt.getlayer(TCP) or pkt.getlayer(UDP)
    return (flow_key(l4), fixed_dialect(l4)) if l4 is not None else NO_CONTEXT


# -- dialect choice ------------------------------------------------------------------------------
Reading = tuple[Any, int]  # (value, bytes used); used == -1: value is the DecodeError


def read(body: bytes, dialect: str, offset: int = 0, end: int | None = None, max_depth: int = MAX_DEPTH) -> Reading:
    try:
        return decode_prefix(body, dialect, allow_objects=True, offset=offset, end=end, max_depth=max_depth)
    except DecodeError as e:
        return e, -1


def choose(body: bytes, ctx: Context = NO_CONTEXT, default: str | None = None) -> tuple[str, Reading]:
    """The dialect to read ``body`` (one whole Variant message) with, and that reading."""
    key, fixed = ctx
    if fixed:
        return fixed, read(body, fixed)
    flow = TABLE.get(key)
    n = len(body)
    if flow is not None and flow.clear and flow.dialect:
        r = read(body, flow.dialect)
        if r[1] == n:
            return flow.dialect, r
    if key is None and default:
        return default, read(body, default)
    flow = flow or TABLE.add(key) if key is not None else None
    guess = (flow.guess if flow is not None else None) or DialectGuess(CANDIDATES)
    readings = guess.add(body)
    verdict = guess.verdict(TABLE.settled)
    if flow is not None:
        settled = verdict.family_clear and guess.scores[verdict.dialect].exact > 0
        if settled and (not flow.clear or flow.dialect != verdict.dialect):
            TABLE.settled[verdict.dialect] += 1
        if settled or not flow.clear:
            flow.dialect, flow.clear = verdict.dialect, settled
        flow.guess = None if settled else guess
    d = verdict.dialect
    if readings[d][1] != n:  # this message is read better by another dialect
        d = next((c for c in CANDIDATES if readings[c][1] == n), None) or (
            flow.dialect if flow is not None and flow.dialect else
            next((c for c in CANDIDATES if readings[c][1] >= 0), default or CANDIDATES[0]))
    return d, readings[d]


# -- heuristics for other ports -------------------------------------------------------------------
#: classes by flow kind, filled by the package (avoids an import cycle)
KIND_CLASSES: dict[str, type] = {}
_state = {"enabled": False}
_ORIGINAL: dict[type, Any] = {}


def _udp_payload_class(self: Packet, payload: bytes) -> Any:
    key = flow_key(self)
    flow = TABLE.get(key)
    if flow is not None and flow.kind == "enet" or (flow is None or flow.kind is None) and _enet_like(self, payload):
        TABLE.add(key).kind = "enet"  # ENet (Godot's high-level multiplayer), once seen for a flow
        return KIND_CLASSES["enet"]
    if len(payload) >= 4:
        ctx = (key, fixed_dialect(self))
        if (flow is not None and flow.kind == "variant") or plausible(payload):
            d, r = choose(payload, ctx)
            if r[1] == len(payload):
                TABLE.add(ctx[0]).kind = "variant"
                # the reading travels with the layer that will dissect these bytes
                return partial(KIND_CLASSES["variant"], dialect=d, _pre=r)
    return _ORIGINAL[UDP](self, payload)


def _enet_like(udp: Packet, payload: bytes) -> bool:
    """ENet as ENet sends it; a compressed datagram only with the codec its port is set up with."""
    if looks_like_enet(payload):
        return True
    codec = port_compression(udp.getfieldval("sport"), udp.getfieldval("dport"))
    if not codec or len(payload) < 2 or not ENET.FLAG_COMPRESSED.get(int.from_bytes(payload[:2], "big")):
        return False
    dg = parse_datagram(payload, compression=codec)
    if dg.decompressed is None:
        return False
    word = (int.from_bytes(payload[:2], "big") & ~ENET.FLAG_COMPRESSED.mask).to_bytes(2, "big")
    return looks_like_enet(word + payload[2:dg.header_size] + dg.decompressed[:len(dg.decompressed) - dg.padding])


def classify_stream(key: Any, payload: bytes, start: bool = False) -> str | None:
    """The framing of a TCP flow nobody bound, from its first bytes (remembered per flow):
    "websocket", "pdu", or None (not Godot as far as we can tell). ``start``: these bytes are
    the start of the stream (TCPSession), so a flow that does not look like Godot is not
    looked at again."""
    flow = TABLE.get(key)
    if flow is not None and flow.kind is not None:
        return None if flow.kind == "ignore" else flow.kind
    if key is None:
        return None
    http = http_head(payload)
    if http is not None:
        # a packet may hold only part of the header: its upgrade line decides
        if http == "websocket" or b"upgrade: websocket" in payload[:MAX_HTTP_HEAD].lower():
            TABLE.add(key).kind = "websocket"
            return "websocket"
        verdict = "no"
    else:
        verdict = pdu_start(payload)
    if verdict == "no":
        if start:
            TABLE.add(key).kind = "ignore"
        return None
    flow = TABLE.add(key)
    flow.kind, flow.confirmed = "pdu", verdict == "yes"
    return "pdu"


def _tcp_payload_class(self: Packet, payload: bytes) -> Any:
    if not payload:
        # TCPSession picks the class of a stream at its first packet, often a bare SYN or ACK:
        # this one decides when the data comes
        return KIND_CLASSES["stream"]
    kind = classify_stream(flow_key(self), payload)
    if kind is not None:
        return KIND_CLASSES[kind]
    return _ORIGINAL[TCP](self, payload)


def enable_heuristics(enabled: bool = True) -> None:
    """Find Godot traffic on ports nobody bound (on by default when the package is imported)."""
    if enabled and not _state["enabled"]:
        _ORIGINAL[UDP] = UDP.default_payload_class
        _ORIGINAL[TCP] = TCP.default_payload_class
        UDP.default_payload_class = _udp_payload_class  # type: ignore[method-assign]
        TCP.default_payload_class = _tcp_payload_class  # type: ignore[method-assign]
    elif not enabled and _state["enabled"]:
        UDP.default_payload_class = _ORIGINAL[UDP]  # type: ignore[method-assign]
        TCP.default_payload_class = _ORIGINAL[TCP]  # type: ignore[method-assign]
    _state["enabled"] = enabled


#: functions (WebSocket message layer, binary message) -> layer class or None, asked before a binary
#: message is read as a Variant (the multiplayer layers add theirs)
BINARY_WS_HOOKS: list[Callable[[Packet, bytes], Any]] = []


def websocket_binary_class(ws: Packet, payload: bytes) -> Any:
    for hook in BINARY_WS_HOOKS:
        cls = hook(ws, payload)
        if cls is not None:
            return cls
    return None


def confirm(ctx: Context, kind: str, ok: bool) -> None:
    """A heuristic TCP flow's first whole message was (not) a Godot message."""
    key = ctx[0]
    if key is None:
        return
    flow = TABLE.add(key)
    if ok:
        flow.confirmed = True
        if flow.kind is None:
            flow.kind = kind
    elif not flow.confirmed and not ctx[1]:
        flow.kind = "ignore"


def needs_confirmation(ctx: Context) -> bool:
    flow = TABLE.get(ctx[0])
    return flow is not None and flow.kind == "pdu" and not flow.confirmed and not ctx[1]
