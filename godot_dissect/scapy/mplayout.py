"""scapy fields generated from the multiplayer layouts of ``spec.multiplayer``.

Each layout item becomes a field, in order, like the Python decoder walks them:

* :class:`~godot_dissect.spec.multiplayer.Int` -> a fixed-width number (its bit ranges and value
  names shown next to it); sizes, counts, argument counts and the node target that points at an
  appended path are computed when building unless set;
* ``Choice`` -> a number whose width the command byte's flag says (the flag computed from the
  value when building);
* ``Text`` -> a C string (NUL-ended, fixed-size or read to the end of the packet);
* ``Blob`` -> bytes, a list of standard Variants (Godot 3 arguments), compressed Variants (Godot 4
  arguments and replication state), or the payload (a relayed packet);
* ``When`` -> a ``ConditionalField``; ``Repeat`` -> a list of small generated packets; a ``Switch``
  becomes one class per case (made by ``multiplayer.py``).

Bytes that do not follow the layout still dissect and build back unchanged: text whose bytes are
not what the engine would write is kept as :class:`Verbatim`, bytes a bounded region does not use
go to ``<name>_rest``, bytes after the layout to ``trailing``, and a field the data ends inside
leaves the rest in ``tail``.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable, Iterable
from typing import Any

from scapy.fields import ConditionalField
from scapy.packet import Packet
from scapy.volatile import RandBin, RandNum

from ..multiplayer.layout import holds
from ..spec import get_dialect
from ..spec import multiplayer as M
from .compressed import compressed_at, compressed_packet, packet_value
from .fields import (
    AUTO,
    MISSING,
    RAW_DEFAULTS,
    RAW_FIELDS,
    BytesField,
    CodedNumField,
    GField,
    NumField,
    Short,
    plain,
    resolve,
)
from .mpsettings import scapy_name
from .variant import _GodotBase, make_child, short_text, to_packet

#: the Int that counts a Blob of "variants" / "compressed_args" (BLOB_CONTENTS: "argc ... Variants")
ARGC = "argc"


class Verbatim(bytes):
    """Bytes kept exactly as they were on the wire, because what the engine would write for the
    value they hold differs (no NUL, bytes after the NUL, a short fixed field...)."""


# -- values ----------------------------------------------------------------------------------------
def field_value(pkt: Packet, name: str) -> Any:
    """A field's value as it will be built: random values fixed, AUTO/None computed."""
    fld = pkt.get_field(name)
    f = getattr(fld, "fld", fld)
    v = resolve(pkt.getfieldval(name), pkt)
    if v is AUTO or v is None:
        auto = getattr(f, "auto", None)
        return auto(pkt) if auto is not None else None
    return v


def lookup(pkt: Packet | None, name: str) -> Any:
    """The value a layout item refers to by name: a field, a bit range of an integer field, or a
    value of the enclosing packet (a repeated group sees its packet's values)."""
    layer = pkt
    while layer is not None:
        cls = type(layer)
        names = getattr(cls, "mp_names", None)
        if names is None:
            return None
        if name in names:
            return plain(field_value(layer, names[name]))
        ref = cls.mp_bits.get(name)
        if ref is not None:
            return ref[1].get(plain(field_value(layer, ref[0])))
        layer = layer.parent
    return None


class _Scope:
    """What ``multiplayer.layout.holds`` needs: ``get(name)``."""

    __slots__ = ("pkt",)

    def __init__(self, pkt: Packet) -> None:
        self.pkt = pkt

    def get(self, name: str, default: Any = None) -> Any:
        v = lookup(self.pkt, name)
        return default if v is None else v


def cond_of(conds: tuple[M.Cond, ...]) -> Callable[[Packet], bool]:
    return lambda p: holds(conds, _Scope(p))


def is_set(pkt: Packet, name: str) -> bool:
    """The field was given (crafted or dissected), not left to its default."""
    v = RAW_FIELDS.__get__(pkt).get(name, MISSING)
    return v is not MISSING and v is not None and v is not AUTO


def wire_length(pkt: Packet, name: str) -> int:
    """Bytes the field ``name`` builds to."""
    fld = pkt.get_field(name)
    f = getattr(fld, "fld", fld)
    v = resolve(pkt.getfieldval(name), pkt)
    if v is MISSING or v is None:
        return 0
    return len(f.addfield(pkt, b"", v))


# -- random values for fuzz() ----------------------------------------------------------------------
class _Pick(RandNum):
    """AUTO most of the time, else a random value (lengths, counts: mostly consistent packets)."""

    def __init__(self, bits: int, auto_share: float = 0.8) -> None:
        RandNum.__init__(self, 0, (1 << bits) - 1)
        self.auto_share = auto_share

    def _fix(self) -> Any:
        return AUTO if random.random() < self.auto_share else RandNum._fix(self)


def _rand_int(item: M.Int, auto: bool) -> Callable[[], Any]:
    bits = struct.calcsize(item.code) * 8
    if auto:
        return lambda: _Pick(bits)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if item.signed else (0, (1 << bits) - 1)
    if item.values:
        known = sorted(item.values)
        return lambda: RandNum(min(known), max(known)) if random.random() < 0.8 else RandNum(lo, hi)
    return lambda: RandNum(lo, hi)


def _rand_text() -> Any:
    return RandBin(random.choice((0, 1, 4, 9, 20)))


# -- numbers ---------------------------------------------------------------------------------------
def _int_notes(item: M.Int | M.Choice, code: str | None = None) -> Callable[[Packet, int], str]:
    values = getattr(item, "values", None) or {}
    bits = item.bits if isinstance(item, M.Int) else item.bits.get(code or "", ())

    def note(pkt: Packet, v: int) -> str:
        parts = []
        if v in values:
            parts.append(values[v])
        flags = [b for b in bits if b.width == 1 and b.get(v)]
        if flags:
            parts += [f"{b.name}={b.get(v)}" for b in bits]
        return ", ".join(parts)
    return note


class ChoiceNumField(CodedNumField, NumField):
    """An integer whose width an earlier value selects (``spec.multiplayer.Choice``)."""

    __slots__ = ["choice"]

    def __init__(self, choice: M.Choice, default: Any, auto_fn: Any = None, rand_fn: Any = None) -> None:
        self.choice = choice
        NumField.__init__(self, scapy_name(choice.name), default, "<I", auto_fn=auto_fn, rand_fn=rand_fn)

    def code(self, pkt: Packet) -> str | None:  # None: "Was not possible to extract the ... compression mode"
        return self.choice.codes.get(lookup(pkt, self.choice.selector))

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        if val is MISSING:
            return s
        code = self.code(pkt) or max(self.choice.codes.values(), key=struct.calcsize)
        wrapped = plain(self.value(pkt, val)) % (1 << 8 * struct.calcsize(code))
        return s + struct.pack(code[:-1] + code[-1].upper(), wrapped)

    def show(self, pkt: Packet | None, v: Any) -> str:
        if pkt is not None and isinstance(v, int):
            code = self.code(pkt)
            note = _int_notes(self.choice, code)(pkt, v)
            width = f"{struct.calcsize(code) * 8}-bit" if code else "no width"
            return f"{v} ({width}{', ' + note if note else ''})"
        return repr(v)


def narrowest_choice(choice: M.Choice, value: int) -> int:
    """The selector value of the narrowest width that holds ``value`` (as the engine picks)."""
    for sel, code in sorted(choice.codes.items(), key=lambda kv: struct.calcsize(kv[1])):
        if 0 <= value < 1 << (8 * struct.calcsize(code)):
            return sel
    return max(choice.codes, key=lambda k: struct.calcsize(choice.codes[k]))


# -- text ----------------------------------------------------------------------------------------
def _utf8(x: Any) -> Any:
    if isinstance(x, str):
        return x.encode("utf-8", "surrogatepass")
    if isinstance(x, (bytearray, memoryview)):
        return bytes(x)
    return x


def _shown_text(v: Any) -> Any:
    if isinstance(v, Verbatim):
        return v
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return v
    return v


class CStrField(GField):
    """``spec.multiplayer.Text``: UTF-8 text and its NUL; ``size`` bytes when fixed; ``to_end``: the
    rest of the packet (the engine stops at the first NUL)."""

    __slots__ = ["size", "to_end"]

    def __init__(self, item: M.Text) -> None:
        GField.__init__(self, scapy_name(item.name), b"", "<B", rand_fn=_rand_text)
        self.size = item.size
        self.to_end = item.to_end or item.at is not None

    def canonical(self, text: bytes) -> bytes:
        if self.size is not None:
            return text[:self.size - 1].ljust(self.size - 1, b"\0") + b"\0"
        return text + b"\0"

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        if self.size is not None:
            if len(s) < self.size:
                raise Short(Verbatim(s), len(s))
            raw, rest = s[:self.size], s[self.size:]
        elif self.to_end:
            raw, rest = s, b""
        else:
            nul = s.find(b"\0")
            if nul < 0:
                raise Short(Verbatim(s), len(s))
            raw, rest = s[:nul + 1], s[nul + 1:]
        text = raw.split(b"\0", 1)[0]
        return rest, text if self.canonical(text) == raw else Verbatim(raw)

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        if val is MISSING:
            return s
        v = self.value(pkt, val)
        if isinstance(v, Verbatim):
            return s + bytes(v)
        return s + self.canonical(_utf8(v) if v is not None else b"")

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        return _utf8(x)

    def i2h(self, pkt: Packet | None, x: Any) -> Any:
        return _shown_text(GField.i2h(self, pkt, x))

    def show(self, pkt: Packet | None, v: Any) -> str:
        if isinstance(v, Verbatim):
            text = bytes(v).split(b"\0", 1)[0].decode("utf-8", "replace")
            return f"{text!r} (as sent: {bytes(v)!r})"
        return repr(v)


class SizedTextField(CStrField):
    """A Blob of UTF-8 text whose size (NUL included) an earlier integer gives (the spawn name)."""

    __slots__ = ["size_name"]

    def __init__(self, item: M.Blob) -> None:
        GField.__init__(self, scapy_name(item.name), b"", "<B", rand_fn=_rand_text)
        self.size, self.to_end, self.size_name = None, False, item.size

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        n = max(0, min(plain(lookup(pkt, self.size_name or "")), len(s)))
        raw = s[:n]
        text = raw[:-1] if raw.endswith(b"\0") else raw
        return s[n:], text if self.canonical(text) == raw else Verbatim(raw)


# -- regions and blobs ---------------------------------------------------------------------------
def region_length(pkt: Packet, s: bytes, item: M.Blob) -> int:
    """Bytes of ``s`` the blob covers: its size, up to the offset an earlier value holds, or all."""
    n = len(s)
    if item.size is not None:
        return max(0, min(plain(lookup(pkt, item.size)), n))
    if item.end is not None and holds(item.end_when, _Scope(pkt)):
        here = pkt._wlen - n
        return max(0, min(plain(lookup(pkt, item.end)) - here, n))
    return n


class RestField(BytesField):
    """Bytes of a bounded region its items did not use (set by the field before it)."""

    __slots__ = []

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        return s, RAW_FIELDS.__get__(pkt).get(self.name, b"")


def rest_field(name: str) -> ConditionalField:
    return ConditionalField(RestField(name, b""), lambda p: bool(RAW_FIELDS.__get__(p).get(name)))


class BlobBytesField(BytesField):
    """Opaque bytes of a region (send_bytes data, auth data, byte-only RPC argument)."""

    __slots__ = ["item"]

    def __init__(self, name: str, item: M.Blob) -> None:
        BytesField.__init__(self, name, b"", rand_fn=lambda: RandBin(random.randint(0, 24)))
        self.item = item

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        n = region_length(pkt, s, self.item)
        return s[n:], s[:n]


class _PacketsField(GField):
    """A list of Variant packets read from a region; the region's unused bytes go to
    ``<name>_rest``."""

    __slots__ = ["item", "count_name", "single", "rest"]
    holds_packets = 1
    islist = 1

    def __init__(self, name: str, item: M.Blob, count_name: str | None = None, single: bool = False) -> None:
        self.item, self.count_name, self.single = item, count_name, single
        self.rest = name + "_rest"
        # () not []: scapy copies list defaults into every packet's fields, which would hide
        # fuzz()'s random arguments
        GField.__init__(self, name, None if single else (), "<B")

    def read_one(self, pkt: Packet, s: bytes, pos: int, end: int) -> tuple[Packet, int]:
        raise NotImplementedError

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        n = region_length(pkt, s, self.item)
        want = 1 if self.single else (plain(lookup(pkt, self.count_name)) if self.count_name else None)
        items: list[Packet] = []
        pos = 0
        while pos < n and (want is None or len(items) < want):
            p, used = self.read_one(pkt, s, pos, n)
            items.append(p)
            pos += max(used, 1)
        if pos < n:
            RAW_FIELDS.__get__(pkt)[self.rest] = s[pos:n]
        if self.single:
            if not items:
                raise Short
            return s[n:], items[0]
        return s[n:], items

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        val = resolve(val, pkt)
        if val is MISSING or val is None:
            return s
        if isinstance(val, Packet):
            return s + bytes(val)
        return s + b"".join(bytes(x) for x in val)

    def i2count(self, pkt: Packet, x: Any) -> int:
        return len(x) if isinstance(x, (list, tuple)) else 0

    def i2repr(self, pkt: Packet | None, x: Any) -> str:
        if x is MISSING:
            return "<missing>"
        if isinstance(x, (list, tuple)) and pkt is not None:
            return "[" + ", ".join(_arg_text(a) for a in x) + "]"
        return repr(x)

    def do_copy(self, x: Any) -> Any:
        if isinstance(x, (list, tuple)):
            return [e.copy() if isinstance(e, Packet) else e for e in x]
        return x.copy() if isinstance(x, Packet) else x


def _arg_text(p: Any) -> str:
    if not isinstance(p, Packet):
        return repr(p)
    from .variant import dialect_name

    v = packet_value(p)
    return "<malformed>" if v is MISSING else short_text(v, dialect_name(p))


class VariantsField(_PacketsField):
    """Standard Variants (Godot 3 arguments and property values)."""

    __slots__ = []

    def read_one(self, pkt: Packet, s: bytes, pos: int, end: int) -> tuple[Packet, int]:
        from .variant import dialect_name

        return make_child(pkt, s, pos, end, dialect_name(pkt), pkt._depth + 1)

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        from .variant import dialect_name

        d = dialect_name(pkt)
        if self.single:
            return x if x is None or x is MISSING else to_packet(x, d)
        if isinstance(x, (list, tuple)) and x != ():  # () is the default (see _PacketsField)
            return [to_packet(v, d) for v in x]
        return x

    def randval(self) -> Any:
        return random_values(self.single, compressed=False)


class CompressedField(_PacketsField):
    """Compressed Variants (Godot 4 arguments, spawn argument and state, sync state)."""

    __slots__ = []

    def read_one(self, pkt: Packet, s: bytes, pos: int, end: int) -> tuple[Packet, int]:
        from .variant import dialect_name

        return compressed_at(pkt, s, pos, end, dialect_name(pkt), pkt._depth + 1)

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        from .variant import dialect_name

        d = dialect_name(pkt)
        if self.single:
            return x if x is None or x is MISSING else compressed_packet(x, d)
        if isinstance(x, (list, tuple)) and x != ():  # () is the default (see _PacketsField)
            return [compressed_packet(v, d) for v in x]
        return x

    def randval(self) -> Any:
        return random_values(self.single, compressed=True)


def random_values(single: bool, compressed: bool) -> Any:
    """fuzz(): random Variants (fuzzed themselves), compact BOOL/INT forms too when compressed."""
    from .fuzzing import Deferred, random_variant
    from .variant import dialect_name

    def one(p: Packet) -> Packet:
        d = dialect_name(p)
        if compressed and random.random() < 0.4:
            return compressed_packet(random.choice((True, False, random.randint(-300, 300),
                                                    random.randint(-(1 << 63), (1 << 63) - 1))), d)
        return random_variant(d, p._depth + 1)

    def make(p: Packet) -> Any:
        return one(p) if single else [one(p) for _ in range(random.choice((0, 1, 1, 2, 3, 5)))]
    return Deferred(make, "Variants")


class SingleVariantField(VariantsField):
    __slots__ = []
    islist = 0


class SingleCompressedField(CompressedField):
    __slots__ = []
    islist = 0


# -- repeated groups -------------------------------------------------------------------------------
class RepeatField(GField):
    """``spec.multiplayer.Repeat``: generated group packets, ``count`` of them or while more than
    ``more_than`` bytes are left."""

    __slots__ = ["repeat", "cls"]
    holds_packets = 1
    islist = 1

    def __init__(self, repeat: M.Repeat, cls: type[Packet]) -> None:
        self.repeat, self.cls = repeat, cls
        GField.__init__(self, scapy_name(repeat.name), (), "<B")  # () for fuzz(), as _PacketsField

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        r = self.repeat
        want = plain(lookup(pkt, r.count)) if r.count is not None else None
        items: list[Packet] = []
        while s and (len(s) > r.more_than if want is None else len(items) < want):
            e = self.cls(_internal=1, _parent=pkt, _depth=pkt._depth, _sub=True)
            object.__setattr__(e, "_dn", pkt._dn)
            before = len(s)
            s = e.dissect_group(s)
            items.append(e)
            if len(s) >= before:
                break
        return s, items

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        val = resolve(val, pkt)
        if not isinstance(val, (list, tuple)):
            return s
        return s + b"".join(bytes(x) for x in val)

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        if not isinstance(x, (list, tuple)) or x == ():
            return x
        ints = [i for i in self.repeat.items if isinstance(i, M.Int)]
        out = []
        for it in x:
            if isinstance(it, Packet):
                out.append(it)
            elif isinstance(it, dict):
                out.append(self.cls(**{scapy_name(k): v for k, v in it.items()}))
            else:  # a bare value for a group of one integer
                out.append(self.cls(**{scapy_name(ints[0].name): it}))
        for e in out:
            e.parent = pkt
        return out

    def i2count(self, pkt: Packet, x: Any) -> int:
        return len(x) if isinstance(x, (list, tuple)) else 0

    def i2repr(self, pkt: Packet | None, x: Any) -> str:
        return "<missing>" if x is MISSING else repr(x)

    def do_copy(self, x: Any) -> Any:
        return [e.copy() for e in x] if isinstance(x, (list, tuple)) else x

    def randval(self) -> Any:
        from scapy.packet import fuzz

        from .fuzzing import Deferred

        cls = self.cls
        return Deferred(lambda p: [fuzz(cls()) for _ in range(random.choice((0, 1, 2, 3)))], "groups")


# -- the base of every generated layer -------------------------------------------------------------
class MPBase(_GodotBase):
    """A packet laid out by a ``spec.multiplayer`` item list (class attributes filled by
    :func:`layout_fields`)."""

    __slots__ = ["_wlen"]
    #: scapy field name by spec name, and spec bit name -> (field name, BitField)
    mp_names: dict[str, str] = {}
    mp_bits: dict[str, tuple[str, M.BitField]] = {}
    #: the at-offset computation in progress (guards the target's AUTO against itself)
    _offsets_busy: set[int] = set()

    default_dialect = "godot4"

    def __init__(self, _pkt: bytes = b"", *args: Any, dialect: Any = None, _depth: int = 0, _sub: bool = False,
                 _ctx: Any = None, **kw: Any) -> None:
        self._init_slots(_depth, _sub, _ctx)
        d = get_dialect(dialect if isinstance(dialect, str) else dialect.name).name if dialect is not None \
            else type(self).default_dialect
        object.__setattr__(self, "_dn", d)
        object.__setattr__(self, "_wlen", len(_pkt) if _pkt else 0)
        Packet.__init__(self, _pkt, *args, **kw)
        if dialect is not None:
            RAW_FIELDS.__get__(self)["dialect"] = d

    def do_dissect(self, s: bytes) -> bytes:
        object.__setattr__(self, "_wlen", len(s))
        if self._dn is None:
            object.__setattr__(self, "_dn", type(self).default_dialect)
        rest = _GodotBase.do_dissect(self, s)
        if rest and not self.payload_follows():
            RAW_FIELDS.__get__(self)["trailing"] = rest
            rest = b""
        self.autofy()
        return rest

    def dissect_group(self, s: bytes) -> bytes:
        """Dissect a repeated group's fields from ``s``; return what is left."""
        object.__setattr__(self, "_wlen", len(s))
        rest = self.dissect_fields(s)
        self.explicit = 1
        self.autofy()
        return rest

    def payload_follows(self) -> bool:
        return False

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes | None]:
        return (s, None) if self.payload_follows() else (b"", s)

    def autofy(self) -> None:
        """Drop dissected values that equal what would be computed, so that editing a dissected
        packet recomputes sizes, counts, flags and offsets."""
        raw = RAW_FIELDS.__get__(self)
        drop = []
        for f in self.fields_desc:
            fld = getattr(f, "fld", f)
            if f.name not in raw or fld.default not in (AUTO, None) or getattr(fld, "auto_fn", None) is None:
                continue
            v = raw[f.name]
            try:
                if v is not MISSING and v == fld.auto(self):
                    drop.append(f.name)
            except Exception:  # noqa: BLE001 - a malformed packet: keep what was read
                pass
        for n in drop:
            del raw[n]

    def copy(self) -> Any:
        clone = _GodotBase.copy(self)
        object.__setattr__(clone, "_wlen", self._wlen)
        return clone

    def values(self) -> dict[str, Any]:
        """The fields by spec name, as built (for tests and tools)."""
        return {spec: field_value(self, fname) for spec, fname in type(self).mp_names.items()
                if fname in RAW_FIELDS.__get__(self) or fname in RAW_DEFAULTS.__get__(self)}


def at_offset(pkt: Packet, text_field: str) -> int:
    """Where the text field ``text_field`` starts when ``pkt`` is built."""
    key = id(pkt)
    MPBase._offsets_busy.add(key)
    try:
        s: Any = b""
        for f in pkt.fields_desc:
            if f.name == text_field:
                break
            s = f.addfield(pkt, s, pkt.getfieldval(f.name))
        return len(s[0] if isinstance(s, tuple) else s)
    finally:
        MPBase._offsets_busy.discard(key)


# -- the generator -------------------------------------------------------------------------------
class ItemListPlan:
    """What the generator learnt about one item list: the spec's cross-reference index
    (``spec.multiplayer.index_of``) with each integer's scapy field name, and the argument list."""

    def __init__(self, items: tuple[M.FieldItem, ...], byte_bits: tuple[M.BitField, ...] = ()) -> None:
        self.items = items
        index = M.index_of(items)
        self.sizes, self.counts, self.choices, self.at_texts = index.sizes, index.counts, index.choices, index.at_texts
        self.args = next((it for it, _ in index.flat if isinstance(it, M.Blob) and it.content in
                          ("variants", "compressed_args")), None)
        self.argc_conds = next((c for it, c in index.flat if it.name == ARGC), ())
        self.bits: dict[str, tuple[str, M.BitField]] = {
            k: (scapy_name(it.name), b) for k, (it, b) in index.bits.items()}
        self.byte_bits = byte_bits


def _at_auto(lay: ItemListPlan, int_name: str) -> Callable[[Packet], int] | None:
    """AUTO for an integer holding the offset of an appended text: the flags the text's
    conditions need and the offset where the text lands, when the text is given; else 0."""
    for text, conds in lay.at_texts:
        ref = lay.bits.get(text.at or "")
        if ref is None or ref[0] != int_name:
            continue
        off_bits = ref[1]
        flags = [(lay.bits[c.name][1], c.operand) for c in conds if c.op == "==" and c.name in lay.bits
                 and lay.bits[c.name][0] == int_name]
        tname = scapy_name(text.name)

        def auto(p: Packet, off_bits: M.BitField = off_bits, flags: list = flags, tname: str = tname) -> int:
            if not is_set(p, tname):
                return 0
            v = sum(b.put(x) for b, x in flags)
            if id(p) in MPBase._offsets_busy:
                return v  # the width is all that matters while the offset is measured
            return v | off_bits.put(at_offset(p, tname))
        return auto
    return None


def int_auto(lay: ItemListPlan, item: M.Int | M.Choice) -> Callable[[Packet], int] | None:
    """How an integer is computed when not set: a size, a count, the argument count, an offset."""
    if item.name in lay.sizes:
        blob = scapy_name(lay.sizes[item.name].name)
        return lambda p: wire_length(p, blob)
    if item.name in lay.counts:
        rep = scapy_name(lay.counts[item.name].name)
        return lambda p: len(resolve(p.getfieldval(rep), p) or ())
    if item.name == ARGC and lay.args is not None:
        args = scapy_name(lay.args.name)
        return lambda p: len(resolve(p.getfieldval(args), p) or ())
    return _at_auto(lay, scapy_name(item.name))


def byte_auto(lay: ItemListPlan, bit: M.BitField) -> Callable[[Packet], int] | None:
    """How a flag of the command byte is computed: the width selector of a Choice (narrowest
    width for the value), or the flag that leaves out the argument count (no arguments)."""
    choice = lay.choices.get(bit.name)
    if choice is not None:
        fname = scapy_name(choice.name)
        return lambda p: narrowest_choice(choice, plain(field_value(p, fname)))
    for c in lay.argc_conds:
        if c.name == bit.name and c.op == "==" and lay.args is not None:
            return _args_flag(scapy_name(lay.args.name), c.operand)
    return None


def _args_flag(args: str, present: int) -> Callable[[Packet], int]:
    """The flag value that keeps the argument count (``present``) when there are arguments, else
    the other one (no argument, or the bytes of one PackedByteArray in ``<args>_bytes``)."""
    absent, raw = 1 - present, args + "_bytes"

    def auto(p: Packet) -> int:
        if is_set(p, raw):
            return absent
        return present if resolve(p.getfieldval(args), p) else absent
    return auto


def item_fields(lay: ItemListPlan, item: M.FieldItem, group_classes: dict[str, type[Packet]],
                make_group: Callable[[M.Repeat], type[Packet]]) -> list[Any]:
    """The scapy fields of one layout item (several for a blob with a rest, or an argument blob)."""
    if isinstance(item, M.When):
        cond = cond_of(item.conds)
        return [ConditionalField(f, cond) if not getattr(f, "isconditional", False)
                else ConditionalField(f.fld, _both(cond, f.cond)) for f in item_fields(lay, item.item, group_classes,
                                                                                       make_group)]
    if isinstance(item, M.Int):
        auto = int_auto(lay, item)
        return [NumField(scapy_name(item.name), AUTO if auto else 0, item.code, auto_fn=auto,
                         rand_fn=_rand_int(item, auto is not None), names=_int_notes(item))]
    if isinstance(item, M.Choice):
        auto = _at_auto(lay, scapy_name(item.name))
        return [ChoiceNumField(item, AUTO if auto else 0, auto_fn=auto,
                               rand_fn=lambda: RandNum(0, 0xFFFF) if random.random() < 0.9 else RandNum(0, 0xFFFFFFFF))]
    if isinstance(item, M.Text):
        return [CStrField(item)]
    if isinstance(item, M.Blob):
        return _blob_fields(lay, item)
    if isinstance(item, M.Repeat):
        cls = group_classes.get(item.name) or make_group(item)
        group_classes[item.name] = cls
        return [RepeatField(item, cls)]
    raise TypeError(f"{item!r} is not a field (a Switch makes classes)")


def _both(a: Callable[[Packet], bool], b: Callable[[Packet], bool]) -> Callable[[Packet], bool]:
    return lambda p: a(p) and b(p)


def _blob_fields(lay: ItemListPlan, item: M.Blob) -> list[Any]:
    name = scapy_name(item.name)
    c = item.content
    if c == "utf8":
        return [SizedTextField(item)]
    if c == "bytes":
        return [BlobBytesField(name, item)]
    if c in ("variants", "variant"):
        count = ARGC if c == "variants" else None
        cls = SingleVariantField if c == "variant" else VariantsField
        return [cls(name, item, count, single=c == "variant"), rest_field(name + "_rest")]
    if c in ("compressed_variant", "compressed_variants"):
        one = c == "compressed_variant"
        return [(SingleCompressedField if one else CompressedField)(name, item, None, single=one),
                rest_field(name + "_rest")]
    if c == "compressed_args":
        # argc compressed Variants when the count is there, else the bytes of one PackedByteArray
        with_count = cond_of(lay.argc_conds)
        return [ConditionalField(CompressedField(name, item, ARGC), with_count),
                rest_field(name + "_rest"),
                ConditionalField(BlobBytesField(name + "_bytes", item), lambda p: not with_count(p))]
    raise ValueError(f"no scapy field for blob content {c!r}")


def trailing_field() -> ConditionalField:
    """Bytes after the layout (the engine ignores or rejects them); present only when there are."""
    return ConditionalField(BytesField("trailing", b""), lambda p: bool(RAW_FIELDS.__get__(p).get("trailing")))


def names_of(items: Iterable[M.FieldItem], byte_bits: Iterable[M.BitField] = ()) -> dict[str, str]:
    out = {b.name: scapy_name(b.name) for b in byte_bits}
    for it, _ in M.index_of(tuple(items)).flat:
        if isinstance(it, (M.Int, M.Choice, M.Text, M.Blob, M.Repeat)):
            out[it.name] = scapy_name(it.name)
    return out
