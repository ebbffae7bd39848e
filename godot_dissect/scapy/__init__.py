"""scapy layers for Godot Engine traffic, derived from the spec (``godot_dissect.spec``).

In a scapy shell (or any Python)::

    from godot_dissect.scapy import *

binds the remote debugger port (TCP 6007), turns on the heuristic that finds Godot traffic on
other ports, and exports the layers: ``GodotVariant`` and one class per Godot type
(``GodotDictionary``, ``GodotVector3``...), ``GodotPDU``, ``GodotDebugger``, ``GodotWebSocket``;
ENet (``ENet``, ``ENetSendReliable``...) and the multiplayer protocols (``GodotMP3*``,
``GodotMP4*``, the transport headers). See the README's scapy section.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scapy.layers.inet import TCP, UDP
from scapy.packet import bind_layers, split_layers

from ..spec import get_dialect
from ..spec.enet import COMPRESSIONS_BY_NAME
from ..spec.transports import DEBUGGER_PORTS
from . import flows, wsmultiplayer  # noqa: F401 - wsmultiplayer adds the WebSocket multiplayer hook
from .compressed import GodotCompressedBool, GodotCompressedInt
from .enet import (
    COMMAND_LAYERS,
    ENET_LAYERS,
    ENet,
    ENetBody,
    ENetCommand,
    ENetCommandTruncated,
    ENetCommandUnknown,
    ENetCompressedBody,
    ENetFragment,
    ENetTruncated,
)
from .fields import AUTO, MISSING
from .flows import enable_heuristics, reset_flows
from .framing import (
    GodotDebugger,
    GodotMessage,
    GodotPDU,
    GodotStream,
    GodotWebSocket,
    GodotWSHandshake,
    WebSocketFrame,
    WebSocketText,
    godot_messages,
)
from .mpmessages import MultiplayerMessage, ReassembledPacket, enet_reassemble, multiplayer_messages
from .mpsettings import PORT_COMPRESSION, PORT_MAJORS, SETTINGS
from .multiplayer import LAYERS as MULTIPLAYER_LAYERS
from .sessions import GodotTCPSession
from .variant import (
    MAX_DEPTH,
    VARIANT_CLASSES,
    GodotDictEntry,
    GodotOpaque,
    GodotProperty,
    GodotStr,
    GodotVariant,
)

DEBUGGER_PORT = DEBUGGER_PORTS[0]

flows.KIND_CLASSES.update(variant=GodotVariant, pdu=GodotPDU, debugger=GodotDebugger, websocket=GodotWebSocket,
                          stream=GodotStream, enet=ENet)
_BINDS = {"udp": (UDP, GodotVariant), "tcp": (TCP, GodotPDU), "debugger": (TCP, GodotDebugger),
          "websocket": (TCP, GodotWebSocket), "enet": (UDP, ENet)}


def bind_godot_ports(udp: Iterable[int] = (), tcp: Iterable[int] = (), debugger: Iterable[int] = (),
                     websocket: Iterable[int] = (), dialect: Any = "auto", enet: Iterable[int] = (),
                     major: int | None = None, compression: str | None = None) -> None:
    """Dissect these ports as Godot traffic: ``udp`` datagrams are Variants, ``tcp`` streams are
    length-prefixed PDUs, ``debugger`` the remote debugger, ``websocket`` WebSocket connections,
    ``enet`` ENet datagrams (high-level multiplayer). ``dialect`` fixes the dialect for them
    ("auto": guessed per flow); ``major`` (3 or 4) fixes the Godot version of the multiplayer
    traffic on the ``enet`` and ``websocket`` ports (else: CONNECT fingerprint, first message);
    ``compression`` names the codec the ``enet`` ports' hosts compress with (``spec.enet.COMPRESSIONS``)."""
    if compression is not None and compression not in COMPRESSIONS_BY_NAME:
        raise ValueError(f"unknown ENet compression {compression!r}; one of {', '.join(COMPRESSIONS_BY_NAME)}")
    fixed = None if dialect in (None, "auto") else get_dialect(dialect if isinstance(dialect, str)
                                                               else dialect.name).name
    for kind, ports in (("udp", udp), ("tcp", tcp), ("debugger", debugger), ("websocket", websocket),
                        ("enet", enet)):
        lower, upper = _BINDS[kind]
        for port in ports:
            split_layers(lower, GodotVariant, sport=port)  # one binding per port
            split_layers(lower, GodotVariant, dport=port)
            for cls in (GodotPDU, GodotDebugger, GodotWebSocket, ENet):
                split_layers(lower, cls, sport=port)
                split_layers(lower, cls, dport=port)
            bind_layers(lower, upper, sport=port)
            bind_layers(lower, upper, dport=port)
            proto = "udp" if lower is UDP else "tcp"
            flows.PORT_DIALECTS[(proto, port)] = fixed
            if major is not None and kind in ("enet", "websocket"):
                PORT_MAJORS[(proto, port)] = major
            if compression is not None and kind == "enet":
                PORT_COMPRESSION[port] = compression


def unbind_godot_ports(udp: Iterable[int] = (), tcp: Iterable[int] = (), debugger: Iterable[int] = (),
                       websocket: Iterable[int] = (), enet: Iterable[int] = ()) -> None:
    """Undo ``bind_godot_ports`` for these ports."""
    for kind, ports in (("udp", udp), ("tcp", tcp), ("debugger", debugger), ("websocket", websocket),
                        ("enet", enet)):
        lower, upper = _BINDS[kind]
        for port in ports:
            split_layers(lower, upper, sport=port)
            split_layers(lower, upper, dport=port)
            proto = "udp" if lower is UDP else "tcp"
            flows.PORT_DIALECTS.pop((proto, port), None)
            PORT_MAJORS.pop((proto, port), None)
            if kind == "enet":
                PORT_COMPRESSION.pop(port, None)


bind_godot_ports(debugger=[DEBUGGER_PORT])
enable_heuristics(True)

from .fuzzing import RandVariant  # noqa: E402  (fills in the fields' randval(); needs the classes above)

globals().update(VARIANT_CLASSES)
globals().update(ENET_LAYERS)
globals().update(MULTIPLAYER_LAYERS)

__all__ = [
    "COMMAND_LAYERS", "ENet", "ENetBody", "ENetCommand", "ENetCommandTruncated", "ENetCommandUnknown",
    "ENetCompressedBody", "ENetFragment", "ENetTruncated", "GodotCompressedBool", "GodotCompressedInt",
    "MultiplayerMessage", "GodotTCPSession", "MULTIPLAYER_LAYERS", "ENET_LAYERS", "PORT_MAJORS",
    "ReassembledPacket", "SETTINGS", "enet_reassemble", "multiplayer_messages",
    *ENET_LAYERS, *MULTIPLAYER_LAYERS,
    "AUTO", "DEBUGGER_PORT", "MAX_DEPTH", "MISSING", "GodotDebugger", "GodotDictEntry", "GodotOpaque", "GodotPDU",
    "GodotProperty", "GodotStream", "GodotStr", "GodotVariant", "GodotWSHandshake", "GodotWebSocket", "RandVariant",
    "WebSocketFrame", "WebSocketText", "bind_godot_ports", "enable_heuristics", "godot_messages",
    "GodotMessage",
    "reset_flows", "unbind_godot_ports", *VARIANT_CLASSES,
]
