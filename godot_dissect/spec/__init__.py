"""The Godot wire format as data: layouts, the type table and the dialects.

Everything else in godot_dissect (codec, text notation, scapy layers, the Lua generator, the
fuzzer, the docs tables) is derived from what is written here.

``types``/``layouts``/``dialects``: the Variant format; ``enet``/``multiplayer``: ENet and the
high-level multiplayer; ``transports``: how messages ride on the wire (u32 length prefix, MAX_PDU,
debugger ports and message shapes, WebSocket frames and opcodes, detection order, depth limit) and
the capture reader's limits.
"""

from .dialects import DIALECT_NAMES, DIALECTS, Dialect, TypeEntry, get_dialect
from .layouts import CONTAINER_KINDS, TYPE_MASK
from .types import TypeDef

__all__ = [
    "CONTAINER_KINDS", "DIALECTS", "DIALECT_NAMES", "TYPE_MASK", "Dialect", "TypeDef", "TypeEntry",
    "get_dialect",
]
