"""Builders for the transport headers around multiplayer packets (layouts from spec.multiplayer):
Godot 3's ENet peer header and channel-0 messages, Godot 3's WebSocket header, Godot 4's
WebSocket peer-id message. The readers are in ``session``."""

from __future__ import annotations

from ..spec.multiplayer import ENET3_PEER_HEADER, ENET3_SYSMSG, WS3_HEADER, WS3_SYS, WS3_TYPES, WS4_PEER_ID
from .layout import write_items

_SYSMSG_IDS = {v: k for k, v in (ENET3_SYSMSG.items[0].values or {}).items()}  # type: ignore[union-attr]
_WS3_IDS = {v: k for k, v in WS3_TYPES.items()}


def enet3_packet(src: int, dst: int, packet: bytes, header: str = "3.2+", flags: int = 0) -> bytes:
    """A Godot 3 ENet data-channel payload: ``[u32 src][i32 dst]`` (3.2+) or with the u32 flags
    of 3.0/3.1, then the MultiplayerAPI packet."""
    form = next(f for f in ENET3_PEER_HEADER if f.name == header)
    return bytes(write_items(form.items, {"src": src, "dst": dst, "flags": flags})) + packet


def enet3_sysmsg(kind: str, peer: int) -> bytes:
    """Channel 0: ``ADD_PEER`` / ``REMOVE_PEER`` from the server."""
    return bytes(write_items(ENET3_SYSMSG.items, {"sysmsg": _SYSMSG_IDS[kind], "peer": peer}))


def ws3_message(kind: str, sender: int, target: int, payload: bytes = b"", peer: int | None = None) -> bytes:
    """A Godot 3 WebSocketMultiplayerPeer message: ``SYS_NONE`` with a packet, or a system message
    (``SYS_ADD``/``SYS_DEL``/``SYS_ID``) with ``peer``."""
    head = write_items(WS3_HEADER.items, {"type": _WS3_IDS[kind], "from": sender, "to": target})
    if peer is not None:
        head = write_items(WS3_SYS.items, {"peer": peer}, head)
    return bytes(head) + payload


def ws4_peer_id(peer: int) -> bytes:
    """The Godot 4 WebSocket server's first message: the client's peer id."""
    return bytes(write_items(WS4_PEER_ID.items, {"peer": peer}))
