"""The one Python walker of the layout kinds' parts (``spec/layouts.py``, ``spec/kinds.py``).

Each kind is one class here with three faces of the same walk over its parts:

* ``reader(p, ctx)``: a closure ``(buf, pos, end, header) -> (value, new_pos)`` for the pure decoder
  (None for Array, Dictionary and Object, which the decoder's stack opens);
* ``writer(p)``: a closure ``(value, out)`` appending header and payload for the encoder (None:
  the encoder's stack writes it);
* ``fields(w, pos, header, p, depth, start)``: the parts' offsets and roles for the fuzzer's field
  map (``fuzz/fields.py``), lenient: it stops quietly (``w`` raises) at the first inconsistency.

What a kind means in Python is written here only; the C codec (``_speedups.c``) and the Lua engine
are the other two implementations, fed from the same parameters.
"""

from __future__ import annotations

import functools
import math
import struct
from array import array
from collections.abc import Callable
from typing import Any, Protocol

from .. import values as V
from ..errors import ERR_FILE_EOF, ERR_INVALID_DATA, EncodeError
from ..spec import layouts as L
from ..spec.dialects import Dialect
from ..spec.kinds import WIDE_FLAG, KindParams
from .structs import compile_builder, compile_flattener
from .utf8 import decode_godot3, decode_strict

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
_II = struct.Struct("<II")
_IQ = struct.Struct("<Iq")
_IUQ = struct.Struct("<IQ")
_FLAG64 = WIDE_FLAG.mask
_PAD = (b"", b"\0\0\0", b"\0\0", b"\0")

#: part roles in the fuzzer's field map
HEADER = "header"  # u32 type id + flags
COUNT = "count"  # element / pair / property / name count (u32 or i32)
LENGTH = "length"  # u32 byte length of a string
TEXT = "text"  # the UTF-8 bytes of a string (size may be 0)
TYPED = "typed"  # u32 builtin type id of a typed container
DATA = "data"  # fixed-width payload words (numbers, math components, ids, flags)
BYTES = "bytes"  # packed array bodies


class Fail(Exception):
    """Raised by readers, turned into DecodeError with the value path attached by the decoder."""

    def __init__(self, offset: int, reason: str, code: int = ERR_INVALID_DATA) -> None:
        self.offset, self.reason, self.code = offset, reason, code


# A leaf reader: (buf, pos, end, header) -> (value, new_pos). pos is just after the header.
Reader = Callable[[Any, int, int, int], tuple[Any, int]]
Writer = Callable[[Any, bytearray], None]
StringReader = Callable[[Any, int, int, str], tuple[str, int]]


def need(pos: int, end: int, n: int, what: str) -> None:
    if end - pos < n:
        raise Fail(pos, f"{what}: needs {n} bytes, {max(end - pos, 0)} left")


def to_f32(v: float) -> float:
    """C's (float) cast: round to float32, overflowing to an infinity."""
    try:
        return _F32.unpack(_F32.pack(v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def fits_f32(v: float) -> bool:
    """True when float32 holds ``v`` exactly (the engine's test for writing a float narrow)."""
    try:
        return _F32.unpack(_F32.pack(v))[0] == v
    except OverflowError:
        return False


def make_string_reader(strict: bool, rule: L.Length = L.PADDED_STRING) -> StringReader:
    """A reader of one string as ``rule`` (``layouts.PADDED_STRING``) has it."""
    parse = decode_strict if strict else decode_godot3
    unpack = struct.Struct("<" + rule.count.scalar.code).unpack_from
    pad = rule.pad - 1

    def read_string(buf: Any, pos: int, end: int, what: str) -> tuple[str, int]:
        if end - pos < 4:
            raise Fail(pos, f"{what} length: needs 4 bytes, {max(end - pos, 0)} left")
        n = unpack(buf, pos)[0]
        start = pos + 4
        if n < 0:
            raise Fail(pos, f"{what} length {n} is negative", ERR_FILE_EOF)
        stop = start + n
        if stop + (-n & pad) > end:
            raise Fail(pos, f"{what} length {n} (+{-n & pad} padding) runs past the end "
                            f"({end - start} bytes left)", ERR_FILE_EOF)
        s = parse(bytes(buf[start:stop]))
        if s is None:
            raise Fail(start, f"{what} is not valid UTF-8")
        return s, stop + (-n & pad)

    return read_string


def _utf8(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def write_string(out: bytearray, s: str) -> None:
    """One string as ``layouts.PADDED_STRING``."""
    b = _utf8(s)
    n = len(b)
    out += _U32.pack(n)
    out += b
    out += _PAD[n & 3]


def value_class(name: str | None) -> Any:
    """The ``values`` class a part's wrapper names (None: no wrapper)."""
    return None if name is None else getattr(V, name)


class Context(Protocol):
    """What a kind's reader needs of the compiled decoder: the dialect and its string reader."""

    dialect: Dialect
    read_string: StringReader


class FieldSink(Protocol):
    """The fuzzer's field-map walker as a kind sees it (``fuzz/fields.py``)."""

    data: bytes
    n: int
    d: Dialect

    def add(self, off: int, size: int, role: str, depth: int, key: str | None, start: int) -> None: ...
    def u32(self, off: int) -> int: ...
    def string(self, pos: int, depth: int, key: str | None, start: int) -> int: ...
    def stop(self) -> Exception: ...


class CountWord:
    """A ``layouts.Count`` compiled: its ``size`` and ``read(buf, pos)``, the count the word holds
    (its scalar, signed or not, and its count bits)."""

    __slots__ = ("read", "size")

    def __init__(self, count: L.Count) -> None:
        word = struct.Struct("<" + count.scalar.code)
        unpack, mask = word.unpack_from, count.mask
        self.size = word.size
        if mask == (1 << 8 * word.size) - 1:
            self.read: Callable[[Any, int], int] = lambda buf, pos: unpack(buf, pos)[0]
        else:
            self.read = lambda buf, pos: unpack(buf, pos)[0] & mask


CONTAINER_COUNT = CountWord(L.Container.count)
PROPERTY_COUNT = CountWord(L.ObjectLayout.property_count)
PACKED_BYTES_COUNT = CountWord(L.PackedBytes.data.count)
PACKED_STRINGS_COUNT = CountWord(L.PackedStrings.count)
PACKED_COUNT = CountWord(L.Packed.count)


def node_path_counts(first: int, subs: int, flags: int) -> tuple[int, int]:
    """(names, subnames) from a NodePath's three words as the engine counts them
    (``layouts.NodePathLayout``): the first word's count bits; the second word's, plus
    ``legacy_extra_subnames`` with the legacy property flag (uint32 arithmetic: it can wrap)."""
    lay = L.NodePathLayout
    n_subs = subs & lay.subname_count.mask
    if flags & lay.flag_legacy_property:
        n_subs = (n_subs + lay.legacy_extra_subnames) & lay.subname_count.mask
    return first & lay.name_count.mask, n_subs


def count_part(w: FieldSink, pos: int, count: CountWord, p: KindParams, depth: int, start: int) -> tuple[int, int]:
    """A count word in the field map: (the count, 0 when cut off; the position after it)."""
    size = count.size
    n = count.read(w.data, pos) if pos + size <= w.n else 0
    w.add(pos, size, COUNT, depth, p.key, start)
    return n, pos + size


def string_parts(w: FieldSink, pos: int, n: int, p: KindParams, depth: int, start: int) -> int:
    """``n`` strings in the field map (at most as many as there are bytes left)."""
    for _ in range(max(n, 0)):
        if pos >= w.n:
            raise w.stop()
        pos = w.string(pos, depth, p.key, start)
    return pos


class Kind:
    """One layout kind's walk. Subclasses override what their parts need."""

    kind = "layout"

    def reader(self, p: KindParams, ctx: Context) -> Reader | None:
        return None

    def writer(self, p: KindParams) -> Writer | None:
        return None

    def fields(self, w: FieldSink, pos: int, header: int, p: KindParams, depth: int,
               start: int) -> tuple[int, list | None]:
        raise w.stop()


class EmptyKind(Kind):
    kind = "empty"

    def reader(self, p: KindParams, ctx: Context) -> Reader:
        cls = value_class(p.wrapper)
        const = None if cls is None else cls()
        return lambda buf, pos, end, header: (const, pos)

    def writer(self, p: KindParams) -> Writer:
        h = _U32.pack(p.type_id)

        def write(v: Any, out: bytearray) -> None:
            out += h
        return write

    def fields(self, w: FieldSink, pos: int, header: int, p: KindParams, depth: int,
               start: int) -> tuple[int, list | None]:
        return pos, None


class BoolKind(Kind):
    kind = "bool"

    def reader(self, p: KindParams, ctx: Context) -> Reader:
        size = L.Boolean.word.size
        unpack = struct.Struct("<" + L.Boolean.word.code).unpack_from

        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            if end - pos < size:
                raise Fail(pos, f"bool: needs {size} bytes, {max(end - pos, 0)} left")
            return unpack(buf, pos)[0] != 0, pos + size
        return read

    def writer(self, p: KindParams) -> Writer:
        t, f = _II.pack(p.type_id, 1), _II.pack(p.type_id, 0)

        def write(v: Any, out: bytearray) -> None:
            out += t if v else f
        return write

    def fields(self, w: FieldSink, pos: int, header: int, p: KindParams, depth: int,
               start: int) -> tuple[int, list | None]:
        w.add(pos, L.Boolean.word.size, DATA, depth, p.key, start)
        return pos + L.Boolean.word.size, None


class NumberKind(Kind):
    kind = "number"

    def reader(self, p: KindParams, ctx: Context) -> Reader:
        layout: L.Number = p.layout  # type: ignore[assignment]
        narrow, wide = struct.Struct("<" + p.narrow), struct.Struct("<" + p.wide)
        ns, ws = narrow.size, wide.size
        nname, wname = ("float32", "float64") if layout.is_float else ("int32", "int64")
        n_unpack, w_unpack = narrow.unpack_from, wide.unpack_from
        n_marker, w_marker = value_class(p.narrow_marker), value_class(p.wide_marker)
        if layout.is_float:
            def read_float(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
                if header & _FLAG64:
                    if end - pos < ws:
                        raise Fail(pos, f"{wname}: needs {ws} bytes, {max(end - pos, 0)} left")
                    v = w_unpack(buf, pos)[0]
                    return (w_marker(v) if fits_f32(v) else v), pos + ws
                if end - pos < ns:
                    raise Fail(pos, f"{nname}: needs {ns} bytes, {max(end - pos, 0)} left")
                v = n_unpack(buf, pos)[0]
                return (n_marker(v) if v != v else v), pos + ns
            return read_float
        lo, hi = layout.narrow.int_range

        def read_int(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            if header & _FLAG64:
                if end - pos < ws:
                    raise Fail(pos, f"{wname}: needs {ws} bytes, {max(end - pos, 0)} left")
                v = w_unpack(buf, pos)[0]
                return (w_marker(v) if lo <= v <= hi else v), pos + ws
            if end - pos < ns:
                raise Fail(pos, f"{nname}: needs {ns} bytes, {max(end - pos, 0)} left")
            return n_unpack(buf, pos)[0], pos + ns
        return read_int

    def writer(self, p: KindParams) -> Writer:
        layout: L.Number = p.layout  # type: ignore[assignment]
        tid = p.type_id
        narrow, wide = struct.Struct("<I" + p.narrow), struct.Struct("<I" + p.wide)
        wide_h = tid | _FLAG64
        n_marker, w_marker = value_class(p.narrow_marker), value_class(p.wide_marker)
        if layout.is_float:
            n_pack, w_pack = narrow.pack, wide.pack

            def write_float(v: Any, out: bytearray) -> None:
                tv = type(v)
                if tv is n_marker or (tv is not w_marker and fits_f32(v)):
                    out += n_pack(tid, v)
                else:
                    out += w_pack(wide_h, v)
            return write_float
        lo, hi = layout.narrow.int_range
        wlo, whi = layout.wide.int_range
        mask = (1 << 8 * layout.narrow.size) - 1
        u_pack, w_pack = struct.Struct("<I" + p.narrow.upper()).pack, wide.pack

        def write_int(v: Any, out: bytearray) -> None:
            if lo <= v <= hi and type(v) is not w_marker:
                out += u_pack(tid, v & mask)
            elif wlo <= v <= whi:
                out += w_pack(wide_h, v)
            else:
                raise EncodeError(f"int {v} does not fit in 64 bits")
        return write_int

    def fields(self, w: FieldSink, pos: int, header: int, p: KindParams, depth: int,
               start: int) -> tuple[int, list | None]:
        size = struct.calcsize("<" + (p.wide if header & _FLAG64 else p.narrow))
        w.add(pos, size, DATA, depth, p.key, start)
        return pos + size, None


class StringKind(Kind):
    kind = "string"

    def reader(self, p: KindParams, ctx: Context) -> Reader:
        rs = ctx.read_string
        wrap = value_class(p.wrapper)
        if wrap is None:
            return lambda buf, pos, end, header: rs(buf, pos, end, "String")
        what = p.wrapper

        def read_wrapped(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            s, pos = rs(buf, pos, end, what)  # type: ignore[arg-type]
            return wrap(s), pos
        return read_wrapped

    def writer(self, p: KindParams) -> Writer:
        h = _U32.pack(p.type_id)

        def write(v: Any, out: bytearray) -> None:
            out += h
            write_string(out, v)
        return write

    def fields(self, w: FieldSink, pos: int, header: int, p: KindParams, depth: int,
               start: int) -> tuple[int, list | None]:
        return w.string(pos, depth, p.key, start), None


class StructKind(Kind):
    kind = "struct"

    def reader(self, p: KindParams, ctx: Context) -> Reader:
        layout: L.Struct = p.layout  # type: ignore[assignment]
        build = compile_builder(V.KEY_CLASSES[p.key], layout.fields)
        n, name = p.n, p.name
        narrow = struct.Struct(f"<{n}{p.narrow}")
        wide = struct.Struct(f"<{n}{p.wide}") if p.wide else None
        ns, ws = narrow.size, (wide.size if wide else 0)
        single = p.round_wide  # real_t is float: 64-bit components are rounded

        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            if wide is not None and header & _FLAG64:
                if end - pos < ws:
                    raise Fail(pos, f"{name} (64-bit): needs {ws} bytes, {max(end - pos, 0)} left")
                vals = wide.unpack_from(buf, pos)
                return build(tuple(map(to_f32, vals)) if single else vals), pos + ws
            if end - pos < ns:
                raise Fail(pos, f"{name}: needs {ns} bytes, {max(end - pos, 0)} left")
            return build(narrow.unpack_from(buf, pos)), pos + ns
        return read

    def writer(self, p: KindParams) -> Writer:
        layout: L.Struct = p.layout  # type: ignore[assignment]
        flatten = compile_flattener(layout.fields)
        if p.write_wide:
            s, h = struct.Struct(f"<I{p.n}{p.wide}"), p.type_id | _FLAG64
        else:
            s, h = struct.Struct(f"<I{p.n}{p.narrow}"), p.type_id
        key = p.key

        def write(v: Any, out: bytearray) -> None:
            try:
                out += s.pack(h, *flatten(v))
            except (struct.error, AttributeError) as e:
                raise EncodeError(f"cannot write {v!r} as {key}: {e}") from None
        return write

    def fields(self, w: FieldSink, pos: int, header: int, p: KindParams, depth: int,
               start: int) -> tuple[int, list | None]:
        width = p.element_size(header) // p.n
        for _ in range(p.n):
            w.add(pos, width, DATA, depth, p.key, start)
            pos += width
        return pos, None


@functools.cache
def _node_path_words() -> struct.Struct:
    """The three words of ``layouts.NodePathLayout``: name count, subname count, flags."""
    lay = L.NodePathLayout
    return struct.Struct("<" + lay.name_count.scalar.code + lay.subname_count.scalar.code + lay.flags.code)


class NodePathKind(Kind):
    """``layouts.NodePathLayout``: name count word with the new-format bit, subname count word
    (plus ``legacy_extra_subnames`` with the legacy-property flag), flags word, then the parts."""

    kind = "node_path"

    def reader(self, p: KindParams, ctx: Context) -> Reader:
        lay = L.NodePathLayout
        rs = ctx.read_string
        new_bit, absolute = lay.new_format_bit, lay.flag_absolute
        empty_is_relative = ctx.dialect.empty_node_path_is_relative
        words = _node_path_words()
        first_word = struct.Struct("<" + lay.name_count.scalar.code)
        first_size, size = first_word.size, words.size

        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            need(pos, end, first_size, "NodePath")
            first = first_word.unpack_from(buf, pos)[0]
            if not first & new_bit:
                raise Fail(pos, "NodePath in the old (Godot 2) string format is rejected")
            need(pos, end, size, "NodePath header")
            _, subs, flags = words.unpack_from(buf, pos)
            n_names, n_subs = node_path_counts(first, subs, flags)
            pos += size
            parts = []
            # the engine adds the counts in uint32 (they can wrap); counts are not trusted: each
            # string needs >= 4 bytes, so the loop is bounded by the data
            for i in range((n_names + n_subs) & 0xFFFFFFFF):
                s, pos = rs(buf, pos, end, f"NodePath part {i}")
                parts.append(s)
            np = object.__new__(V.NodePath)
            object.__setattr__(np, "names", tuple(parts[:n_names]))
            object.__setattr__(np, "subnames", tuple(parts[n_names:]))
            object.__setattr__(np, "absolute", bool(flags & absolute) and (bool(parts) or not empty_is_relative))
            return np, pos
        return read

    def writer(self, p: KindParams) -> Writer:
        lay = L.NodePathLayout
        h = _U32.pack(p.type_id)
        words = _node_path_words()

        def write(v: V.NodePath, out: bytearray) -> None:
            out += h
            flags = lay.flag_absolute if v.absolute else 0
            out += words.pack(len(v.names) | lay.new_format_bit, len(v.subnames), flags)
            for part in v.names + v.subnames:
                write_string(out, part)  # the engine leaves this padding uninitialised; we zero it
        return write

    def fields(self, w: FieldSink, pos: int, header: int, p: KindParams, depth: int,
               start: int) -> tuple[int, list | None]:
        lay = L.NodePathLayout
        words = _node_path_words()
        first_size, subs_size = lay.name_count.scalar.size, lay.subname_count.scalar.size
        w.add(pos, first_size, COUNT, depth, p.key, start)
        first = w.u32(pos)
        if not first & lay.new_format_bit:
            raise w.stop()
        w.add(pos + first_size, subs_size, COUNT, depth, p.key, start)
        w.add(pos + first_size + subs_size, lay.flags.size, DATA, depth, p.key, start)
        n_names, n_subs = node_path_counts(*words.unpack_from(w.data, pos))
        return string_parts(w, pos + words.size, (n_names + n_subs) & 0xFFFFFFFF, p, depth, start), None


class Id64Kind(Kind):
    kind = "id64"

    def reader(self, p: KindParams, ctx: Context) -> Reader:
        wrap = value_class(p.wrapper)
        unpack = struct.Struct("<" + p.narrow).unpack_from
        what = p.wrapper or p.name

        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            need(pos, end, 8, what)
            return wrap(unpack(buf, pos)[0]), pos + 8
        return read

    def writer(self, p: KindParams) -> Writer:
        pack, tid = struct.Struct("<I" + p.narrow).pack, p.type_id

        def write(v: Any, out: bytearray) -> None:
            out += pack(tid, v.id)
        return write

    def fields(self, w: FieldSink, pos: int, header: int, p: KindParams, depth: int,
               start: int) -> tuple[int, list | None]:
        w.add(pos, 8, DATA, depth, p.key, start)
        return pos + 8, None


class SignalKind(Kind):
    kind = "signal"

    def reader(self, p: KindParams, ctx: Context) -> Reader:
        rs = ctx.read_string
        unpack = struct.Struct("<" + L.SignalLayout.object_id.code).unpack_from

        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            name, pos = rs(buf, pos, end, "Signal name")
            need(pos, end, 8, "Signal object id")
            return V.Signal(name, unpack(buf, pos)[0]), pos + 8
        return read

    def writer(self, p: KindParams) -> Writer:
        h = _U32.pack(p.type_id)
        pack = struct.Struct("<" + L.SignalLayout.object_id.code).pack

        def write(v: V.Signal, out: bytearray) -> None:
            out += h
            write_string(out, v.name)
            out += pack(v.object_id)
        return write

    def fields(self, w: FieldSink, pos: int, header: int, p: KindParams, depth: int,
               start: int) -> tuple[int, list | None]:
        pos = w.string(pos, depth, p.key, start)
        w.add(pos, 8, DATA, depth, p.key, start)
        return pos + 8, None


class ObjectKind(Kind):
    """Opened by the decoder's and encoder's stacks; only the field map walks it here."""

    kind = "object"

    def fields(self, w: FieldSink, pos: int, header: int, p: KindParams, depth: int,
               start: int) -> tuple[int, list | None]:
        if header & L.FLAG_OBJECT_AS_ID.mask:
            w.add(pos, 8, DATA, depth, p.key, start)
            return pos + 8, None
        n_before = w.u32(pos)
        pos = w.string(pos, depth, p.key, start)
        if n_before == 0:
            return pos, None
        n, pos = count_part(w, pos, PROPERTY_COUNT, p, depth, start)
        return pos, ([n, "object"] if n > 0 else None)


class ContainerKind(Kind):
    """Opened by the decoder's and encoder's stacks; only the field map walks it here."""

    kind = "container"

    def fields(self, w: FieldSink, pos: int, header: int, p: KindParams, depth: int,
               start: int) -> tuple[int, list | None]:
        layout: L.Container = p.layout  # type: ignore[assignment]
        for hf in p.typed:
            name = L.CONTAINER_KINDS[hf.get(header)]
            if name == "builtin":
                w.add(pos, 4, TYPED, depth, p.key, start)
                pos += 4
            elif name != "none":
                pos = w.string(pos, depth, p.key, start)
        size = CONTAINER_COUNT.size
        w.add(pos, size, COUNT, depth, p.key, start)
        n = CONTAINER_COUNT.read(w.data, pos)
        pos += size
        if n == 0:
            return pos, None
        return pos, [n * 2 if layout.pairs else n, "container"]


class PackedBytesKind(Kind):
    kind = "packed_bytes"

    def reader(self, p: KindParams, ctx: Context) -> Reader:
        rule = L.PackedBytes.data
        unpack = struct.Struct("<" + rule.count.scalar.code).unpack_from
        pad = rule.pad - 1

        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            need(pos, end, 4, "PackedByteArray count")
            n = unpack(buf, pos)[0]
            pos += 4
            if n < 0 or n > end - pos:
                raise Fail(pos - 4, f"PackedByteArray count {n} does not fit the {end - pos} bytes left")
            # the engine counts the padding as used even when it is missing at the very end
            return bytes(buf[pos:pos + n]), pos + n + (-n & pad)
        return read

    def writer(self, p: KindParams) -> Writer:
        tid = p.type_id

        def write(v: Any, out: bytearray) -> None:
            n = len(v)
            out += _II.pack(tid, n)
            out += v
            out += _PAD[n & 3]
        return write

    def fields(self, w: FieldSink, pos: int, header: int, p: KindParams, depth: int,
               start: int) -> tuple[int, list | None]:
        n, pos = count_part(w, pos, PACKED_BYTES_COUNT, p, depth, start)
        if n < 0 or pos + n > w.n:
            raise w.stop()
        w.add(pos, n, BYTES, depth, p.key, start)
        return pos + n + (-n & (L.PackedBytes.data.pad - 1)), None


class PackedStringsKind(Kind):
    kind = "packed_strings"

    def reader(self, p: KindParams, ctx: Context) -> Reader:
        rs = ctx.read_string
        unpack = struct.Struct("<" + L.PackedStrings.count.scalar.code).unpack_from

        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            need(pos, end, 4, "PackedStringArray count")
            n = unpack(buf, pos)[0]
            pos += 4
            out = []
            for i in range(n):  # negative n: empty, as in the engine; each string needs >= 4 bytes
                s, pos = rs(buf, pos, end, f"PackedStringArray[{i}]")
                out.append(s)
            return V.PackedStringArray(out), pos
        return read

    def writer(self, p: KindParams) -> Writer:
        tid = p.type_id
        end = b"\0" if L.PackedStrings.element.nul else b""  # the engine counts a NUL in each element
        u32, utf8, pad = _U32.pack, _utf8, _PAD

        def write(v: Any, out: bytearray) -> None:
            out += _II.pack(tid, len(v))
            for s in v:
                b = utf8(s) + end
                n = len(b)
                out += u32(n)
                out += b
                out += pad[n & 3]
        return write

    def fields(self, w: FieldSink, pos: int, header: int, p: KindParams, depth: int,
               start: int) -> tuple[int, list | None]:
        n, pos = count_part(w, pos, PACKED_STRINGS_COUNT, p, depth, start)
        return string_parts(w, pos, n, p, depth, start), None


class PackedKind(Kind):
    kind = "packed"

    def reader(self, p: KindParams, ctx: Context) -> Reader:
        cls = V.KEY_CLASSES[p.key]
        name, code = p.name, p.narrow
        csize = struct.calcsize(code)
        size = csize * p.n
        wide_size = 8 * p.n if p.wide else 0
        stride = p.stride
        from_bytes = cls.from_bytes
        single = p.round_wide
        unpack = struct.Struct("<" + L.Packed.count.scalar.code).unpack_from

        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            need(pos, end, 4, f"{name} count")
            n = unpack(buf, pos)[0]
            pos += 4
            esize, tc = (wide_size, "d") if wide_size and header & _FLAG64 else (stride, code)
            if n < 0 or n * esize > end - pos:
                raise Fail(pos - 4, f"{name} count {n} x {esize} bytes does not fit the {end - pos} bytes left")
            stop = pos + n * esize
            if tc == "d" and single:  # a single-precision build rounds
                obj = cls.__new__(cls)
                obj.array = array("f", map(to_f32, array("d", bytes(buf[pos:stop]))))
            elif esize != size and tc == code:  # padded stride (Godot 3 double builds)
                it = struct.iter_unpack(f"<{code}{esize - csize}x", bytes(buf[pos:stop]))
                obj = cls([v[0] for v in it])
            else:
                obj = from_bytes(buf[pos:stop], tc)
            return obj, stop
        return read

    def writer(self, p: KindParams) -> Writer:
        h = p.type_id | _FLAG64 if p.write_wide else p.type_id
        code = p.wide if p.write_wide else p.narrow
        pad = p.stride - struct.calcsize(p.narrow) * p.n
        cls = V.KEY_CLASSES[p.key]

        def write(v: Any, out: bytearray) -> None:
            if not isinstance(v, cls):
                v = cls(v)
            out += _II.pack(h, len(v))
            if pad:
                filler = b"\0" * pad
                out += b"".join(struct.pack("<" + code, x) + filler for x in v.array)
            else:
                out += v.to_bytes(code)
        return write

    def fields(self, w: FieldSink, pos: int, header: int, p: KindParams, depth: int,
               start: int) -> tuple[int, list | None]:
        n, pos = count_part(w, pos, PACKED_COUNT, p, depth, start)
        esize = p.element_size(header)
        if n < 0 or pos + n * esize > w.n:
            raise w.stop()
        w.add(pos, n * esize, BYTES, depth, p.key, start)
        return pos + n * esize, None


#: layout kind -> its walker
KINDS: dict[str, Kind] = {k.kind: k() for k in (
    EmptyKind, BoolKind, NumberKind, StringKind, StructKind, NodePathKind, Id64Kind, SignalKind, ObjectKind,
    ContainerKind, PackedBytesKind, PackedStringsKind, PackedKind)}
