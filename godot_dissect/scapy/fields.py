"""scapy fields for Godot Variants, one small family per layout kind of the spec.

Fields never trust the bytes: a field that needs more bytes than are left raises :class:`Short`
and the packet keeps what it could read (the rest of its fields are :data:`MISSING`, the leftover
bytes go to its ``tail``), so dissecting any input ends without an exception.

Lengths, counts, paddings, the type id and the header flags default to :data:`AUTO`: computed from
the other fields when the packet is built, unless set by hand (to craft malformed packets).
``AUTO`` is not ``None`` so that scapy's ``fuzz()`` replaces them with random values too.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any

from scapy.fields import Field
from scapy.packet import Packet
from scapy.volatile import VolatileValue

from .. import values as V
from ..spec import layouts as L
from ..spec.dialects import Dialect, get_dialect
from ..spec.kinds import component_code
from ..spec.types import TypeDef

#: the raw storage of ``Packet.fields`` / ``default_fields`` (the Variant layer makes both lazy)
RAW_FIELDS = Packet.__dict__["fields"]
RAW_DEFAULTS = Packet.__dict__["default_fields"]

DEFAULT_DIALECT = "godot4"


class _Sentinel:
    __slots__ = ("label",)

    def __init__(self, label: str) -> None:
        self.label = label

    def __repr__(self) -> str:
        return self.label

    def __copy__(self) -> _Sentinel:
        return self

    def __deepcopy__(self, memo: Any) -> _Sentinel:
        return self

    def __reduce__(self) -> str:
        return self.label

    def __iter__(self) -> Any:
        # a list field the bytes ended before holds no packets: scapy's getlayer()/haslayer()
        # (``Layer in pkt``) walk every list of packets and would fail on it
        return iter(())


#: "compute me when building" (lengths, counts, padding, type id, header flags)
AUTO = _Sentinel("AUTO")
#: a field the bytes ended before (the packet was truncated); it builds to nothing
MISSING = _Sentinel("MISSING")


class Short(Exception):
    """The bytes ended inside a field. ``partial`` is what could be read of it (or None) and
    ``used`` how many bytes that took."""

    def __init__(self, partial: Any = None, used: int = 0) -> None:
        self.partial, self.used = partial, used


def raw_fields(pkt: Packet) -> dict[str, Any]:
    """The packet's explicit field values, without making a lazy Variant build its fields."""
    return RAW_FIELDS.__get__(pkt)


_DIALECTS: dict[str, Dialect] = {}


def dialect_name(pkt: Packet | None) -> str:
    if pkt is None:
        return DEFAULT_DIALECT
    d = RAW_FIELDS.__get__(pkt).get("dialect")
    if d is None or d == "auto":
        d = pkt._dn or DEFAULT_DIALECT  # every Godot layer has the _dn slot (the dialect it read)
    return d


def dialect_of(pkt: Packet | None) -> Dialect:
    name = dialect_name(pkt)
    d = _DIALECTS.get(name)
    if d is None:
        d = _DIALECTS[name] = get_dialect(name)
    return d


_TYPEDEFS: dict[tuple[str, str], TypeDef | None] = {}


def typedef_of(pkt: Packet) -> TypeDef:
    """The spec entry of this packet's type in this packet's dialect (the class default if the
    dialect does not have the type)."""
    key = type(pkt).key
    name = dialect_name(pkt)
    td = _TYPEDEFS.get((name, key))
    if td is None:
        e = dialect_of(pkt).by_key(key)
        td = _TYPEDEFS[(name, key)] = e.typedef if e is not None else type(pkt).typedefs[0]
    return td


def resolve(x: Any, pkt: Packet | None = None) -> Any:
    """A random (volatile) value fixed; values that need their packet (``fuzzing.Deferred``)
    are fixed for ``pkt``, or read as AUTO without one."""
    if isinstance(x, VolatileValue):
        if getattr(type(x), "fix_for", None) is not None:
            return x.fix_for(pkt) if pkt is not None else AUTO
        return x._fix()
    return x


def value_of(pkt: Packet, name: str) -> Any:
    """A field's value as it will be built: volatile values fixed, AUTO computed."""
    fld = pkt.get_field(name)
    f = getattr(fld, "fld", fld)
    v = resolve(pkt.getfieldval(name), pkt)
    if (v is AUTO or v is None) and isinstance(f, GField):
        return f.auto(pkt)
    return v


def plain(v: Any) -> int:
    """An int field's value, with MISSING, AUTO and anything odd read as 0 (conditions on a
    truncated or half-random packet)."""
    return v if isinstance(v, int) else 0


class GField(Field):
    """Base of the Godot fields: AUTO values, volatile values, MISSING, short input."""

    __slots__ = ["auto_fn", "rand_fn"]

    def __init__(self, name: str, default: Any, fmt: str = "<I", auto_fn: Callable[[Packet], Any] | None = None,
                 rand_fn: Callable[[], Any] | None = None) -> None:
        self.auto_fn = auto_fn
        self.rand_fn = rand_fn
        Field.__init__(self, name, default, fmt)

    def auto(self, pkt: Packet) -> Any:
        if self.auto_fn is None:
            return self.default if self.default is not AUTO else 0
        return self.auto_fn(pkt)

    def value(self, pkt: Packet, x: Any) -> Any:
        x = resolve(x, pkt)
        if x is AUTO or x is None:
            return self.auto(pkt)
        return x

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        return x

    def i2h(self, pkt: Packet | None, x: Any) -> Any:
        if (x is AUTO or x is None) and pkt is not None:
            try:
                return self.auto(pkt)
            except Exception:  # noqa: BLE001 - a half-built packet: show it as unknown
                return None
        return x

    def i2repr(self, pkt: Packet | None, x: Any) -> str:
        if x is MISSING:
            return "<missing: the data ended before this field>"
        if isinstance(x, VolatileValue):
            return repr(x)
        return self.show(pkt, self.i2h(pkt, x))

    def show(self, pkt: Packet | None, v: Any) -> str:
        return repr(v)

    def randval(self) -> Any:
        return self.rand_fn() if self.rand_fn is not None else None

    def do_copy(self, x: Any) -> Any:
        return x if isinstance(x, (bytes, str, int, float, _Sentinel)) else Field.do_copy(self, x)


class NumField(GField):
    """A fixed-width little-endian number (``fmt`` a struct code such as ``<I``)."""

    __slots__ = ["names", "pack_code"]

    def __init__(self, name: str, default: Any, fmt: str = "<I", auto_fn: Callable[[Packet], Any] | None = None,
                 rand_fn: Callable[[], Any] | None = None, names: Callable[[Packet, int], str] | None = None) -> None:
        GField.__init__(self, name, default, fmt, auto_fn, rand_fn)
        self.names = names
        code = fmt[-1]
        self.pack_code = "<" + (code.upper() if code in "bhilq" else code)

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        sz = self.sz
        if len(s) < sz:
            raise Short
        return s[sz:], self.struct.unpack_from(s)[0]

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        if val is MISSING:
            return s
        v = self.value(pkt, val)
        return s + pack_number(self.pack_code, v)

    def show(self, pkt: Packet | None, v: Any) -> str:
        if self.names is not None and isinstance(v, int) and pkt is not None:
            note = self.names(pkt, v)
            if note:
                return f"{v} ({note})"
        return repr(v)


def pack_number(code: str, v: Any) -> bytes:
    """Pack anything number-like the way a fuzzer wants: ints wrap to the field width, floats
    too large for float32 become inf."""
    c = code[-1]
    if c in "fd":
        v = float(v)
        if c == "f" and not math.isinf(v) and not math.isnan(v) and abs(v) > 3.4028234663852886e38:
            v = math.copysign(math.inf, v)
        return struct.pack(code, v)
    v = int(v)
    bits = struct.calcsize(code) * 8
    return struct.pack("<" + c.upper(), v & ((1 << bits) - 1))


class CodedNumField(GField):
    """A number whose struct code the packet decides (a header flag, a mode, an earlier value):
    subclasses say which in ``code(pkt)``; None means the field cannot be read."""

    __slots__ = []

    def code(self, pkt: Packet) -> str | None:
        raise NotImplementedError

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        code = self.code(pkt)
        if code is None:
            raise Short
        n = struct.calcsize(code)
        if len(s) < n:
            raise Short
        return s[n:], struct.unpack_from(code, s)[0]

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        if val is MISSING:
            return s
        return s + pack_number(self.code(pkt), self.value(pkt, val))  # type: ignore[arg-type]


class DialectField(GField):
    """Which dialect the packet is written in: not on the wire (zero bytes), set per packet."""

    __slots__ = []

    def __init__(self, default: str = DEFAULT_DIALECT) -> None:
        GField.__init__(self, "dialect", default, "<B")
        self.sz = 0

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        if isinstance(x, Dialect):
            return x.name
        if x is None or x == "auto":
            return x
        return get_dialect(x).name

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        return s, raw_fields(pkt).get("dialect", self.default)

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        return s

    def i2h(self, pkt: Packet | None, x: Any) -> Any:
        if (x is None or x == "auto") and pkt is not None:
            return pkt._dn or x
        return x

    def randval(self) -> None:
        return None


class BytesField(GField):
    """Raw bytes: ``length_from`` bytes, or all that is left."""

    __slots__ = ["length_from", "partial_ok"]

    def __init__(self, name: str, default: Any, length_from: Callable[[Packet], int] | None = None,
                 partial_ok: bool = False, auto_fn: Callable[[Packet], Any] | None = None,
                 rand_fn: Callable[[], Any] | None = None) -> None:
        GField.__init__(self, name, default, "<B", auto_fn, rand_fn)
        self.length_from = length_from
        self.partial_ok = partial_ok

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        if self.length_from is None:
            return b"", s
        n = self.length_from(pkt)
        if n < 0 or n > len(s):
            if self.partial_ok:
                return b"", s
            raise Short(s, len(s))
        return s[n:], s[:n]

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        if isinstance(x, str):
            return x.encode("utf-8", "surrogatepass")
        if isinstance(x, (bytearray, memoryview)):
            return bytes(x)
        return x

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        if val is MISSING:
            return s
        return s + self.wire(pkt, val)

    def wire(self, pkt: Packet, val: Any) -> bytes:
        v = self.value(pkt, val)
        if isinstance(v, str):
            return v.encode("utf-8", "surrogatepass")
        return bytes(v)

    def i2len(self, pkt: Packet, x: Any) -> int:
        return len(self.wire(pkt, x))

    def show(self, pkt: Packet | None, v: Any) -> str:
        if isinstance(v, bytes) and len(v) > 48:
            return f"{v[:48]!r}... ({len(v)} bytes)"
        return repr(v)


class TextField(BytesField):
    """UTF-8 text as it is on the wire (bytes); shown and read (``pkt.value``) as a str."""

    __slots__ = []

    def i2h(self, pkt: Packet | None, x: Any) -> Any:
        x = GField.i2h(self, pkt, x)
        if isinstance(x, bytes):
            try:
                return x.decode("utf-8", "surrogatepass")
            except UnicodeDecodeError:
                return x
        return x

    def show(self, pkt: Packet | None, v: Any) -> str:
        if isinstance(v, str) and len(v) > 80:
            return f"{v[:80]!r}... ({len(v)} characters)"
        return BytesField.show(self, pkt, v)


def wire_bytes(pkt: Packet, name: str) -> bytes:
    fld = pkt.get_field(name)
    f = getattr(fld, "fld", fld)
    v = pkt.getfieldval(name)
    if v is MISSING:
        return b""
    return f.wire(pkt, v)


def length_of(name: str) -> Callable[[Packet], int]:
    return lambda pkt: len(wire_bytes(pkt, name))


def padding_of(name: str) -> Callable[[Packet], bytes]:
    return lambda pkt: b"\0" * (-len(wire_bytes(pkt, name)) & 3)


class PadField(BytesField):
    """Zero padding to a multiple of 4 after field ``of`` (takes what is there when short)."""

    __slots__ = ["of"]

    def __init__(self, name: str, of: str, rand_fn: Callable[[], Any] | None = None) -> None:
        BytesField.__init__(self, name, AUTO, auto_fn=padding_of(of), rand_fn=rand_fn)
        self.of = of

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        v = raw_fields(pkt).get(self.of)
        n = -len(v) & 3 if isinstance(v, bytes) else 0
        return s[n:], s[:n]


def count_of(name: str) -> Callable[[Packet], int]:
    def count(pkt: Packet) -> int:
        v = resolve(pkt.getfieldval(name), pkt)
        return len(v) if isinstance(v, (list, tuple, bytes, str, V.PackedArray)) else 0
    return count


# -- numbers by layout ---------------------------------------------------------------------------
_FLAG64 = L.FLAG_64.mask >> 16  # the header's upper half as the flags field holds it


def is_wide(pkt: Packet) -> bool:
    return bool(plain(value_of(pkt, "flags")) & _FLAG64)


class NumberValueField(CodedNumField):
    """INT/FLOAT payload: the layout's narrow scalar, or its wide one when FLAG_64 is set."""

    __slots__ = []

    def code(self, pkt: Packet) -> str:
        layout = typedef_of(pkt).layout
        return "<" + (layout.wide if is_wide(pkt) else layout.narrow).code

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        if isinstance(x, bool):
            return int(x)
        return x


def component_struct(pkt: Packet, comp: L.Scalar) -> str:
    return "<" + component_code(comp, is_wide(pkt))[0]


class ComponentField(CodedNumField):
    """One component of a Struct layout: I32, F32, or REAL (f32, f64 with FLAG_64)."""

    __slots__ = []

    def code(self, pkt: Packet) -> str:
        return component_struct(pkt, typedef_of(pkt).layout.component)


def packed_element(pkt: Packet) -> tuple[str, int, int, int]:
    """(struct code, components per element, element size on the wire, component size)."""
    layout = typedef_of(pkt).layout
    comp, width = layout.component, layout.width
    code, size = component_code(comp, is_wide(pkt))
    if code != comp.code:
        return code, width, size * width, size
    return code, width, layout.stride or size * width, size


class PackedItemsField(GField):
    """The elements of a Packed layout, held as the value class (``array``-backed)."""

    __slots__ = ["count_field"]
    islist = 1

    def __init__(self, name: str, count_field: str, rand_fn: Callable[[], Any] | None = None) -> None:
        GField.__init__(self, name, [], "<B", rand_fn=rand_fn)
        self.count_field = count_field

    def cls(self, pkt: Packet) -> type:
        return V.KEY_CLASSES[type(pkt).key]

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        n = max(plain(raw_fields(pkt).get(self.count_field)), 0)
        code, width, esize, csize = packed_element(pkt)
        m = min(n, len(s) // esize)
        cls = self.cls(pkt)
        body = s[:m * esize]
        if esize != csize * width:  # padded stride (Godot 3 double builds)
            items = cls([v[0] for v in struct.iter_unpack(f"<{code}{esize - csize}x", body)], typecode=code)
        else:
            items = cls.from_bytes(body, code)
        if m < n:
            raise Short(items, m * esize)
        return s[m * esize:], items

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        if pkt is not None and isinstance(x, (list, tuple)):
            return self.cls(pkt)(x)
        return x

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        if val is MISSING:
            return s
        v = self.value(pkt, val)
        cls = self.cls(pkt)
        if not isinstance(v, cls):
            v = cls(v)
        code, width, esize, csize = packed_element(pkt)
        if esize != csize * width:
            filler = b"\0" * (esize - csize * width)
            return s + b"".join(pack_number("<" + code, x) + filler for x in v.array)
        try:
            return s + v.to_bytes(code)
        except OverflowError:
            return s + b"".join(pack_number("<" + code, x) for x in v.array)

    def i2len(self, pkt: Packet, x: Any) -> int:
        return len(x)

    def show(self, pkt: Packet | None, v: Any) -> str:
        if v is None:
            return "[]"
        items = list(v[i] for i in range(min(len(v), 6)))
        more = f", ... ({len(v)} items)" if len(v) > 6 else ""
        return "[" + ", ".join(repr(tuple(i)) if isinstance(i, tuple) else repr(i) for i in items) + more + "]"

    def do_copy(self, x: Any) -> Any:
        return x  # the value classes are treated as immutable


class HeaderFlagsField(NumField):
    """The header's upper 16 bits, named after the type's header fields in the spec."""

    __slots__ = []

    def show(self, pkt: Packet | None, v: Any) -> str:
        if not isinstance(v, int) or pkt is None or getattr(type(pkt), "key", None) is None:
            return repr(v)
        header = v << 16
        parts = []
        known = 0
        for hf in typedef_of(pkt).header_fields:
            known |= hf.mask
            got = hf.get(header)
            if got:
                parts.append(hf.name if hf.width == 1 else f"{hf.name}={L.CONTAINER_KINDS[got]}")
        if header & ~known:
            parts.append(f"other bits 0x{header & ~known:08x}")
        return f"0x{v:04x} ({', '.join(parts)})" if parts else "0"
