"""Random *valid* values of every type of a dialect, built from the spec's layouts.

Numbers favour the boundaries (int32/int64 limits and their neighbours, signed zero, infinities,
NaN, denormals, float32 limits), strings mix ASCII, multi-byte and astral characters, containers
nest a few levels and may be typed (Godot 4.3+ arrays, 4.4+ dictionaries: every container kind),
and Objects come as ids or, when ``full_objects`` is on, as full class-name + properties Objects.
Deep nesting (``nest``) is built from unit byte strings taken from the encoder, so a million levels
cost a bytes multiplication.

What values to try is chosen per layout kind here; what a kind holds (integer or float components
and their widths, element widths, the value wrapper) is read from its ``KindParams`` and layout,
and the bytes come from the encoder (``codec/kinds.py``), so no wire rule is written here.
"""

from __future__ import annotations

import functools
import math
import random
import struct
from array import array
from collections.abc import Callable
from typing import Any

from .. import values as V
from ..codec import encode
from ..codec.kinds import value_class
from ..codec.structs import compile_builder
from ..spec import layouts as L
from ..spec.conversions import OBJECT_AS_ID_CLASS
from ..spec.dialects import Dialect, TypeEntry, get_dialect
from ..spec.kinds import KindParams, kind_params

INT_EDGES = (0, 1, -1, 2, 127, 128, 255, 256, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, -0x80000000, 0x80000000,
             -0x80000001, 0xFFFFFFFF, 0x100000000, 0x7FFFFFFFFFFFFFFF, -0x8000000000000000,
             0x7FFFFFFFFFFFFFFE, -0x7FFFFFFFFFFFFFFF)
FLOAT_EDGES = (0.0, -0.0, 1.0, -1.0, 0.5, 0.1, math.inf, -math.inf, math.nan, 1e-45, -1e-45, 1.1754943508222875e-38,
               3.4028234663852886e38, -3.4028234663852886e38, 3.4028235677973366e38, 5e-324, 2.2250738585072014e-308,
               1.7976931348623157e308, 16777217.0, 1e300, -1e-300)
F32_EDGES = (0.0, -0.0, 1.0, -1.0, 0.5, math.inf, -math.inf, math.nan, 1.401298464324817e-45,
             1.1754943508222875e-38, 3.4028234663852886e38, -3.4028234663852886e38, 16777216.0)
TEXT_EDGES = ("", "a", "é", "\u20ac", "\U0001f600", "\0", "a\0b", "\ufeff", "\uffff", " " * 3, "x" * 4, "x" * 5,
              "res://player.gd", "/root/Main", "..", "%", "\\", "\"'", "\n\t\r", "\u200b", "Ω" * 40)
CLASS_NAMES = ("Node", "Reference", "Resource", "Object", "Node2D", "Spatial", "Node3D", "RefCounted", "Timer",
               OBJECT_AS_ID_CLASS, "Image", "Texture", "Script", "GDScript", "NoSuchClass", "", "_", "Nodé")


class ValueGenerator:
    """``ValueGenerator(dialect).value(rng)``: one random valid value of any type of the dialect."""

    def __init__(self, dialect: Dialect | str, full_objects: bool = False) -> None:
        self.d = get_dialect(dialect)
        self.full_objects = full_objects
        self.entries = list(self.d.entries)
        self.builders = {}
        for e in self.d.entries:
            lay = e.typedef.layout
            if lay.kind == "struct":
                self.builders[e.key] = compile_builder(V.KEY_CLASSES[e.key], lay.fields)  # type: ignore[attr-defined]
        self.makers: dict[str, Callable[[KindParams, random.Random, int], Any]] = {
            "empty": self._empty, "bool": self._bool, "number": self._number, "string": self._string,
            "struct": self._struct, "node_path": self._node_path, "id64": self._id64, "signal": self._signal,
            "object": self._object, "container": self._container, "packed_bytes": self._packed_bytes,
            "packed_strings": self._packed_strings, "packed": self._packed}
        self.leaf_entries = [e for e in self.entries if e.typedef.layout.kind != "container"]
        self.builtin_names = [e.name for e in self.d.entries]

    # -- scalars -----------------------------------------------------------------------------------
    def int(self, rng: random.Random) -> int:
        r = rng.random()
        if r < 0.5:
            v = rng.choice(INT_EDGES)
        elif r < 0.8:
            v = rng.randint(-1000, 1000)
        else:
            v = rng.randint(-(1 << 63), (1 << 63) - 1)
        return max(-(1 << 63), min((1 << 63) - 1, v))

    def float(self, rng: random.Random, f32: bool = False) -> float:
        r = rng.random()
        if r < 0.5:
            return rng.choice(F32_EDGES if f32 else FLOAT_EDGES)
        if r < 0.8:
            v = rng.randint(-2000, 2000) / 8
        else:
            v = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if not f32 or not math.isfinite(v):
            return v
        return struct.unpack("<f", struct.pack("<f", v))[0] if abs(v) < 3.4e38 else rng.choice(F32_EDGES)

    def text(self, rng: random.Random) -> str:
        r = rng.random()
        if r < 0.4:
            return rng.choice(TEXT_EDGES)
        n = rng.choice((1, 2, 3, 4, 5, 7, 8, 16, 33, 100, 300))
        alphabet = "abcxyz019_ /:.é€\U0001f600ДЖ日本\u0301"
        return "".join(rng.choice(alphabet) for _ in range(n))

    def word(self, rng: random.Random, word: L.Scalar) -> int:
        """An id word (RID, Object id, Signal object): small, all ones, or any."""
        return rng.choice((0, 1, (1 << 8 * word.size) - 1, rng.getrandbits(8 * word.size)))

    def component(self, rng: random.Random, comp: L.Scalar) -> Any:
        """One component of a math type: an integer component's edges, else a float32 one."""
        if not comp.is_float:
            lo, hi = comp.int_range
            return rng.choice((0, 1, -1, 7, hi, lo, rng.randint(-100, 100)))
        return self.float(rng, f32=True)

    # -- one value of one type ---------------------------------------------------------------------
    def of(self, e: TypeEntry, rng: random.Random, depth: int = 0) -> Any:
        p = kind_params(self.d, e.id)
        make = self.makers.get(p.kind)
        if make is None:
            raise ValueError(f"no generator for layout {p.kind}")
        return make(p, rng, depth)

    def _empty(self, p: KindParams, rng: random.Random, depth: int) -> Any:
        cls = value_class(p.wrapper)
        return None if cls is None else cls()

    def _bool(self, p: KindParams, rng: random.Random, depth: int) -> Any:
        return rng.random() < 0.5

    def _number(self, p: KindParams, rng: random.Random, depth: int) -> Any:
        v = self.float(rng) if p.layout.is_float else self.int(rng)  # type: ignore[attr-defined]
        return value_class(p.wide_marker)(v) if rng.random() < 0.05 else v

    def _string(self, p: KindParams, rng: random.Random, depth: int) -> Any:
        s = self.text(rng)
        wrap = value_class(p.wrapper)
        return s if wrap is None else wrap(s)

    def _struct(self, p: KindParams, rng: random.Random, depth: int) -> Any:
        comp = p.layout.component  # type: ignore[attr-defined]
        return self.builders[p.key](tuple(self.component(rng, comp) for _ in range(p.n)))

    def _node_path(self, p: KindParams, rng: random.Random, depth: int) -> Any:
        names = [self.text(rng) or "n" for _ in range(rng.randint(0, 3))]
        subs = [self.text(rng) or "s" for _ in range(rng.randint(0, 2))]
        return V.NodePath(names, subs, absolute=rng.random() < 0.5)

    def _id64(self, p: KindParams, rng: random.Random, depth: int) -> Any:
        return value_class(p.wrapper)(self.word(rng, p.layout.word))  # type: ignore[attr-defined]

    def _signal(self, p: KindParams, rng: random.Random, depth: int) -> Any:
        return V.Signal(self.text(rng), rng.choice((0, 1, rng.getrandbits(8 * L.SignalLayout.object_id.size))))

    def _object(self, p: KindParams, rng: random.Random, depth: int) -> Any:
        if self.full_objects and rng.random() < 0.6:
            return self.full_object(rng, depth)
        word = L.ObjectLayout.id
        return V.ObjectID(rng.choice((0, 1, 1288, (1 << 8 * word.size) - 1, rng.getrandbits(8 * word.size))))

    def _container(self, p: KindParams, rng: random.Random, depth: int) -> Any:
        return self.container(self.d.entries[p.type_id], rng, depth)

    def _packed_bytes(self, p: KindParams, rng: random.Random, depth: int) -> Any:
        return rng.randbytes(rng.choice((0, 1, 3, 4, 5, 64, 1000)))

    def _packed_strings(self, p: KindParams, rng: random.Random, depth: int) -> Any:
        return V.PackedStringArray(self.text(rng) for _ in range(rng.choice((0, 1, 2, 5))))

    def _packed(self, p: KindParams, rng: random.Random, depth: int) -> Any:
        cls = V.KEY_CLASSES[p.key]
        n = rng.choice((0, 1, 2, 3, 17, 100))
        comp = p.layout.component  # type: ignore[attr-defined]
        if not comp.is_float:
            lo, hi = comp.int_range
            flat = [rng.choice((0, -1, hi, lo, rng.randint(lo, hi))) for _ in range(n)]
        else:
            flat = [self.float(rng, f32=comp.size < L.F64.size) for _ in range(n * p.n)]
        obj = cls.__new__(cls)
        obj.array = array(cls.typecode, flat)
        return obj

    def full_object(self, rng: random.Random, depth: int) -> V.Object:
        cls = rng.choice(CLASS_NAMES)
        props: dict[str, Any] = {}
        if cls:
            for _ in range(rng.choice((0, 1, 2))):
                props[rng.choice(("name", "script", "x", "position", "", "editor_description"))] = \
                    self.value(rng, depth + 1)
        return V.Object(cls, props)

    def container_type(self, rng: random.Random) -> V.ContainerType | None:
        kind = rng.choice(L.CONTAINER_KINDS)
        if kind == "none":
            return None
        if kind == "builtin":
            return V.ContainerType("builtin", rng.choice(self.builtin_names[1:]))
        if kind == "class_name":
            return V.ContainerType("class_name", rng.choice(CLASS_NAMES[:6]))
        return V.ContainerType("script", rng.choice(("res://a.gd", "res://missing.gd", "res://")))

    def container(self, e: TypeEntry, rng: random.Random, depth: int) -> Any:
        pairs = e.typedef.layout.pairs  # type: ignore[attr-defined]
        n = 0 if depth >= 3 else rng.choice((0, 1, 2, 3, 5))
        if pairs:
            items = {}
            for _ in range(n):
                k = self.value(rng, depth + 1)
                try:
                    hash(k)
                except TypeError:
                    k = V.freeze(k)
                items[k] = self.value(rng, depth + 1)
            if self.d.has_typed_dictionaries() and rng.random() < 0.3:
                kt, vt = self.container_type(rng), self.container_type(rng)
                items = self._typed_items(rng, kt, vt, depth, n)
                return V.TypedDictionary(kt, vt, items)
            return items
        items_l = [self.value(rng, depth + 1) for _ in range(n)]
        if self.d.has_typed_arrays() and rng.random() < 0.3:
            et = self.container_type(rng) or V.ContainerType("builtin", self.builtin_names[2])
            return V.TypedArray(et, self._typed_list(rng, et, depth, n))
        return items_l

    def _of_name(self, t: V.ContainerType | None, rng: random.Random, depth: int) -> Any:
        if t is None:
            return self.value(rng, depth + 1)
        if t.kind != "builtin":
            return None if rng.random() < 0.5 else V.ObjectID(rng.getrandbits(32))
        e = next(e for e in self.entries if e.name == t.name)
        if e.typedef.layout.kind == "object":
            return None
        return self.of(e, rng, depth + 1)

    def _typed_list(self, rng: random.Random, t: V.ContainerType, depth: int, n: int) -> list:
        return [self._of_name(t, rng, depth) for _ in range(n)]

    def _typed_items(self, rng: random.Random, kt: Any, vt: Any, depth: int, n: int) -> dict:
        out = {}
        for _ in range(n):
            k = self._of_name(kt, rng, depth)
            try:
                hash(k)
            except TypeError:
                k = V.freeze(k)
            out[k] = self._of_name(vt, rng, depth)
        return out

    def edge_keys(self, rng: random.Random) -> dict:
        """A Dictionary keyed by edge values of one type (empty and non-empty arrays, NaN, signed zeros,
        empty strings...): key hashing, comparison and sorting are where engines trip."""
        e = rng.choice([e for e in self.entries if e.typedef.layout.kind not in ("empty", "container")])
        keys: list[Any] = []
        for _ in range(rng.randint(2, 4)):
            k = self.of(e, rng, 3)
            keys.append(k)
        kind = e.typedef.layout.kind
        if kind in ("packed", "packed_bytes", "packed_strings"):
            keys.append(type(keys[0])() if not isinstance(keys[0], bytes) else b"")
        elif kind == "number" and e.typedef.layout.is_float:  # type: ignore[attr-defined]
            keys += [math.nan, -0.0, 0.0]
        elif kind == "string":
            wrap = value_class(kind_params(self.d, e.id).wrapper)
            keys.append("" if wrap is None else wrap(""))
        out: dict = {}
        for i, k in enumerate(keys):
            try:
                hash(k)
            except TypeError:
                k = V.freeze(k)
            out[k] = i
        return out

    def value(self, rng: random.Random, depth: int = 0) -> Any:
        pool = self.entries if depth < 3 else self.leaf_entries
        return self.of(rng.choice(pool), rng, depth)

    def encoded(self, rng: random.Random, entry: TypeEntry | None = None) -> tuple[Any, bytes]:
        """A random value (of ``entry``'s type, or any) and its bytes; retries values the codec refuses."""
        for _ in range(20):
            v = self.of(entry, rng) if entry is not None else self.value(rng)
            try:
                return v, encode(v, self.d, full_objects=self.full_objects)
            except (ValueError, TypeError):
                continue
        return None, encode(None, self.d)


# -- deep nesting -------------------------------------------------------------------------------------

#: nesting shapes; "typed_array" and "object" only where the dialect has them
NEST_SHAPES = ("array", "dict_value", "dict_key", "mixed", "typed_array", "object")


def nest_units(dialect: Dialect | str, shape: str) -> tuple[bytes, bytes, bytes] | None:
    """(prefix unit, leaf, suffix unit): ``prefix * n + leaf + suffix * n`` is a value nested n deep.

    Units are cut from encoder output, so every id and flag comes from the spec. None when the
    dialect cannot express the shape.
    """
    return _nest_units(get_dialect(dialect).name, shape)


@functools.lru_cache(maxsize=256)
def _nest_units(dialect: str, shape: str) -> tuple[bytes, bytes, bytes] | None:
    d = get_dialect(dialect)
    leaf = encode(None, d)
    marker = encode(0x5EED, d)
    if shape == "array":
        return encode([0x5EED], d)[:-len(marker)], leaf, b""
    if shape == "dict_value":
        return encode({None: 0x5EED}, d)[:-len(marker)], leaf, b""
    if shape == "dict_key":
        whole = encode({0x5EED: None}, d)
        i = whole.index(marker)
        return whole[:i], leaf, whole[i + len(marker):]
    if shape == "mixed":
        a = encode([0x5EED], d)[:-len(marker)]
        b = encode({None: 0x5EED}, d)[:-len(marker)]
        return a + b, leaf, b""
    if shape == "typed_array":
        if not d.has_typed_arrays():
            return None
        arr = d.by_key("ARRAY")
        t = V.ContainerType("builtin", arr.name)  # type: ignore[union-attr]
        inner = encode([0x5EED], d)
        return encode(V.TypedArray(t, [[0x5EED]]), d)[:-len(inner)], leaf, b""
    if shape == "object":
        whole = encode(V.Object("Object", {"p": 0x5EED}), d, full_objects=True)
        return whole[:-len(marker)], leaf, b""
    raise ValueError(f"unknown nesting shape {shape!r}")


def nest_levels(shape: str, depth: int) -> int:
    """Nesting levels of ``nest(shape, depth)``: a "mixed" unit is an Array and a Dictionary."""
    return depth * 2 if shape == "mixed" else depth


def nest(dialect: Dialect | str, shape: str, depth: int) -> bytes | None:
    units = nest_units(dialect, shape)
    if units is None:
        return None
    pre, leaf, suf = units
    return pre * depth + leaf + suf * depth


def nest_size(dialect: Dialect | str, shape: str, depth: int) -> int:
    units = nest_units(dialect, shape)
    if units is None:
        return 0
    pre, leaf, suf = units
    return (len(pre) + len(suf)) * depth + len(leaf)
