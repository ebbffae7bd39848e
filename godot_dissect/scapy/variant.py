"""The Variant layer: one scapy class per Godot type, generated from the spec at import.

``GodotVariant(data)`` dissects bytes into the class of their type (``GodotDictionary``,
``GodotVector3``...). Dissecting is lazy: the C-accelerated codec decodes the bytes and the
value is attached; the fields (header, payload by layout, nested Variants as nested packets) are
built from the bytes only when something looks at them (``show()``, ``pkt.count``, editing...).
Bytes the codec rejects are dissected field by field at once, as far as they go.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import Any

from scapy.base_classes import Packet_metaclass
from scapy.config import conf
from scapy.fields import ConditionalField
from scapy.layers.inet import TCP, UDP
from scapy.packet import Packet

from .. import values as V
from ..codec import decode_prefix, encode
from ..codec.decoder import fits_f32
from ..codec.kinds import node_path_counts
from ..codec.structs import compile_flattener
from ..errors import DecodeError
from ..spec import layouts as L
from ..spec import transports
from ..spec.dialects import DIALECTS, get_dialect
from ..spec.kinds import count_code
from ..spec.types import TypeDef
from ..spec.words import BitField
from ..text import from_text, to_text
from . import flows
from .fields import (
    AUTO,
    MISSING,
    RAW_DEFAULTS,
    RAW_FIELDS,
    BytesField,
    ComponentField,
    DialectField,
    GField,
    HeaderFlagsField,
    NumberValueField,
    NumField,
    PackedItemsField,
    PadField,
    Short,
    TextField,
    count_of,
    dialect_name,
    dialect_of,
    length_of,
    plain,
    raw_fields,
    resolve,
    typedef_of,
    value_of,
)

#: nested Variants deeper than this are not expanded into packets (shown as GodotOpaque)
MAX_DEPTH = 32
#: the engines' own nesting limit, which the codec applies
ENGINE_DEPTH = transports.MAX_DEPTH

_FLAG64 = L.FLAG_64.mask >> 16
_LENGTH = count_code(L.PADDED_STRING.count)  # a string's length word
_PAD = L.PADDED_STRING.pad - 1
_AS_ID = L.FLAG_OBJECT_AS_ID.mask >> 16


# -- shared behaviour of every Godot layer ------------------------------------------------------
class _GodotBase(Packet):
    """Robust field-by-field dissection (short input never raises) and the Godot slots."""

    __slots__ = ["_dn", "_ctx", "_depth", "_sub", "_span", "_error"]
    _has_ctx = True

    def _init_slots(self, depth: int = 0, sub: bool = False, ctx: Any = None) -> None:
        osa = object.__setattr__
        osa(self, "_dn", None)
        osa(self, "_ctx", ctx)
        osa(self, "_depth", depth)
        osa(self, "_sub", sub)
        osa(self, "_span", 0)
        osa(self, "_error", None)

    def __init__(self, _pkt: bytes = b"", *args: Any, _depth: int = 0, _sub: bool = False, _ctx: Any = None,
                 **kw: Any) -> None:
        self._init_slots(_depth, _sub, _ctx)
        Packet.__init__(self, _pkt, *args, **kw)

    def dissect_fields(self, s: bytes) -> bytes:
        """Fill the fields from ``s``; return what is left. Never raises on short input."""
        raw = RAW_FIELDS.__get__(self)
        total = len(s)
        fields = self.fields_desc
        for i, f in enumerate(fields):
            name = f.name
            if name == "dialect" or name == "tail":
                continue
            try:
                s, v = f.getfield(self, s)
            except Short as e:
                if e.partial is not None:
                    raw[name] = e.partial
                    s = s[e.used:]
                elif not f.isconditional or f._evalcond(self):
                    raw[name] = MISSING
                for g in fields[i + 1:]:
                    if g.name in ("dialect", "tail"):
                        continue
                    if not g.isconditional or g._evalcond(self):
                        raw[g.name] = MISSING
                if s:
                    raw["tail"] = s
                s = b""
                break
            if f.isconditional and v is None:
                continue
            raw[name] = v
        object.__setattr__(self, "_span", total - len(s))
        return s

    def do_dissect(self, s: bytes) -> bytes:
        rest = self.dissect_fields(s)
        self.explicit = 1
        self.raw_packet_cache = None
        self.raw_packet_cache_fields = None
        return rest

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes | None]:
        return b"", s  # what follows a Godot element belongs to its container

    def do_build(self) -> bytes:
        fixed = FIX_RANDOM(self)  # fuzz(): random values fixed once per build, consistently
        return Packet.do_build(fixed if fixed is not None else self)

    def answers(self, other: Packet) -> int:
        """Godot messages carry no request ids: any Godot message answers any other (``sr1``)."""
        return int(isinstance(other, _GodotBase))

    def copy(self) -> Any:
        clone = Packet.copy(self)
        for slot in ("_dn", "_ctx", "_depth", "_sub", "_span", "_error"):
            object.__setattr__(clone, slot, getattr(self, slot))
        return clone


def _tail_field() -> ConditionalField:
    """Bytes left over when the data ended inside a field (only present then)."""
    return ConditionalField(BytesField("tail", b""), lambda p: bool(RAW_FIELDS.__get__(p).get("tail")))


def _no_random(pkt: Packet) -> Packet | None:
    return None


FIX_RANDOM: Callable[[Packet], Packet | None] = _no_random  # fuzzing.py sets it


# -- dialect tables -----------------------------------------------------------------------------
_KEY_CLASS: dict[str, type[GodotVariant]] = {}
_ID_CLASSES: dict[str, list[type[GodotVariant]]] = {}


def class_for(dialect: str, type_id: int) -> type[GodotVariant]:
    """The layer class for a type id in a dialect (GodotVariant itself for ids the dialect lacks)."""
    table = _ID_CLASSES.get(dialect)
    if table is None:
        table = _ID_CLASSES[dialect] = [_KEY_CLASS[e.key] for e in get_dialect(dialect).entries]
    return table[type_id] if type_id < len(table) else GodotVariant


def type_name(dialect: str, key: str | None, type_id: int | None = None) -> str:
    d = get_dialect(dialect)
    if key is not None:
        e = d.by_key(key)
        if e is not None:
            return e.name
        return _KEY_CLASS[key].__name__[5:] if key in _KEY_CLASS else key
    if type_id is not None and type_id < len(d.entries):
        return d.entries[type_id].name
    return f"type {type_id}"


def _type_note(pkt: Packet, v: int) -> str:
    d = dialect_of(pkt)
    if v < len(d.entries):
        return d.entries[v].name
    return f"not a type in {d.name}"


def _auto_type(pkt: Packet) -> int:
    key = type(pkt).key
    d = dialect_of(pkt)
    if key is None:
        return 0
    e = d.by_key(key)
    if e is None:
        raise ValueError(f"{d.name} has no {type(pkt).__name__[5:]} type")
    return e.id


def _type_id(d: Any, x: Any) -> Any:
    if isinstance(x, str):
        for e in d.entries:
            if x in (e.name, e.key) or x == _KEY_CLASS[e.key].__name__:
                return e.id
        raise ValueError(f"no type {x!r} in {d.name}")
    return x


def _type_any2i(pkt: Packet | None, x: Any) -> Any:
    return _type_id(dialect_of(pkt), x)


class TypeField(NumField):
    __slots__ = []

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        return _type_any2i(pkt, x)


# -- fuzzing hooks (filled in by fuzzing.py) ----------------------------------------------------
RAND: dict[str, Callable[..., Any]] = {}


def _rand(kind: str, *args: Any) -> Callable[[], Any]:
    return lambda: RAND[kind](*args) if kind in RAND else None


class ShownAtTop(ConditionalField):
    """A field shown only on the outermost packet (the dialect of nested Variants is the same)."""

    def i2h(self, pkt: Packet | None, val: Any) -> Any:
        return self.fld.i2h(pkt, val)


def _header_fields(base: bool = False) -> list[Any]:
    return [
        ShownAtTop(DialectField(), lambda p: not p._sub),
        TypeField("type", AUTO, "<B", auto_fn=_auto_type, names=_type_note,
                  rand_fn=_rand("base_type") if base else None),
        NumField("reserved", 0, "<B", rand_fn=_rand("reserved")),
        HeaderFlagsField("flags", AUTO, "<H", auto_fn=lambda p: auto_flags(p), rand_fn=_rand("flags")),
    ]


# -- the Variant base class ---------------------------------------------------------------------
def _resolve(data: bytes, dialect: Any, pre: Any, under: Packet | None) -> tuple[str, Any]:
    """Dialect and (maybe) the codec's reading for bytes about to be dissected."""
    if dialect is not None:
        return dialect if isinstance(dialect, str) and dialect in DIALECTS else get_dialect(dialect).name, pre
    if under is not None:
        return flows.choose(data, flows.context_of(under), default="godot4")
    return "godot4", pre


class _ReadOnce(Packet_metaclass):
    """Scapy calls ``dispatch_hook`` and then ``__init__`` with the same arguments, and both need the
    dialect of bytes found under another layer (a UDP payload). The choice reads the bytes and
    counts in the flow's dialect guess, so it is made once, here, and handed to both calls as their
    ``dialect`` and ``_pre`` arguments: the reading travels with the call, not through a global."""

    def __call__(cls, *args: Any, **kw: Any) -> Any:
        if args and args[0] and kw.get("dialect") is None and kw.get("_underlayer") is not None:
            kw["dialect"], kw["_pre"] = _resolve(args[0], None, kw.get("_pre"), kw["_underlayer"])
        return super().__call__(*args, **kw)


class _PerType(_ReadOnce):
    """The metaclass of the per-type classes: they have no ``dispatch_hook`` (their ``__init__``
    resolves once), so they are called as scapy calls any layer, without the step above."""

    __call__ = Packet_metaclass.__call__


class GodotVariant(_GodotBase, metaclass=_ReadOnce):
    """A Godot Variant (``var_to_bytes``): header (type, flags) and a payload by layout.

    ``GodotVariant(data, dialect="godot3")`` dissects; ``GodotVariant.from_value(v)`` and
    ``GodotVariant.from_text("Vector2(1, 2)")`` craft; ``GodotVariant(type="Vector2", x=1)``
    builds from fields. ``pkt.to_value()`` gives the Python value back.
    """

    name = "GodotVariant"
    __slots__ = ["_lazy", "_value", "_pending"]
    match_subclass = True
    key: str | None = None
    typedefs: tuple[TypeDef, ...] = ()
    fields_desc = [*_header_fields(base=True), BytesField("body", b""), _tail_field()]

    # ``fields``/``default_fields`` build the fields of a lazily dissected packet on first use
    def _get_fields(self) -> dict[str, Any]:
        if self._lazy is not None:
            self._materialize()
        return RAW_FIELDS.__get__(self)

    def _set_fields(self, v: dict[str, Any]) -> None:
        RAW_FIELDS.__set__(self, v)

    def _get_defaults(self) -> dict[str, Any]:
        if self._lazy is not None:
            self._materialize()
        return RAW_DEFAULTS.__get__(self)

    def _set_defaults(self, v: dict[str, Any]) -> None:
        RAW_DEFAULTS.__set__(self, v)

    fields = property(_get_fields, _set_fields)  # type: ignore[assignment]
    default_fields = property(_get_defaults, _set_defaults)  # type: ignore[assignment]

    @classmethod
    def dispatch_hook(cls, _pkt: bytes | None = None, *args: Any, **kw: Any) -> type[Packet]:
        if cls is not GodotVariant:
            return cls
        if _pkt:
            d, _ = _resolve(_pkt, kw.get("dialect"), kw.get("_pre"), kw.get("_underlayer"))
            return class_for(d, _pkt[0])
        t = kw.get("type")
        if t is not None:
            d = kw.get("dialect") or "godot4"
            d = get_dialect(d if isinstance(d, str) else d.name)
            return class_for(d.name, _type_id(d, t))
        return cls

    def __init__(self, _pkt: bytes = b"", *args: Any, dialect: Any = None, _depth: int = 0, _pre: Any = None,
                 _sub: bool = False, _ctx: Any = None, **kw: Any) -> None:
        self._init_slots(_depth, _sub, _ctx)
        osa = object.__setattr__
        osa(self, "_lazy", None)
        osa(self, "_value", None)
        osa(self, "_pending", None)
        if _pkt:
            if isinstance(_pkt, (bytearray, memoryview)):
                _pkt = bytes(_pkt)
            osa(self, "_pending", _resolve(_pkt, dialect, _pre, kw.get("_underlayer")))
        Packet.__init__(self, _pkt, *args, **kw)
        if dialect is not None and not _pkt:
            name = dialect if isinstance(dialect, str) else dialect.name
            RAW_FIELDS.__get__(self)["dialect"] = get_dialect(name).name

    # -- dissection -----------------------------------------------------------------------------
    def dissect(self, s: bytes) -> None:
        d, pre = self._pending or ("godot4", None)
        object.__setattr__(self, "_pending", None)
        RAW_FIELDS.__get__(self)["dialect"] = d
        object.__setattr__(self, "_dn", d)
        if pre is None:
            pre = flows.read(s, d, max_depth=max(ENGINE_DEPTH - self._depth, 0))
        value, used = pre
        if 0 < used <= len(s) and self.key is not None and class_for(d, s[0]) is type(self):
            lazy = s if used == len(s) else s[:used]
            object.__setattr__(self, "_lazy", lazy)
            object.__setattr__(self, "_value", value)
            object.__setattr__(self, "_span", used)
            self.raw_packet_cache = lazy
            self.explicit = 1
            rest = s[used:]
        else:
            if used < 0:
                object.__setattr__(self, "_error", value)
            rest = self.do_dissect(s)
        if rest and not self._sub:
            self.add_payload(conf.raw_layer(rest, _internal=1, _underlayer=self))

    def _materialize(self) -> None:
        data = self._lazy
        object.__setattr__(self, "_lazy", None)
        object.__setattr__(self, "_value", None)
        self.dissect_fields(data)
        self._autofy()
        self.raw_packet_cache = None
        self.raw_packet_cache_fields = None

    def _autofy(self) -> None:
        """Drop dissected lengths, counts, paddings and flags that equal what would be computed,
        so that editing a dissected packet recomputes them."""
        raw = RAW_FIELDS.__get__(self)
        for f in self.fields_desc:
            fld = getattr(f, "fld", f)
            if isinstance(fld, GField) and fld.default is AUTO and f.name in raw:
                v = raw[f.name]
                if v is not MISSING and v == fld.auto(self):
                    del raw[f.name]

    def self_build(self) -> bytes:
        if self._lazy is not None:
            return self._lazy
        return Packet.self_build(self)

    def do_build(self) -> bytes:
        if self._lazy is not None:
            return Packet.do_build(self)
        t = RAW_FIELDS.__get__(self).get("type", RAW_DEFAULTS.__get__(self).get("type"))
        if type(self) is GodotVariant and getattr(type(t), "fix_for", None) and getattr(t, "label", None) == "type":
            # fuzz(GodotVariant()): a random Variant of a random type
            from .fuzzing import random_variant

            return bytes(random_variant(dialect_name(self), self._depth)) + Packet.do_build_payload(self)
        return _GodotBase.do_build(self)

    def copy(self) -> Any:
        if self._lazy is None:
            return _GodotBase.copy(self)
        clone = self.__class__()
        RAW_FIELDS.__get__(clone)["dialect"] = RAW_FIELDS.__get__(self).get("dialect")
        RAW_DEFAULTS.__set__(clone, dict(RAW_DEFAULTS.__get__(self)))  # never the class's shared dict
        osa = object.__setattr__
        for slot in ("_dn", "_ctx", "_depth", "_sub", "_span", "_error", "_lazy", "_value"):
            osa(clone, slot, getattr(self, slot))
        clone.raw_packet_cache = self._lazy
        clone.explicit = 1
        clone.underlayer, clone.parent = self.underlayer, self.parent
        clone.time, clone.wirelen, clone.comments = self.time, self.wirelen, self.comments
        clone.payload = self.payload.copy()
        clone.payload.add_underlayer(clone)
        return clone

    # a lazy packet holds only Godot layers in its fields: searching for others skips them
    def haslayer(self, cls: Any, _subclass: bool | None = None) -> Any:
        if self._lazy is not None and not _is_godot(cls):
            return self.payload.haslayer(cls, _subclass=_subclass)
        return Packet.haslayer(self, cls, _subclass=_subclass)

    def getlayer(self, cls: Any, nb: int = 1, _track: Any = None, _subclass: bool | None = None, **flt: Any) -> Any:
        if self._lazy is not None and not isinstance(cls, int) and not _is_godot(cls):
            return self.payload.getlayer(cls, nb=nb, _track=_track, _subclass=_subclass, **flt)
        return Packet.getlayer(self, cls, nb=nb, _track=_track, _subclass=_subclass, **flt)

    # -- values -----------------------------------------------------------------------------------
    def to_value(self) -> Any:
        """The Python value of this Variant (``DecodeError`` if its bytes are not one)."""
        if self._lazy is not None:
            return self._value
        return decode_prefix(self.do_build(), dialect_name(self), allow_objects=True)[0]

    def to_text(self) -> str:
        """The value in the engine's ``var_to_str`` notation for this packet's dialect."""
        return to_text(self.to_value(), dialect_name(self))

    @classmethod
    def from_value(cls, value: Any, dialect: Any = "godot4", full_objects: bool = False) -> GodotVariant:
        """The packet of ``value``: ``bytes(pkt) == godot_dissect.encode(value, dialect)``."""
        d = dialect if isinstance(dialect, str) else dialect.name
        d = get_dialect(d).name
        return GodotVariant(encode(value, d, full_objects=full_objects), dialect=d)

    @classmethod
    def from_text(cls, text: str, dialect: Any = "godot4") -> GodotVariant:
        """The packet of a value in Godot's text notation, e.g. ``"Vector2(1, 2)"``."""
        d = get_dialect(dialect if isinstance(dialect, str) else dialect.name).name
        return cls.from_value(from_text(text, d), d)

    def show2(self, dump: bool = False, indent: int = 3, lvl: str = "", label_lvl: str = "") -> Any:
        return GodotVariant(self.do_build(), dialect=dialect_name(self)).show(dump, indent, lvl, label_lvl)

    def mysummary(self) -> Any:
        return "GodotVariant " + summary_text(self), [UDP, TCP]


def _is_godot(cls: Any) -> bool:
    if isinstance(cls, str):
        return cls.startswith("Godot")
    return isinstance(cls, type) and issubclass(cls, _GodotBase)


# -- one-line summaries ---------------------------------------------------------------------------
SUMMARY_WIDTH = 72


def summary_text(pkt: Any) -> str:
    d = dialect_name(pkt)
    try:
        v = pkt.to_value()
    except Exception as e:  # noqa: BLE001 - malformed bytes, or an edited packet that no longer builds
        t = raw_fields(pkt).get("type")
        name = type_name(d, pkt.key, t if isinstance(t, int) else None)
        return f"{name} <malformed: {e.reason if isinstance(e, DecodeError) else e}>"
    return short_text(v, d)


def short_text(v: Any, dialect: str, width: int = SUMMARY_WIDTH) -> str:
    """A one-line description of a value: ``Dictionary{frame, players}``, ``int 5``..."""
    try:
        key = V.type_key(v)
    except TypeError:
        return repr(v)[:width]
    name = type_name(dialect, key)
    e = get_dialect(dialect).by_key(key)
    kind = e.typedef.layout.kind if e is not None else ""
    if kind == "container" and e.typedef.layout.pairs:  # type: ignore[union-attr]
        s = name + "{" + ", ".join(_element(k, dialect) for k in v) + "}"
    elif kind == "container":
        s = name + "[" + ", ".join(_element(x, dialect) for x in v[:16]) + (", ..." if len(v) > 16 else "") + "]"
    elif kind == "packed_bytes":
        s = f"{name}({len(v)} bytes)"
    elif kind in ("packed", "packed_strings"):
        s = f"{name}({len(v)})"
    else:
        leaf = _leaf(v, dialect)
        s = leaf if leaf.startswith(name) else f"{name} {leaf}".strip()
    return s if len(s) <= width else s[:width - 3] + "..."


def _leaf(v: Any, dialect: str) -> str:
    try:
        return " ".join(to_text(v, dialect).split())
    except Exception:  # noqa: BLE001 - text notation has no form for it (e.g. Object) in this dialect
        return repr(v)


def _element(v: Any, dialect: str) -> str:
    if isinstance(v, str) and not isinstance(v, V.StringName):
        return v
    if isinstance(v, (dict, list, tuple, V.FrozenDict)):
        key = V.type_key(v)
        return f"{type_name(dialect, key)}({len(v)})"
    return _leaf(v, dialect) if not isinstance(v, V.PackedArray) else f"{type_name(dialect, V.type_key(v))}({len(v)})"


# -- children -------------------------------------------------------------------------------------
class _OpaqueData(BytesField):
    __slots__ = []

    def show(self, pkt: Packet | None, v: Any) -> str:
        if not isinstance(v, bytes) or pkt is None:
            return repr(v)
        what = type_name(dialect_name(pkt), None, v[0]) if v else "empty"
        return f"<{what}, {len(v)} bytes: nested deeper than {MAX_DEPTH} levels, not expanded> " + \
            BytesField.show(self, pkt, v[:32])


class GodotOpaque(_GodotBase):
    """A Variant nested deeper than ``MAX_DEPTH``: its bytes, not expanded into packets."""

    name = "GodotOpaque"
    fields_desc = [ShownAtTop(DialectField(), lambda p: not p._sub), _OpaqueData("data", b"")]

    def __init__(self, _pkt: bytes = b"", *args: Any, dialect: Any = None, **kw: Any) -> None:
        self._init_slots(kw.pop("_depth", 0), kw.pop("_sub", False), kw.pop("_ctx", None))
        Packet.__init__(self, _pkt, *args, **kw)
        if dialect is not None:
            RAW_FIELDS.__get__(self)["dialect"] = get_dialect(dialect).name

    def do_dissect(self, s: bytes) -> bytes:
        RAW_FIELDS.__get__(self)["data"] = s
        object.__setattr__(self, "_span", len(s))
        return b""

    def to_value(self) -> Any:
        return decode_prefix(raw_fields(self).get("data", b""), dialect_name(self), allow_objects=True)[0]

    def mysummary(self) -> str:
        data = raw_fields(self).get("data", b"")
        d = dialect_name(self)
        return f"GodotOpaque {type_name(d, None, data[0]) if data else 'empty'}, {len(data)} bytes " \
               f"(deeper than {MAX_DEPTH} levels: not expanded)"


def make_child(parent: Packet, s: bytes, pos: int, end: int, d: str, depth: int,
               pre: Any = None) -> tuple[Packet, int]:
    """One nested Variant at ``s[pos:end]``: (packet, bytes it takes)."""
    if end - pos <= 0:
        raise Short
    r = pre if pre is not None else flows.read(s, d, pos, end, max_depth=max(ENGINE_DEPTH - depth, 0))
    used = r[1]
    if depth > MAX_DEPTH:
        n = used if 0 < used <= end - pos else end - pos
        child = GodotOpaque(s[pos:pos + n], dialect=d, _internal=1, _parent=parent, _sub=True)
        return child, n
    cls = class_for(d, s[pos])
    if 0 < used <= end - pos:
        child = cls(s[pos:pos + used], dialect=d, _depth=depth, _pre=r, _sub=True, _internal=1, _parent=parent)
        return child, used
    child = cls(s[pos:end], dialect=d, _depth=depth, _pre=r, _sub=True, _internal=1, _parent=parent)
    return child, child._span


def to_packet(x: Any, dialect: str) -> Packet:
    """A packet for a nested Variant given as a packet or as a Python value."""
    if isinstance(x, Packet):
        return x
    return GodotVariant.from_value(x, dialect)


class VariantField(GField):
    """One nested Variant (a Dictionary key or value, an Object property value, a PDU body)."""

    __slots__ = ["span_from"]
    holds_packets = 1

    def __init__(self, name: str, span_from: Callable[[Packet], int] | None = None) -> None:
        GField.__init__(self, name, None, "<B", rand_fn=_rand("variant"))
        self.span_from = span_from

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        end = len(s) if self.span_from is None else max(0, min(self.span_from(pkt), len(s)))
        if end == 0:
            raise Short
        pre = getattr(type(pkt), "_has_pre", False) and pkt._pre
        child, used = make_child(pkt, s, 0, end, dialect_name(pkt), pkt._depth + 1, pre or None)
        return s[used:], child

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        if val is MISSING or val is None:
            return s
        return s + bytes(resolve(val, pkt))

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        if x is None or x is MISSING or isinstance(x, Packet):
            return x
        return to_packet(x, dialect_name(pkt))

    def i2repr(self, pkt: Packet | None, x: Any) -> str:
        return "<missing>" if x is MISSING else repr(x)


class _ListField(GField):
    """A counted list of nested packets."""

    __slots__ = ["count_fn"]
    holds_packets = 1
    islist = 1

    def __init__(self, name: str, count_fn: Callable[[Packet], int], rand_fn: Callable[[], Any] | None = None) -> None:
        GField.__init__(self, name, [], "<B", rand_fn=rand_fn)
        self.count_fn = count_fn

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        val = resolve(val, pkt)
        if not isinstance(val, list):
            return s
        return s + b"".join(bytes(x) for x in val)

    def i2len(self, pkt: Packet, x: Any) -> int:
        return len(x)

    def i2count(self, pkt: Packet, x: Any) -> int:
        return len(x) if isinstance(x, list) else 0

    def i2repr(self, pkt: Packet | None, x: Any) -> str:
        return "<missing>" if x is MISSING else repr(x)

    def do_copy(self, x: Any) -> Any:
        return GField.do_copy(self, x)


class VariantListField(_ListField):
    """The elements of an Array."""

    __slots__ = []

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        n = self.count_fn(pkt)
        d, depth = dialect_name(pkt), pkt._depth + 1
        items: list[Packet] = []
        pos, end = 0, len(s)
        while len(items) < n and pos < end:
            child, used = make_child(pkt, s, pos, end, d, depth)
            items.append(child)
            pos += used
        return s[pos:], items

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        if isinstance(x, (list, tuple)):
            return [to_packet(v, dialect_name(pkt)) for v in x]
        return x


class GodotDictEntry(_GodotBase):
    """A key/value pair of a Dictionary."""

    name = "GodotDictEntry"
    fields_desc = [VariantField("key"), VariantField("value")]

    def to_value(self) -> tuple[Any, Any]:
        return self.key.to_value(), self.value.to_value()



class EntryListField(_ListField):
    """The key/value pairs of a Dictionary."""

    __slots__ = []

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        n = self.count_fn(pkt)
        d, depth = dialect_name(pkt), pkt._depth + 1
        items: list[Packet] = []
        pos, end = 0, len(s)
        while len(items) < n and pos < end:
            e = GodotDictEntry(_internal=1, _parent=pkt, _depth=pkt._depth)
            object.__setattr__(e, "_dn", d)
            raw = RAW_FIELDS.__get__(e)
            k, used = make_child(e, s, pos, end, d, depth)
            raw["key"] = k
            pos += used
            if pos < end:
                v, used = make_child(e, s, pos, end, d, depth)
                raw["value"] = v
                pos += used
            else:
                raw["value"] = MISSING
            items.append(e)
        return s[pos:], items

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        d = dialect_name(pkt)
        if isinstance(x, (dict, V.FrozenDict)):
            x = list(x.items())
        if isinstance(x, (list, tuple)):
            out = []
            for it in x:
                if isinstance(it, Packet):
                    out.append(it)
                else:
                    k, v = it
                    out.append(GodotDictEntry(key=to_packet(k, d), value=to_packet(v, d)))
            return out
        return x


class GodotStr(_GodotBase):
    """A string inside a Variant payload: u32 length, UTF-8 bytes, zero padding to 4."""

    name = "GodotStr"
    fields_desc = [
        NumField("length", AUTO, _LENGTH, auto_fn=length_of("value"), rand_fn=_rand("length")),
        TextField("value", b"", length_from=lambda p: plain(RAW_FIELDS.__get__(p).get("length")),
                  rand_fn=_rand("text")),
        PadField("padding", "value", rand_fn=_rand("padding")),
        _tail_field(),
    ]

    def mysummary(self) -> str:
        return f"GodotStr {self.value!r}"


def _str_span(s: bytes, pos: int) -> int:
    if len(s) - pos < 4:
        return len(s) - pos
    n = struct.unpack_from(_LENGTH, s, pos)[0]
    if n < 0:
        return len(s) - pos
    return min(4 + n + (-n & _PAD), len(s) - pos)


class StrListField(_ListField):
    """NodePath parts, PackedStringArray elements."""

    __slots__ = ["nul"]

    def __init__(self, name: str, count_fn: Callable[[Packet], int], nul: bool = False,
                 rand_fn: Callable[[], Any] | None = None) -> None:
        _ListField.__init__(self, name, count_fn, rand_fn)
        self.nul = nul  # the engine writes PackedStringArray elements with a trailing NUL

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        n = self.count_fn(pkt)
        items: list[Packet] = []
        pos, end = 0, len(s)
        while len(items) < n and pos < end:
            span = _str_span(s, pos)
            e = GodotStr(s[pos:pos + span], _internal=1, _parent=pkt, _sub=True)
            items.append(e)
            pos += max(e._span, 1)
        return s[pos:], items

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        if isinstance(x, (list, tuple)):
            return [it if isinstance(it, Packet) else GodotStr(value=_nul(it, self.nul)) for it in x]
        return x


def _nul(s: Any, nul: bool) -> bytes:
    b = s.encode("utf-8", "surrogatepass") if isinstance(s, str) else bytes(s)
    return b + b"\0" if nul and not b.endswith(b"\0") else b


class GodotProperty(_GodotBase):
    """A property of a full Object: name string, then a Variant."""

    name = "GodotProperty"
    fields_desc = [
        NumField("name_length", AUTO, _LENGTH, auto_fn=length_of("prop_name"), rand_fn=_rand("length")),
        TextField("prop_name", b"", length_from=lambda p: plain(RAW_FIELDS.__get__(p).get("name_length")),
                  rand_fn=_rand("text")),
        PadField("name_padding", "prop_name", rand_fn=_rand("padding")),
        VariantField("value"),
        _tail_field(),
    ]


class PropertyListField(_ListField):
    __slots__ = []

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        n = self.count_fn(pkt)
        items: list[Packet] = []
        pos, end = 0, len(s)
        d = dialect_name(pkt)
        while len(items) < n and pos < end:
            span = _str_span(s, pos)
            p = GodotProperty(_internal=1, _parent=pkt, _depth=pkt._depth)
            object.__setattr__(p, "_dn", d)
            rest = p.dissect_fields(s[pos:pos + span])  # the name; the value follows
            raw = RAW_FIELDS.__get__(p)
            pos += span - len(rest)
            if raw.get("value") is MISSING and pos < end:
                v, used = make_child(p, s, pos, end, d, pkt._depth + 1)
                raw["value"] = v
                raw.pop("tail", None)
                pos += used
            items.append(p)
        return s[pos:], items

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        d = dialect_name(pkt)
        if isinstance(x, dict):
            x = list(x.items())
        if isinstance(x, (list, tuple)):
            return [it if isinstance(it, Packet) else GodotProperty(prop_name=it[0], value=to_packet(it[1], d))
                    for it in x]
        return x


# -- payload fields per layout kind ----------------------------------------------------------------
def _count_field(name: str, of: str, count: L.Count, names: Callable[[Packet, int], str] | None = None) -> NumField:
    return NumField(name, AUTO, count_code(count), auto_fn=count_of(of), rand_fn=_rand("count"), names=names)


def _string_fields(length: str, value: str, padding: str,
                   cond: Callable[[Packet], bool] | None = None) -> list[Any]:
    fs: list[Any] = [
        NumField(length, AUTO, _LENGTH, auto_fn=length_of(value), rand_fn=_rand("length")),
        TextField(value, b"", length_from=lambda p: plain(RAW_FIELDS.__get__(p).get(length)), rand_fn=_rand("text")),
        PadField(padding, value, rand_fn=_rand("padding")),
    ]
    return [ConditionalField(f, cond) for f in fs] if cond else fs


def _kind_is(kind: str) -> Callable[[Packet], bool]:
    return lambda p: typedef_of(p).layout.kind == kind


def _flags(p: Packet) -> int:
    return plain(value_of(p, "flags"))


def _masked_count(p: Packet, name: str = "count", mask: int = L.Container.count.mask) -> int:
    return plain(RAW_FIELDS.__get__(p).get(name)) & mask


def _signed_count(name: str) -> Callable[[Packet], int]:
    return lambda p: max(plain(RAW_FIELDS.__get__(p).get(name)), 0)


def _fields_empty(key: str, layout: Any) -> list[Any]:
    return []


def _fields_bool(key: str, layout: Any) -> list[Any]:
    return [NumField("value", 0, "<" + L.Boolean.word.code, names=lambda p, v: "true" if v else "false",
                     rand_fn=_rand("bool"))]


def _fields_number(key: str, layout: L.Number) -> list[Any]:
    is_float = layout.is_float
    return [NumberValueField("value", 0.0 if is_float else 0, rand_fn=_rand("float" if is_float else "int"))]


def _fields_string(key: str, layout: Any) -> list[Any]:
    return _string_fields("length", "value", "padding")


def _fields_struct(key: str, layout: L.Struct) -> list[Any]:
    defaults = compile_flattener(layout.fields)(V.KEY_CLASSES[key]())
    kind = "float" if layout.component.is_float else "int"
    return [ComponentField(path.replace(".", "_"), dv, rand_fn=_rand(kind)) for path, dv in zip(layout.fields, defaults,
                                                                                                  strict=True)]


def _np_names(p: Packet, v: int) -> str:
    bit = L.NodePathLayout.new_format_bit
    return f"{v & ~bit} names, new format" if v & bit else "old Godot 2 format: rejected by every engine"


def _np_flag_names(p: Packet, v: int) -> str:
    lay = L.NodePathLayout
    parts = [n for b, n in ((lay.flag_absolute, "absolute"), (lay.flag_legacy_property, "legacy property")) if v & b]
    return ", ".join(parts)


def _np_subnames(p: Packet) -> int:
    """The subnames to read: the decoder's rule (``codec.kinds.node_path_counts``)."""
    return node_path_counts(0, plain(RAW_FIELDS.__get__(p).get("subname_count")), plain(value_of(p, "path_flags")))[1]


def _fields_node_path(key: str, layout: L.NodePathLayout) -> list[Any]:
    bit = layout.new_format_bit
    return [
        NumField("name_count", AUTO, count_code(layout.name_count), auto_fn=lambda p: count_of("names")(p) | bit,
                 rand_fn=_rand("count"),
                 names=_np_names),
        NumField("subname_count", AUTO, count_code(layout.subname_count), rand_fn=_rand("count"),
                 auto_fn=lambda p: max(count_of("subnames")(p) - (layout.legacy_extra_subnames if plain(
                     value_of(p, "path_flags")) & layout.flag_legacy_property else 0), 0)),
        NumField("path_flags", 0, "<" + layout.flags.code, names=_np_flag_names, rand_fn=_rand("np_flags")),
        StrListField("names", lambda p: _masked_count(p, "name_count", layout.name_count.mask), rand_fn=_rand("strs")),
        StrListField("subnames", _np_subnames, rand_fn=_rand("strs")),
    ]


def _fields_id64(key: str, layout: Any) -> list[Any]:
    return [NumField("id", 0, "<" + layout.word.code, rand_fn=_rand("u64"))]


def _as_id(p: Packet) -> bool:
    return bool(_flags(p) & _AS_ID)


def _full_with_class(p: Packet) -> bool:
    if _as_id(p):
        return False
    v = resolve(p.getfieldval("class_name"), p)
    return isinstance(v, (bytes, str)) and len(v) > 0


def _fields_object(key: str, layout: Any) -> list[Any]:
    return [
        ConditionalField(NumField("id", 0, "<" + L.ObjectLayout.id.code, rand_fn=_rand("u64")), _as_id),
        *_string_fields("class_length", "class_name", "class_padding", lambda p: not _as_id(p)),
        ConditionalField(_count_field("prop_count", "properties", L.ObjectLayout.property_count), _full_with_class),
        ConditionalField(PropertyListField("properties", _signed_count("prop_count"), rand_fn=_rand("properties")),
                         _full_with_class),
    ]


def _fields_signal(key: str, layout: Any) -> list[Any]:
    return [*_string_fields("name_length", "signal_name", "name_padding"),
            NumField("object_id", 0, "<" + L.SignalLayout.object_id.code, rand_fn=_rand("u64"))]


def _typed(hf: BitField, pairs: bool, kinds: tuple[str, ...]) -> Callable[[Packet], bool]:
    idx = {L.CONTAINER_KINDS.index(k) for k in kinds}

    def cond(p: Packet) -> bool:
        td = typedef_of(p)
        d = dialect_of(p)
        if hf not in td.header_fields or not (d.has_typed_dictionaries() if pairs else d.has_typed_arrays()):
            return False
        return hf.get(_flags(p) << 16) in idx
    return cond


def _builtin_note(p: Packet, v: int) -> str:
    d = dialect_of(p)
    return d.entries[v].name if v < len(d.entries) else f"not a type in {d.name}"


def _typed_fields(td: TypeDef) -> list[Any]:
    pairs = td.layout.pairs  # type: ignore[attr-defined]
    out: list[Any] = []
    for hf in td.header_fields:
        if hf.width != 2:
            continue
        p = hf.name.split()[0]  # "element", "key", "value"
        out.append(ConditionalField(NumField(f"{p}_type", 0, "<I", names=_builtin_note, rand_fn=_rand("type_id")),
                                    _typed(hf, pairs, ("builtin",))))
        out += _string_fields(f"{p}_class_length", f"{p}_class", f"{p}_class_padding",
                              _typed(hf, pairs, ("class_name", "script")))
    return out


def _fields_container(key: str, layout: L.Container, typedefs: Iterable[TypeDef]) -> list[Any]:
    typed = next((td for td in typedefs if any(hf.width == 2 for hf in td.header_fields)), None)
    out = _typed_fields(typed) if typed is not None else []
    mask = layout.count.mask
    out.append(_count_field("count", "items", layout.count, names=lambda p, v: f"bit 31 set: {v & mask}"
                            if v & ~mask else ""))
    lst = EntryListField if layout.pairs else VariantListField
    out.append(lst("items", lambda p: _masked_count(p), rand_fn=_rand("entries" if layout.pairs else "items")))
    return out


def _fields_packed_bytes(key: str, layout: Any) -> list[Any]:
    return [
        _count_field("count", "data", L.PackedBytes.data.count),
        BytesField("data", b"", length_from=lambda p: plain(RAW_FIELDS.__get__(p).get("count")),
                   rand_fn=_rand("bytes")),
        PadField("padding", "data", rand_fn=_rand("padding")),
    ]


def _fields_packed_strings(key: str, layout: Any) -> list[Any]:
    return [_count_field("count", "items", L.PackedStrings.count),
            StrListField("items", _signed_count("count"), nul=L.PackedStrings.element.nul, rand_fn=_rand("strs"))]


def _fields_packed(key: str, layout: L.Packed) -> list[Any]:
    return [_count_field("count", "items", L.Packed.count), PackedItemsField("items", "count", rand_fn=_rand("packed"))]


_KIND_FIELDS: dict[str, Callable[..., list[Any]]] = {
    "empty": _fields_empty, "bool": _fields_bool, "number": _fields_number, "string": _fields_string,
    "struct": _fields_struct, "node_path": _fields_node_path, "id64": _fields_id64, "object": _fields_object,
    "signal": _fields_signal, "packed_bytes": _fields_packed_bytes, "packed_strings": _fields_packed_strings,
    "packed": _fields_packed,
}


def _payload_fields(key: str, typedefs: list[TypeDef]) -> list[Any]:
    by_kind: dict[str, TypeDef] = {}
    for td in typedefs:
        by_kind.setdefault(td.layout.kind, td)
    out: list[Any] = []
    for kind, td in by_kind.items():
        fs = (_fields_container(key, td.layout, typedefs) if kind == "container"  # type: ignore[arg-type]
              else _KIND_FIELDS[kind](key, td.layout))
        if len(by_kind) > 1:  # the same type with another layout in another dialect (RID)
            fs = [ConditionalField(f, _kind_is(kind)) for f in fs]
        out += fs
    return out


# -- header flags computed from the payload ------------------------------------------------------
def auto_flags(p: Packet) -> int:
    key = type(p).key
    if key is None:
        return 0
    td = typedef_of(p)
    layout = td.layout
    kind = layout.kind
    if kind == "number":
        v = resolve(p.getfieldval("value"), p)
        if not isinstance(v, (int, float)):
            return 0
        if layout.narrow.code in "fd":  # type: ignore[attr-defined]
            return 0 if fits_f32(float(v)) else _FLAG64
        lo, hi = layout.narrow.int_range  # type: ignore[attr-defined]
        return 0 if lo <= int(v) <= hi else _FLAG64
    if kind in ("struct", "packed"):
        return _FLAG64 if layout.component is L.REAL and dialect_of(p).real_is_double else 0  # type: ignore[attr-defined]
    if kind == "object":
        raw = RAW_FIELDS.__get__(p)
        return 0 if ("class_name" in raw or "properties" in raw) else _AS_ID
    if kind == "container":
        d = dialect_of(p)
        ok = d.has_typed_dictionaries() if layout.pairs else d.has_typed_arrays()  # type: ignore[attr-defined]
        if not ok:
            return 0
        raw = RAW_FIELDS.__get__(p)
        flags = 0
        for hf in td.header_fields:
            if hf.width != 2:
                continue
            pre = hf.name.split()[0]
            k = 1 if f"{pre}_type" in raw else 2 if f"{pre}_class" in raw else 0
            flags |= k << (hf.shift - 16)
        return flags
    return 0


# -- generate one class per type key ------------------------------------------------------------
def _class_name(key: str) -> str:
    richest = max(DIALECTS.values(), key=lambda d: len(d.entries))
    e = richest.by_key(key)
    if e is None:
        e = next(d.by_key(key) for d in DIALECTS.values() if d.by_key(key) is not None)
    name = e.name  # type: ignore[union-attr]
    return "Godot" + name[0].upper() + name[1:]


def _generate() -> dict[str, type[GodotVariant]]:
    typedefs: dict[str, list[TypeDef]] = {}
    for d in DIALECTS.values():
        for e in d.entries:
            lst = typedefs.setdefault(e.key, [])
            if e.typedef not in lst:
                lst.append(e.typedef)
    out = {}
    for key, tds in typedefs.items():
        name = _class_name(key)
        fields = [*_header_fields(), *_payload_fields(key, tds), _tail_field()]
        cls = _PerType(name, (GodotVariant,), {
            "__module__": __name__, "__doc__": f"Godot {name[5:]} ({key}): {tds[0].layout.kind} layout.",
            "name": name, "key": key, "typedefs": tuple(tds), "fields_desc": fields, "__slots__": [],
        })
        _KEY_CLASS[key] = cls
        out[name] = cls
    return out


VARIANT_CLASSES = _generate()
