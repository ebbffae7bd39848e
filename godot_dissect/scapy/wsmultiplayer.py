"""WebSocket multiplayer on top of ``GodotWebSocket``: which layer a binary message is.

A WebSocket conversation is Godot multiplayer when its first binary message says so
(``godot_dissect.detect.websocket_multiplayer``, the rule ``read_pcap`` uses): Godot 4's server
sends the client its peer id (exactly 4 bytes, id >= 2), then every message is a SceneMultiplayer
packet (``GodotMP4``); Godot 3 puts the 9-byte header on every message (``GodotWSMultiplayer3``).
The direction comes from the frames: a client masks its frames, a server does not. The decision
is remembered per flow (``bind_godot_ports(websocket=[...], major=N)`` fixes it for a port).
"""

from __future__ import annotations

from typing import Any

from scapy.packet import Packet

from ..detect import websocket_multiplayer
from ..spec.multiplayer import WS4_PEER_ID
from . import flows
from .mpsettings import port_major
from .multiplayer import GodotMP4, GodotWSMultiplayer3, GodotWSPeerId4

#: Flow.major for a WebSocket flow that was looked at and is not multiplayer
NOT_MULTIPLAYER = 0


def direction_of(ws: Packet) -> str:
    """"c2s" for a message the client sent (masked frames), else "s2c"."""
    return "c2s" if any(f.mask for f in ws.getfieldval("frames") or ()) else "s2c"


def _fixed_major(key: Any) -> int | None:
    if key is None:
        return None
    _, a, b = key
    return port_major("tcp", a[1], b[1])


def websocket_multiplayer_class(ws: Packet, payload: bytes) -> Any:
    """The layer of a binary WebSocket message of a multiplayer flow, or None (a Variant)."""
    key = (ws._ctx or flows.NO_CONTEXT)[0]
    direction = direction_of(ws)
    flow = flows.TABLE.add(key) if key is not None else None
    major = _fixed_major(key)
    if major is None and flow is not None:
        major = flow.major
    if major is None:
        found = websocket_multiplayer(payload, direction)
        major = found[0] if found else NOT_MULTIPLAYER
        if flow is not None:
            flow.major = major
    if major == 3:
        return GodotWSMultiplayer3
    if major == 4:
        if direction == "s2c" and flow is not None:
            if flow.ws_peer_msg is None:  # the server's first message: the peer id when 4 bytes
                flow.ws_peer_msg = payload if len(payload) == WS4_PEER_ID.exact_size else b""
            if payload == flow.ws_peer_msg:
                return GodotWSPeerId4
        return GodotMP4
    return None


flows.BINARY_WS_HOOKS.append(websocket_multiplayer_class)
