"""Structure-aware random values for scapy's ``fuzz()``.

Every field of the Godot layers has a ``randval()``: header flags take only the bits the type
uses (valid header shapes), lengths/counts/paddings are mostly computed but sometimes random
(0, ±1, huge, negative), values are random per layout (edge numbers, NaN/inf, random UTF-8 or
random bytes), and lists get random nested Variants (a few levels deep at most). So::

    fuzz(GodotVariant())                       # a random Variant of a random type
    fuzz(GodotDictionary())                    # a random Dictionary
    fuzz(GodotVariant.from_value(state))       # this structure, with random counts and lengths

give a new random packet each time they are built (``bytes()``, ``send()``, ``sr1()``).
Random values that depend on the packet (its dialect, type, depth) are :class:`Deferred` and are
fixed when the packet is built.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Callable
from typing import Any

from scapy.packet import Packet, fuzz
from scapy.volatile import RandBin, VolatileValue

from .. import values as V
from ..spec import layouts as L
from ..spec.dialects import get_dialect
from . import variant as _v
from .fields import AUTO, RAW_DEFAULTS, RAW_FIELDS, dialect_name, dialect_of, typedef_of

#: how deep random nested Variants go
FUZZ_DEPTH = 3


class Deferred(VolatileValue):
    """A random value that needs the packet it goes into; fixed when that packet is built."""

    def __init__(self, fn: Callable[[Packet], Any], label: str = "") -> None:
        self.fn = fn
        self.label = label

    def _fix(self) -> Any:
        return self

    def fix_for(self, pkt: Packet) -> Any:
        return self.fn(pkt)

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__

    def __getattr__(self, attr: str) -> Any:
        raise AttributeError(attr)

    def __repr__(self) -> str:
        return f"<random {self.label}>"

    def copy(self) -> Deferred:
        return self


class Pick(VolatileValue):
    """One of ``choices`` (volatile choices are fixed too), with ``weights``."""

    def __init__(self, choices: list[Any], weights: list[float] | None = None, label: str = "") -> None:
        self.choices, self.weights, self.label = choices, weights, label

    def _fix(self) -> Any:
        c = random.choices(self.choices, self.weights)[0]
        while isinstance(c, VolatileValue) and not isinstance(c, Deferred):
            c = c._fix()
        return c() if callable(c) and not isinstance(c, (type, VolatileValue)) else c

    def __repr__(self) -> str:
        return f"<random {self.label}>"


def _text() -> Any:
    n = random.choice((0, 1, 2, 3, 4, 5, 8, 13, 16))
    if random.random() < 0.15:
        return bytes(random.getrandbits(8) for _ in range(n))  # often not UTF-8
    alphabet = "abcxyz_ /:.0é✓\U0001F600"
    return "".join(random.choice(alphabet) for _ in range(n))


def _int() -> int:
    return random.choice((0, 1, -1, 7, 0x7FFFFFFF, -0x80000000, 0x80000000, -0x80000001, (1 << 63) - 1, -(1 << 63),
                          random.randint(-1000, 1000), random.randint(-(1 << 31), (1 << 31) - 1),
                          random.randint(-(1 << 63), (1 << 63) - 1)))


def _float() -> float:
    f32 = struct.unpack("<f", struct.pack("<f", random.uniform(-100, 100)))[0]
    return random.choice((0.0, -0.0, 1.5, 0.1, 1e300, -1e-300, math.inf, -math.inf, math.nan, 3.4028234663852886e38,
                          random.uniform(-1e6, 1e6), f32))


def _count() -> Pick:
    return Pick([AUTO, lambda: random.randint(0, 8), -1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0],
                [70, 12, 4, 4, 3, 3, 4], "count")


def _length() -> Pick:
    return Pick([AUTO, lambda: random.randint(0, 40), -1, 0x7FFFFFFF, 0xFFFFFFF0], [75, 13, 4, 4, 4], "length")


def _padding() -> Pick:
    return Pick([AUTO, lambda: bytes(random.getrandbits(8) for _ in range(random.randint(0, 3)))], [85, 15], "padding")


def _flags_for(pkt: Packet) -> Any:
    if random.random() < 0.4:
        return AUTO
    if type(pkt).key is None:
        return 0
    td = typedef_of(pkt)
    flags = 0
    d = dialect_of(pkt)
    for hf in td.header_fields:
        if hf.width == 2:
            pairs = td.layout.pairs  # type: ignore[attr-defined]
            if not (d.has_typed_dictionaries() if pairs else d.has_typed_arrays()):
                continue
            v = random.choice((0, 0, 1, 1, 2, 3))
        else:
            v = random.getrandbits(hf.width)
        flags |= v << (hf.shift - 16)
    return flags


def _packed_for(pkt: Packet) -> Any:
    cls = V.KEY_CLASSES[type(pkt).key]
    layout = typedef_of(pkt).layout
    n = random.randint(0, 6)
    if layout.component in (L.I32, L.I64):
        bits = layout.component.size * 8
        vals = [random.randint(-(1 << (bits - 1)), (1 << (bits - 1)) - 1) for _ in range(n)]
    else:
        vals = [_float() for _ in range(n * layout.width)]
        if layout.component is not L.F64:
            vals = [v if math.isnan(v) or math.isinf(v) or abs(v) < 3e38 else math.inf for v in vals]
    if layout.width == 1:
        return cls(vals)
    w = layout.width
    return cls([tuple(vals[i:i + w]) for i in range(0, len(vals), w)])


def random_variant(dialect: str = "godot4", depth: int = 0) -> Packet:
    """A random, fuzzed Variant packet of a random type of ``dialect``."""
    d = get_dialect(dialect)
    entries = d.entries
    if depth >= FUZZ_DEPTH:  # leaves only, so that nesting ends
        entries = tuple(e for e in entries if e.typedef.layout.kind not in ("container", "object"))
    e = random.choice(entries)
    p = _v._KEY_CLASS[e.key](dialect=d.name)
    object.__setattr__(p, "_depth", depth)
    return fuzz(p)


def _children(pkt: Packet) -> int:
    return 0 if pkt._depth >= FUZZ_DEPTH else random.choice((0, 1, 1, 2, 3, 4))


def _items_for(pkt: Packet) -> list[Packet]:
    return [random_variant(dialect_name(pkt), pkt._depth + 1) for _ in range(_children(pkt))]


def _entries_for(pkt: Packet) -> list[Packet]:
    d, depth = dialect_name(pkt), pkt._depth + 1
    return [_v.GodotDictEntry(key=random_variant(d, depth), value=random_variant(d, depth))
            for _ in range(_children(pkt))]


def _properties_for(pkt: Packet) -> list[Packet]:
    d, depth = dialect_name(pkt), pkt._depth + 1
    return [_v.GodotProperty(prop_name=_text(), value=random_variant(d, depth)) for _ in range(_children(pkt))]


def _strs_for(pkt: Packet) -> list[Packet]:
    return [_v.GodotStr(value=_text()) for _ in range(random.randint(0, 4))]


def _type_id_for(pkt: Packet) -> int:
    return random.randrange(len(dialect_of(pkt).entries) + 2)


RANDOM_TYPE = Deferred(lambda pkt: AUTO, "type")

_v.RAND.update({
    "reserved": lambda: Pick([0, lambda: random.getrandbits(8)], [90, 10], "byte"),
    "flags": lambda: Deferred(_flags_for, "valid flags"),
    "length": _length,
    "count": _count,
    "padding": _padding,
    "text": lambda: Pick([_text], label="text"),
    "bool": lambda: Pick([0, 1, lambda: random.getrandbits(32)], [45, 45, 10], "bool"),
    "int": lambda: Pick([_int], label="int"),
    "float": lambda: Pick([_float], label="float"),
    "u64": lambda: Pick([0, 1, lambda: random.getrandbits(64)], [20, 20, 60], "u64"),
    "np_flags": lambda: Pick([0, 1, 2, 3], [40, 40, 10, 10], "path flags"),
    "type_id": lambda: Deferred(_type_id_for, "type id"),
    "bytes": lambda: RandBin(random.randint(0, 16)),
    "packed": lambda: Deferred(_packed_for, "elements"),
    "items": lambda: Deferred(_items_for, "Variants"),
    "entries": lambda: Deferred(_entries_for, "entries"),
    "properties": lambda: Deferred(_properties_for, "properties"),
    "strs": lambda: Deferred(_strs_for, "strings"),
    "variant": lambda: Deferred(lambda p: random_variant(dialect_name(p), p._depth + 1), "Variant"),
    "base_type": lambda: RANDOM_TYPE,
})


class RandVariant(VolatileValue):
    """A random Godot Variant packet each time it is fixed (``RandVariant("godot3")._fix()``)."""

    def __init__(self, dialect: str = "godot4") -> None:
        self.dialect = get_dialect(dialect).name

    def _fix(self) -> Packet:
        return random_variant(self.dialect)


# -- fixing random values when a packet is built ------------------------------------------------
def _fix(v: Any, pkt: Packet) -> Any:
    for _ in range(8):
        if isinstance(v, Deferred):
            v = v.fix_for(pkt)
        elif isinstance(v, VolatileValue):
            v = v._fix()
        else:
            break
    return v


def fixed_clone(pkt: Packet) -> Packet | None:
    """A copy of ``pkt`` with its random values fixed, or None when it has none."""
    raw_f, raw_d = RAW_FIELDS.__get__(pkt), RAW_DEFAULTS.__get__(pkt)
    names = [f.name for f in pkt.fields_desc]
    if not any(isinstance(raw_f.get(n), VolatileValue) or isinstance(raw_d.get(n), VolatileValue) for n in names):
        return None
    clone = pkt.copy()
    cf, cd = RAW_FIELDS.__get__(clone), dict(RAW_DEFAULTS.__get__(clone))
    RAW_DEFAULTS.__set__(clone, cd)
    for f in pkt.fields_desc:
        n = f.name
        dv = cd.get(n)
        if n in cf:
            v = cf[n]
            if isinstance(v, VolatileValue):
                cf[n] = _fix(v, clone)
            elif isinstance(dv, Deferred) and getattr(f, "holds_packets", False):
                # a fuzzed template: its nested packets are fuzzed too
                if isinstance(v, list):
                    cf[n] = [fuzz(x) if isinstance(x, Packet) else x for x in v]
                elif isinstance(v, Packet):
                    cf[n] = fuzz(v)
        elif isinstance(dv, VolatileValue):
            fv = _fix(dv, clone)
            if fv is not AUTO:
                cf[n] = fv
        if isinstance(dv, VolatileValue):
            cd[n] = getattr(f, "default", None) if not isinstance(getattr(f, "default", None), VolatileValue) else AUTO
    clone.explicit = 1
    clone.raw_packet_cache = None
    return clone


_v.FIX_RANDOM = fixed_clone
