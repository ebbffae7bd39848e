"""Variant encoder: Python value -> the bytes the engine writes, compiled per dialect.

Writers append to one ``bytearray``. Containers are walked with an explicit stack of iterators,
so a value nested a million levels deep encodes without recursion (the fuzzer needs that).
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable
from typing import Any

from .. import values as V
from ..errors import EncodeError
from ..spec import layouts as L
from ..spec.dialects import Dialect, get_dialect
from . import fast as _fast
from .decoder import fits_f32
from .structs import compile_flattener

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_II = struct.Struct("<II")
_IQ = struct.Struct("<Iq")
_IUQ = struct.Struct("<IQ")
_If = struct.Struct("<If")
_Id = struct.Struct("<Id")
_FLAG64 = L.FLAG_64.mask
_PAD = (b"", b"\0\0\0", b"\0\0", b"\0")

Writer = Callable[[Any, bytearray], None]


def _utf8(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def write_string(out: bytearray, s: str) -> None:
    b = _utf8(s)
    n = len(b)
    out += _U32.pack(n)
    out += b
    out += _PAD[n & 3]


class _Raw(bytes):
    """Bytes the walker copies as they are (Object property names between values)."""


class CompiledEncoder:
    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.ids = {e.key: e.id for e in dialect.entries}
        self.writers: dict[str, Writer] = {}
        for e in dialect.entries:
            make = getattr(self, "_w_" + e.typedef.layout.kind, None)
            if make is not None:
                self.writers[e.key] = make(e.key, e.id, e.typedef.layout)

    def _w_empty(self, key: str, tid: int, layout: L.Layout) -> Writer:
        h = _U32.pack(tid)

        def write(v: Any, out: bytearray) -> None:
            out += h
        return write

    def _w_bool(self, key: str, tid: int, layout: L.Layout) -> Writer:
        t, f = _II.pack(tid, 1), _II.pack(tid, 0)

        def write(v: Any, out: bytearray) -> None:
            out += t if v else f
        return write

    def _w_number(self, key: str, tid: int, layout: L.Layout) -> Writer:
        wide = tid | _FLAG64
        if key == "INT":
            assert isinstance(layout, L.Number)
            lo, hi = layout.narrow.int_range
            wlo, whi = layout.wide.int_range

            def write_int(v: Any, out: bytearray) -> None:
                if lo <= v <= hi and type(v) is not V.WideInt:
                    out += _II.pack(tid, v & 0xFFFFFFFF)
                elif wlo <= v <= whi:
                    out += _IQ.pack(wide, v)
                else:
                    raise EncodeError(f"int {v} does not fit in 64 bits")
            return write_int

        def write_float(v: Any, out: bytearray) -> None:
            tv = type(v)
            if tv is V.Float32 or (tv is not V.Float64 and fits_f32(v)):
                out += _If.pack(tid, v)
            else:
                out += _Id.pack(wide, v)
        return write_float

    def _w_string(self, key: str, tid: int, layout: L.Layout) -> Writer:
        h = _U32.pack(tid)

        def write(v: Any, out: bytearray) -> None:
            out += h
            write_string(out, v)
        return write

    def _w_struct(self, key: str, tid: int, layout: L.Struct) -> Writer:  # type: ignore[override]
        flatten = compile_flattener(layout.fields)
        n = len(layout.fields)
        comp = layout.component
        if comp is L.REAL and self.dialect.real_is_double:
            s, h = struct.Struct(f"<I{n}d"), tid | _FLAG64
        else:
            s, h = struct.Struct(f"<I{n}{'i' if comp is L.I32 else 'f'}"), tid

        def write(v: Any, out: bytearray) -> None:
            try:
                out += s.pack(h, *flatten(v))
            except (struct.error, AttributeError) as e:
                raise EncodeError(f"cannot write {v!r} as {key}: {e}") from None
        return write

    def _w_node_path(self, key: str, tid: int, layout: L.NodePathLayout) -> Writer:  # type: ignore[override]
        h = _U32.pack(tid)

        def write(v: V.NodePath, out: bytearray) -> None:
            out += h
            out += struct.pack("<III", len(v.names) | layout.new_format_bit, len(v.subnames),
                               layout.flag_absolute if v.absolute else 0)
            for part in v.names + v.subnames:
                write_string(out, part)  # the engine leaves this padding uninitialised; we zero it
        return write

    def _w_id64(self, key: str, tid: int, layout: L.Layout) -> Writer:
        def write(v: V.RID, out: bytearray) -> None:
            out += _IUQ.pack(tid, v.id)
        return write

    def _w_signal(self, key: str, tid: int, layout: L.Layout) -> Writer:
        h = _U32.pack(tid)

        def write(v: V.Signal, out: bytearray) -> None:
            out += h
            write_string(out, v.name)
            out += struct.pack("<Q", v.object_id)
        return write

    def _w_packed_bytes(self, key: str, tid: int, layout: L.Layout) -> Writer:
        def write(v: Any, out: bytearray) -> None:
            n = len(v)
            out += _II.pack(tid, n)
            out += v
            out += _PAD[n & 3]
        return write

    def _w_packed_strings(self, key: str, tid: int, layout: L.Layout) -> Writer:
        def write(v: Any, out: bytearray) -> None:
            out += _II.pack(tid, len(v))
            for s in v:
                b = _utf8(s) + b"\0"  # the engine counts a NUL terminator in each element
                n = len(b)
                out += _U32.pack(n)
                out += b
                out += _PAD[n & 3]
        return write

    def _w_packed(self, key: str, tid: int, layout: L.Packed) -> Writer:  # type: ignore[override]
        comp = layout.component
        double = comp is L.REAL and self.dialect.real_is_double
        h = tid | _FLAG64 if double else tid
        code = "d" if double else comp.code
        pad = (layout.stride or comp.size * layout.width) - comp.size * layout.width
        cls = V.KEY_CLASSES[key]

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


_COMPILED: dict[str, CompiledEncoder] = {}


def compiled(dialect: Dialect | str) -> CompiledEncoder:
    d = get_dialect(dialect)
    c = _COMPILED.get(d.name)
    if c is None:
        c = _COMPILED[d.name] = CompiledEncoder(d)
    return c


def _container_type(c: CompiledEncoder, t: V.ContainerType, full_objects: bool, out: bytearray) -> int:
    """Write one typed-container type; return its kind number."""
    kind, name = t.kind, t.name
    if kind in ("class_name", "script") and not full_objects:
        kind, name = "class_name", "EncodedObjectAsID"  # what the engine substitutes
    k = L.CONTAINER_KINDS.index(kind)
    if kind == "builtin":
        entry = next((e for e in c.dialect.entries if e.name == name or e.key == name), None)
        if entry is None:
            raise EncodeError(f"typed container of unknown type {name!r} in {c.dialect.name}")
        if entry.key == "NIL":
            return 0
        out += _U32.pack(entry.id)
    else:
        write_string(out, name)
    return k


def encode(value: Any, dialect: Dialect | str = "godot4", *, full_objects: bool = False) -> bytes:
    """Encode ``value`` as the engine of ``dialect`` does (NodePath padding zeroed)."""
    try:
        return _encode(value, dialect, full_objects)
    except (struct.error, OverflowError) as e:  # a number that does not fit its wire field
        raise EncodeError(f"value does not fit its wire field: {e}") from None


def _encode(value: Any, dialect: Dialect | str, full_objects: bool) -> bytes:
    fast = _fast.fast_encode  # compiled hot path (None: not built); it returns None to hand over
    if fast is not None and (res := fast(value, dialect)) is not None:
        return res
    c = compiled(dialect)
    writers, ids = c.writers, c.ids
    typed_arrays = c.dialect.has_typed_arrays()
    typed_dicts = c.dialect.has_typed_dictionaries()
    arr_id, dict_id, obj_id = ids.get("ARRAY"), ids.get("DICTIONARY"), ids.get("OBJECT")
    classes = V.CLASS_KEYS
    out = bytearray()
    stack: list[Any] = [iter((value,))]
    while stack:
        for v in stack[-1]:
            tv = type(v)
            if tv is _Raw:
                out += v
                continue
            key = classes.get(tv) or _key_of(v)
            w = writers.get(key)
            if w is not None:
                w(v, out)
                continue
            if key == "ARRAY" and arr_id is not None:
                h = arr_id
                body = bytearray()
                if typed_arrays and tv is V.TypedArray:
                    h |= _container_type(c, v.element, full_objects, body) << L.ARRAY_ELEMENT_KIND.shift
                out += _U32.pack(h)
                out += body
                out += _U32.pack(len(v))
                stack.append(iter(v))
                break
            if key == "DICTIONARY" and dict_id is not None:
                h = dict_id
                body = bytearray()
                if typed_dicts and tv is V.TypedDictionary:
                    if v.key_type is not None:
                        h |= _container_type(c, v.key_type, full_objects, body) << L.DICT_KEY_KIND.shift
                    if v.value_type is not None:
                        h |= _container_type(c, v.value_type, full_objects, body) << L.DICT_VALUE_KIND.shift
                out += _U32.pack(h)
                out += body
                out += _U32.pack(len(v))
                stack.append(itertools.chain.from_iterable(v.items()))
                break
            if key == "OBJECT" and obj_id is not None:
                if tv is V.ObjectID:
                    out += _IUQ.pack(obj_id | L.FLAG_OBJECT_AS_ID.mask, v.id)
                    continue
                out += _U32.pack(obj_id)
                write_string(out, v.class_name)
                if not v.class_name:
                    continue
                out += _I32.pack(len(v.properties))
                parts: list[Any] = []
                for name, pv in v.properties.items():
                    nb = bytearray()
                    write_string(nb, name)
                    parts += (_Raw(nb), pv)
                stack.append(iter(parts))
                break
            raise EncodeError(f"{c.dialect.name} has no {key} type (value {v!r:.60})")
        else:
            stack.pop()
    return bytes(out)


def _key_of(v: Any) -> str:
    if isinstance(v, V.ResourceRef):
        raise EncodeError(f"{v.kind}({v.id!r}) is a text-scene resource reference; it has no binary form")
    try:
        return V.type_key(v)
    except TypeError as e:
        raise EncodeError(str(e)) from None
