"""scapy layers for Godot Engine traffic, derived from the spec (``godot_dissect.spec``).

In a scapy shell (or any Python)::

    from godot_dissect.scapy import *

binds the remote debugger port (TCP 6007), turns on the heuristic that finds Godot traffic on
other ports, and exports the layers: ``GodotVariant`` and one class per Godot type
(``GodotDictionary``, ``GodotVector3``...), ``GodotPDU``, ``GodotDebugger``, ``GodotWebSocket``.
See ``docs/scapy.md``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scapy.layers.inet import TCP, UDP
from scapy.packet import bind_layers, split_layers

from ..spec import get_dialect
from . import flows
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
from .variant import (
    MAX_DEPTH,
    VARIANT_CLASSES,
    GodotDictEntry,
    GodotOpaque,
    GodotProperty,
    GodotStr,
    GodotVariant,
)

DEBUGGER_PORT = 6007

flows.KIND_CLASSES.update(variant=GodotVariant, pdu=GodotPDU, debugger=GodotDebugger, websocket=GodotWebSocket,
                          stream=GodotStream)
_BINDS = {"udp": (UDP, GodotVariant), "tcp": (TCP, GodotPDU), "debugger": (TCP, GodotDebugger),
          "websocket": (TCP, GodotWebSocket)}


def bind_godot_ports(udp: Iterable[int] = (), tcp: Iterable[int] = (), debugger: Iterable[int] = (),
                     websocket: Iterable[int] = (), dialect: Any = "auto") -> None:
    """Dissect these ports as Godot traffic: ``udp`` datagrams are Variants, ``tcp`` streams are
    length-prefixed PDUs, ``debugger`` the remote debugger, ``websocket`` WebSocket connections.
    ``dialect`` fixes the dialect for them ("auto": guessed per flow)."""
    fixed = None if dialect in (None, "auto") else get_dialect(dialect if isinstance(dialect, str)
                                                               else dialect.name).name
    for kind, ports in (("udp", udp), ("tcp", tcp), ("debugger", debugger), ("websocket", websocket)):
        lower, upper = _BINDS[kind]
        for port in ports:
            split_layers(lower, GodotVariant, sport=port)  # one binding per port
            split_layers(lower, GodotVariant, dport=port)
            for cls in (GodotPDU, GodotDebugger, GodotWebSocket):
                split_layers(lower, cls, sport=port)
                split_layers(lower, cls, dport=port)
            bind_layers(lower, upper, sport=port)
            bind_layers(lower, upper, dport=port)
            flows.PORT_DIALECTS[("udp" if lower is UDP else "tcp", port)] = fixed


def unbind_godot_ports(udp: Iterable[int] = (), tcp: Iterable[int] = (), debugger: Iterable[int] = (),
                       websocket: Iterable[int] = ()) -> None:
    """Undo ``bind_godot_ports`` for these ports."""
    for kind, ports in (("udp", udp), ("tcp", tcp), ("debugger", debugger), ("websocket", websocket)):
        lower, upper = _BINDS[kind]
        for port in ports:
            split_layers(lower, upper, sport=port)
            split_layers(lower, upper, dport=port)
            flows.PORT_DIALECTS.pop(("udp" if lower is UDP else "tcp", port), None)


bind_godot_ports(debugger=[DEBUGGER_PORT])
enable_heuristics(True)

from .fuzzing import RandVariant  # noqa: E402  (fills in the fields' randval(); needs the classes above)

globals().update(VARIANT_CLASSES)

__all__ = [
    "AUTO", "DEBUGGER_PORT", "MAX_DEPTH", "MISSING", "GodotDebugger", "GodotDictEntry", "GodotOpaque", "GodotPDU",
    "GodotProperty", "GodotStream", "GodotStr", "GodotVariant", "GodotWSHandshake", "GodotWebSocket", "RandVariant",
    "WebSocketFrame", "WebSocketText", "bind_godot_ports", "enable_heuristics", "godot_messages",
    "GodotMessage",
    "reset_flows", "unbind_godot_ports", *VARIANT_CLASSES,
]
