"""The Godot wire format as data: layouts, the type table and the dialects.

Everything else in godot_dissect (codec, text notation, scapy layers, the Lua generator, the
fuzzer, the docs tables) is derived from what is written here.
"""

from .dialects import DIALECT_NAMES, DIALECTS, Dialect, TypeEntry, get_dialect
from .layouts import CONTAINER_KINDS, TYPE_MASK
from .types import TypeDef

__all__ = [
    "CONTAINER_KINDS", "DIALECTS", "DIALECT_NAMES", "TYPE_MASK", "Dialect", "TypeDef", "TypeEntry",
    "get_dialect",
]
