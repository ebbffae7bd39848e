"""The Godot wire format as data. Everything else in godot_dissect (codec, text notation, scapy
layers, the Lua generator, the fuzzer, the docs tables) is derived from what is written here.

Where to look (one file each):

* ``words.py``: the field vocabulary of every table: ``BitField`` (a named bit range) and
  ``IntField`` (an integer whose struct code carries its byte order).
* ``layouts.py``: the payload shapes (layout *kinds*) of Variants and each kind's parts: count
  words, the string rule, components, value wrappers; the header bits (``FLAG_64``...).
* ``types.py``: every Variant type once with its layout, e.g. ``VECTOR3I = Struct(I32, x y z)``.
* ``dialects.py``: which engine family/build numbers which type how (ids, names, rules).
* ``kinds.py``: a kind's parts resolved for one dialect (``kind_params``): what the C tables,
  the Python kind walker (``codec/kinds.py``: decoder, encoder, the fuzzer's field map, generator
  and malformed corpus), scapy and the Lua generator (``layout_params``, ``kind_parts``) read.
* ``conversions.py``: what typed containers convert (``EncodedObjectAsID``).
* ``transports.py``: u32 length prefix, ``MAX_PDU``, the debugger port and message shapes, the
  WebSocket frame and opcode table, detection order, the depth limit,
  and the capture reader's limits (conversations, held bytes, frame sizes); the Lua dissector gets
  every constant here by name (``SPEC.transports``).
* ``enet.py``: ENet 1.3 as Godot bundles it (commands, fields, limits).
* ``multiplayer.py``: Godot 3/4 high-level multiplayer packets as item lists (``Form``), with
  each list's cross-reference index (``index_of``).
"""

from .dialects import DIALECT_NAMES, DIALECTS, Dialect, TypeEntry, get_dialect
from .layouts import CONTAINER_KINDS, TYPE_MASK
from .types import TypeDef

__all__ = [
    "CONTAINER_KINDS", "DIALECTS", "DIALECT_NAMES", "TYPE_MASK", "Dialect", "TypeDef", "TypeEntry",
    "get_dialect",
]
