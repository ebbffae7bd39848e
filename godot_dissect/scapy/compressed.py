"""Godot 4's compressed Variants as scapy layers (RPC arguments, spawn arguments, sync state).

``spec.multiplayer.COMPRESSED_VARIANT``: BOOL is one meta byte (type + value bit), INT a meta byte
(type + width mode) and the value in the narrowest width; every other type is the standard
Variant, so it is a ``GodotVariant`` here. ``GodotCompressedBool`` / ``GodotCompressedInt`` carry
the compact forms; the meta byte's bit fields come from the spec, the BOOL/INT type ids from the
dialect.
"""

from __future__ import annotations

import random
import struct
from typing import Any

from scapy.packet import Packet
from scapy.volatile import RandNum

from ..spec import get_dialect
from ..spec.multiplayer import COMPRESSED_VARIANT as CV
from .bits import bit_fields
from .fields import MISSING, RAW_FIELDS, CodedNumField, DialectField, Short, dialect_name, plain
from .variant import GodotVariant, ShownAtTop, _GodotBase, _tail_field, make_child

_INT_CODES = dict(CV.int_codes)
#: (mode, smallest, largest) narrowest first: the width the engine's encoder picks
_INT_RANGES = [(mode, -(1 << (8 * struct.calcsize(c) - 1)), (1 << (8 * struct.calcsize(c) - 1)) - 1)
               for mode, c in sorted(_INT_CODES.items(), key=lambda kv: struct.calcsize(kv[1]))]


def type_ids(dialect: str) -> tuple[int, int]:
    """(BOOL id, INT id) in ``dialect``."""
    d = get_dialect(dialect)
    return d.by_key("BOOL").id, d.by_key("INT").id  # type: ignore[union-attr]


def _type_note(pkt: Packet, v: int) -> str:
    d = get_dialect(dialect_name(pkt))
    return d.entries[v].name if v < len(d.entries) else f"not a type in {d.name}"


_NOTES = {"type": _type_note, "mode": lambda p, v: f"{struct.calcsize(_INT_CODES[v]) * 8}-bit"}


def _narrowest_mode(v: Any) -> int:
    v = plain(v)
    for mode, lo, hi in _INT_RANGES:
        if lo <= v <= hi:
            return mode
    return _INT_RANGES[-1][0]


def _compressed_int_value(p: Packet) -> Any:
    return p.getfieldval("value")


class _CompressedBase(_GodotBase):
    def __init__(self, _pkt: bytes = b"", *args: Any, dialect: Any = None, **kw: Any) -> None:
        _GodotBase.__init__(self, _pkt, *args, **kw)
        if dialect is not None:
            RAW_FIELDS.__get__(self)["dialect"] = get_dialect(dialect if isinstance(dialect, str)
                                                              else dialect.name).name

    def do_dissect(self, s: bytes) -> bytes:
        return _GodotBase.do_dissect(self, s)

    def mysummary(self) -> str:
        try:
            return f"{self.name} {self.to_value()}"
        except Exception:  # noqa: BLE001 - malformed
            return f"{self.name} <malformed>"


class GodotCompressedBool(_CompressedBase):
    """A compressed BOOL: one meta byte, the value in its top bit."""

    name = "GodotCompressedBool"
    fields_desc = [
        ShownAtTop(DialectField(), lambda p: not p._sub),
        *bit_fields((CV.bool_value_bits, CV.type_bits), 8, {"value": 0},
                    {"type": lambda p: type_ids(dialect_name(p))[0]}, notes=_NOTES),
        _tail_field(),
    ]

    def to_value(self) -> bool:
        return bool(plain(self.getfieldval("value")))


class CompressedIntValue(CodedNumField):
    """The value after an INT meta byte, in the width its mode says."""

    __slots__ = []

    def code(self, pkt: Packet) -> str:
        mode = pkt.get_field("mode").i2m(pkt, pkt.getfieldval("mode"))
        return _INT_CODES[mode]

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        return int(x) if isinstance(x, bool) else x

    def randval(self) -> Any:
        return _RandCompressedInt()


class _RandCompressedInt(RandNum):
    def __init__(self) -> None:
        RandNum.__init__(self, -(1 << 63), (1 << 63) - 1)

    def _fix(self) -> int:
        bits = random.choice((7, 15, 31, 63))
        return random.randint(-(1 << bits), (1 << bits) - 1)


class GodotCompressedInt(_CompressedBase):
    """A compressed INT: meta byte (width mode + type) and the value, little-endian."""

    name = "GodotCompressedInt"
    fields_desc = [
        ShownAtTop(DialectField(), lambda p: not p._sub),
        *bit_fields((CV.mode_bits, CV.type_bits), 8, {},
                    {"mode": lambda p: _narrowest_mode(_compressed_int_value(p)),
                     "type": lambda p: type_ids(dialect_name(p))[1]}, notes=_NOTES),
        CompressedIntValue("value", 0),
        _tail_field(),
    ]

    def to_value(self) -> int:
        return plain(self.getfieldval("value"))


COMPRESSED_CLASSES = (GodotCompressedBool, GodotCompressedInt)


def compressed_at(parent: Packet, s: bytes, pos: int, end: int, dialect: str, depth: int) -> tuple[Packet, int]:
    """One compressed Variant at ``s[pos:end]``: (packet, bytes it takes)."""
    if end - pos <= 0:
        raise Short
    bool_id, int_id = type_ids(dialect)
    t = CV.type_bits.get(s[pos])
    if t == bool_id:
        return GodotCompressedBool(s[pos:pos + 1], dialect=dialect, _sub=True, _internal=1, _parent=parent), 1
    if t == int_id:
        n = 1 + struct.calcsize(_INT_CODES[CV.mode_bits.get(s[pos])])
        take = min(n, end - pos)
        p = GodotCompressedInt(s[pos:pos + take], dialect=dialect, _sub=True, _internal=1, _parent=parent)
        return p, take
    return make_child(parent, s, pos, end, dialect, depth)


def compressed_packet(value: Any, dialect: str = "godot4") -> Packet:
    """The packet of ``value`` as the engine's ``encode_and_compress_variant`` writes it."""
    if isinstance(value, Packet):
        return value
    if isinstance(value, bool):
        return GodotCompressedBool(dialect=dialect, value=int(value))
    if isinstance(value, int):
        return GodotCompressedInt(dialect=dialect, value=value)
    return GodotVariant.from_value(value, dialect)


def packet_value(p: Packet) -> Any:
    """The Python value of a compressed or standard Variant packet (MISSING when it does not read)."""
    try:
        return p.to_value()
    except Exception:  # noqa: BLE001 - a malformed argument
        return MISSING
