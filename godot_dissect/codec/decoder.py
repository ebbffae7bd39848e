"""Variant decoder: bytes -> Python value, compiled once per dialect from the spec.

Leaf types are read by small closures over precompiled ``struct.Struct`` objects. Arrays,
Dictionaries and full Objects are walked with an explicit stack, so nesting depth is limited only
by ``max_depth`` (never by Python's recursion limit), and no count is trusted before the bytes are
there: containers grow element by element as the elements are read.
"""

from __future__ import annotations

import math
import struct
from array import array
from collections.abc import Callable
from typing import Any

from .. import values as V
from ..deep import deep_recursion
from ..errors import (
    ERR_FILE_EOF,
    ERR_INVALID_DATA,
    ERR_OUT_OF_MEMORY,
    ERR_UNAUTHORIZED,
    DecodeError,
)
from ..spec import layouts as L
from ..spec.dialects import Dialect, get_dialect
from ..spec.transports import MAX_DEPTH
from . import fast as _fast
from .structs import compile_builder
from .typed import object_type, settle_array, settle_dictionary
from .utf8 import decode_godot3, decode_strict

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
_FLAG64 = L.FLAG_64.mask
_CONTAINER_KINDS = L.CONTAINER_KINDS


class _Fail(Exception):
    """Internal: raised by readers, turned into DecodeError with the value path attached."""

    def __init__(self, offset: int, reason: str, code: int = ERR_INVALID_DATA) -> None:
        self.offset, self.reason, self.code = offset, reason, code


# A leaf reader: (buf, pos, end, header) -> (value, new_pos). pos is just after the header.
Reader = Callable[[Any, int, int, int], tuple[Any, int]]


def _need(pos: int, end: int, n: int, what: str) -> None:
    if end - pos < n:
        raise _Fail(pos, f"{what}: needs {n} bytes, {max(end - pos, 0)} left")


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


def make_string_reader(strict: bool) -> Callable[[Any, int, int, str], tuple[str, int]]:
    parse = decode_strict if strict else decode_godot3

    def read_string(buf: Any, pos: int, end: int, what: str) -> tuple[str, int]:
        if end - pos < 4:
            raise _Fail(pos, f"{what} length: needs 4 bytes, {max(end - pos, 0)} left")
        n = _I32.unpack_from(buf, pos)[0]
        start = pos + 4
        if n < 0:
            raise _Fail(pos, f"{what} length {n} is negative", ERR_FILE_EOF)
        stop = start + n
        if stop + (-n & 3) > end:
            raise _Fail(pos, f"{what} length {n} (+{-n & 3} padding) runs past the end "
                             f"({end - start} bytes left)", ERR_FILE_EOF)
        s = parse(bytes(buf[start:stop]))
        if s is None:
            raise _Fail(start, f"{what} is not valid UTF-8")
        return s, stop + (-n & 3)

    return read_string


class CompiledDecoder:
    """Per-dialect tables: ``leaf[type_id]`` reader or None for containers/objects."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.read_string = make_string_reader(dialect.utf8_strict)
        self.names = [e.name for e in dialect.entries]
        self.leaf: list[Reader | None] = []
        self.kind: list[str] = []
        for e in dialect.entries:
            layout = e.typedef.layout
            self.kind.append(layout.kind)
            self.leaf.append(self._leaf_reader(e.key, layout))

    # -- leaf readers, one factory per layout kind ------------------------------------------
    def _leaf_reader(self, key: str, layout: L.Layout) -> Reader | None:
        return getattr(self, "_r_" + layout.kind)(key, layout)

    def _r_empty(self, key: str, layout: L.Layout) -> Reader:
        const = {"NIL": None, "CALLABLE": V.Callable(), "RID": V.RID(0)}[key]
        return lambda buf, pos, end, header: (const, pos)

    def _r_bool(self, key: str, layout: L.Layout) -> Reader:
        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            if end - pos < 4:
                raise _Fail(pos, f"bool: needs 4 bytes, {max(end - pos, 0)} left")
            return _U32.unpack_from(buf, pos)[0] != 0, pos + 4
        return read

    def _r_number(self, key: str, layout: L.Number) -> Reader:  # type: ignore[override]
        if key == "INT":
            lo, hi = layout.narrow.int_range

            def read_int(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
                if header & _FLAG64:
                    if end - pos < 8:
                        raise _Fail(pos, f"int64: needs 8 bytes, {max(end - pos, 0)} left")
                    v = _I64.unpack_from(buf, pos)[0]
                    return (V.WideInt(v) if lo <= v <= hi else v), pos + 8
                if end - pos < 4:
                    raise _Fail(pos, f"int32: needs 4 bytes, {max(end - pos, 0)} left")
                return _I32.unpack_from(buf, pos)[0], pos + 4
            return read_int

        def read_float(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            if header & _FLAG64:
                if end - pos < 8:
                    raise _Fail(pos, f"float64: needs 8 bytes, {max(end - pos, 0)} left")
                v = _F64.unpack_from(buf, pos)[0]
                return (V.Float64(v) if fits_f32(v) else v), pos + 8
            if end - pos < 4:
                raise _Fail(pos, f"float32: needs 4 bytes, {max(end - pos, 0)} left")
            v = _F32.unpack_from(buf, pos)[0]
            return (V.Float32(v) if v != v else v), pos + 4
        return read_float

    def _r_string(self, key: str, layout: L.Layout) -> Reader:
        rs = self.read_string
        if key == "STRING_NAME":
            def read_sn(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
                s, pos = rs(buf, pos, end, "StringName")
                return V.StringName(s), pos
            return read_sn
        return lambda buf, pos, end, header: rs(buf, pos, end, "String")

    def _r_struct(self, key: str, layout: L.Struct) -> Reader:  # type: ignore[override]
        build = compile_builder(V.KEY_CLASSES[key], layout.fields)
        n = len(layout.fields)
        name = self.names[self.dialect.by_key(key).id]  # type: ignore[union-attr]
        comp = layout.component
        narrow = struct.Struct(f"<{n}{'i' if comp is L.I32 else 'f'}")
        wide = struct.Struct(f"<{n}d") if comp is L.REAL else None
        ns, ws = narrow.size, (wide.size if wide else 0)

        single = not self.dialect.real_is_double  # real_t is float: 64-bit components are rounded

        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            if wide is not None and header & _FLAG64:
                if end - pos < ws:
                    raise _Fail(pos, f"{name} (64-bit): needs {ws} bytes, {max(end - pos, 0)} left")
                vals = wide.unpack_from(buf, pos)
                return build(tuple(map(to_f32, vals)) if single else vals), pos + ws
            if end - pos < ns:
                raise _Fail(pos, f"{name}: needs {ns} bytes, {max(end - pos, 0)} left")
            return build(narrow.unpack_from(buf, pos)), pos + ns
        return read

    def _r_node_path(self, key: str, layout: L.NodePathLayout) -> Reader:  # type: ignore[override]
        rs = self.read_string
        new_bit, absolute, legacy = layout.new_format_bit, layout.flag_absolute, layout.flag_legacy_property
        empty_is_relative = self.dialect.empty_node_path_is_relative

        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            _need(pos, end, 4, "NodePath")
            first = _U32.unpack_from(buf, pos)[0]
            if not first & new_bit:
                raise _Fail(pos, "NodePath in the old (Godot 2) string format is rejected")
            _need(pos, end, 12, "NodePath header")
            n_names = first & ~new_bit
            n_subs, flags = struct.unpack_from("<II", buf, pos + 4)
            if flags & legacy:
                n_subs = (n_subs + 1) & 0xFFFFFFFF
            pos += 12
            parts = []
            # the engine adds the counts in uint32 (they can wrap); counts are not trusted: each
            # string needs >= 4 bytes, so the loop is bounded by the data
            for i in range((n_names + n_subs) & 0xFFFFFFFF):
                s, pos = rs(buf, pos, end, f"NodePath part {i}")
                parts.append(s)
            p = object.__new__(V.NodePath)
            object.__setattr__(p, "names", tuple(parts[:n_names]))
            object.__setattr__(p, "subnames", tuple(parts[n_names:]))
            object.__setattr__(p, "absolute", bool(flags & absolute) and (bool(parts) or not empty_is_relative))
            return p, pos
        return read

    def _r_id64(self, key: str, layout: L.Layout) -> Reader:
        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            _need(pos, end, 8, "RID")
            return V.RID(_U64.unpack_from(buf, pos)[0]), pos + 8
        return read

    def _r_signal(self, key: str, layout: L.Layout) -> Reader:
        rs = self.read_string

        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            name, pos = rs(buf, pos, end, "Signal name")
            _need(pos, end, 8, "Signal object id")
            return V.Signal(name, _U64.unpack_from(buf, pos)[0]), pos + 8
        return read

    def _r_packed_bytes(self, key: str, layout: L.Layout) -> Reader:
        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            _need(pos, end, 4, "PackedByteArray count")
            n = _I32.unpack_from(buf, pos)[0]
            pos += 4
            if n < 0 or n > end - pos:
                raise _Fail(pos - 4, f"PackedByteArray count {n} does not fit the {end - pos} bytes left")
            # the engine counts the padding as used even when it is missing at the very end
            return bytes(buf[pos:pos + n]), pos + n + (-n & 3)
        return read

    def _r_packed_strings(self, key: str, layout: L.Layout) -> Reader:
        rs = self.read_string

        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            _need(pos, end, 4, "PackedStringArray count")
            n = _I32.unpack_from(buf, pos)[0]
            pos += 4
            out = []
            for i in range(n):  # negative n: empty, as in the engine; each string needs >= 4 bytes
                s, pos = rs(buf, pos, end, f"PackedStringArray[{i}]")
                out.append(s)
            return V.PackedStringArray(out), pos
        return read

    def _r_packed(self, key: str, layout: L.Packed) -> Reader:  # type: ignore[override]
        cls = V.KEY_CLASSES[key]
        name = self.names[self.dialect.by_key(key).id]  # type: ignore[union-attr]
        comp, width = layout.component, layout.width
        code = comp.code
        size = comp.size * width
        wide_size = 8 * width if comp is L.REAL else 0
        stride = layout.stride or size
        from_bytes = cls.from_bytes
        real_double = self.dialect.real_is_double

        def read(buf: Any, pos: int, end: int, header: int) -> tuple[Any, int]:
            _need(pos, end, 4, f"{name} count")
            n = _I32.unpack_from(buf, pos)[0]
            pos += 4
            esize, tc = (wide_size, "d") if wide_size and header & _FLAG64 else (stride, code)
            if n < 0 or n * esize > end - pos:
                raise _Fail(pos - 4, f"{name} count {n} x {esize} bytes does not fit the "
                                     f"{end - pos} bytes left")
            stop = pos + n * esize
            if tc == "d" and code == "f" and not real_double:  # a single-precision build rounds
                obj = cls.__new__(cls)
                obj.array = array("f", map(to_f32, array("d", bytes(buf[pos:stop]))))
            elif esize != size and tc == code:  # padded stride (Godot 3 double builds)
                it = struct.iter_unpack(f"<{code}{esize - comp.size}x", bytes(buf[pos:stop]))
                obj = cls([v[0] for v in it])
            else:
                obj = from_bytes(buf[pos:stop], tc)
            return obj, stop
        return read

    def _r_object(self, key: str, layout: L.Layout) -> None:
        return None  # handled by the walker: it may open a frame of properties

    def _r_container(self, key: str, layout: L.Layout) -> None:
        return None


_COMPILED: dict[str, CompiledDecoder] = {}


def compiled(dialect: Dialect | str) -> CompiledDecoder:
    d = get_dialect(dialect)
    c = _COMPILED.get(d.name)
    if c is None:
        c = _COMPILED[d.name] = CompiledDecoder(d)
    return c


class _Frame:
    """One open Array, Dictionary or full Object while its elements are being read."""

    __slots__ = ("kind", "value", "left", "key", "start", "index", "prop")

    def __init__(self, kind: str, value: Any, left: int, start: int) -> None:
        self.kind = kind  # "array" | "dict" | "object"
        self.value = value
        self.left = left  # elements (pairs, properties) still to read
        self.key: Any = _NO_KEY  # dict: key read, value pending
        self.start = start
        self.index = 0
        self.prop = ""


_NO_KEY = object()


def _path(stack: list[_Frame]) -> str:
    if len(stack) > 24:  # keep error messages short for absurdly deep input
        return _path(stack[:8]) + f"...({len(stack) - 16} levels)..." + _path(stack[-8:])
    out = []
    for f in stack:
        if f.kind == "array":
            out.append(f"[{f.index}]")
        elif f.kind == "dict":
            out.append(f"{{key #{f.index}}}" if f.key is _NO_KEY else f"[{f.key!r}]")
        else:
            out.append(f".{f.prop}" if f.prop else f"{{property #{f.index}}}")
    return "".join(out)


def decode_prefix(data: bytes | bytearray | memoryview, dialect: Dialect | str = "godot4", *,
                  allow_objects: bool = False, max_depth: int = MAX_DEPTH, offset: int = 0,
                  end: int | None = None) -> tuple[Any, int]:
    """Decode one Variant at ``offset``; return ``(value, bytes_used)``.

    ``bytes_used`` is what the engine reports as ``r_len`` (it can exceed the data for a
    PackedByteArray whose final padding is missing, as in the engine).
    """
    fast = _fast.fast_decode_prefix  # compiled hot path (None: not built); it returns None to hand over
    try:  # (free unless raised)
        if fast is not None and (res := fast(data, dialect, allow_objects, max_depth, offset, end)) is not None:
            return res
        return _decode_pure(data, dialect, allow_objects, max_depth, offset, end)
    except RecursionError:
        # equal Dictionary keys nested near the engine's depth limit: Python compares (and reprs)
        # them recursively, past its default recursion limit; again with room for that (rare)
        with deep_recursion():
            if fast is not None and (res := fast(data, dialect, allow_objects, max_depth, offset, end)) is not None:
                return res
            return _decode_pure(data, dialect, allow_objects, max_depth, offset, end)


def _decode_pure(data: bytes | bytearray | memoryview, dialect: Dialect | str, allow_objects: bool,
                 max_depth: int, offset: int, end: int | None) -> tuple[Any, int]:
    c = compiled(dialect)
    buf = data
    if isinstance(buf, memoryview) and buf.itemsize != 1:
        buf = buf.cast("B")
    size = len(buf)
    end = size if end is None else end
    if not 0 <= offset <= size or not offset <= end <= size:
        raise ValueError(f"offset {offset} / end {end} outside the {size}-byte buffer")
    leaf, kinds, vmax = c.leaf, c.kind, len(c.leaf)
    rs = c.read_string
    typed_arrays = c.dialect.has_typed_arrays()
    typed_dicts = c.dialect.has_typed_dictionaries()
    unpack_u32 = _U32.unpack_from
    stack: list[_Frame] = []
    pos = offset
    try:
        while True:
            # ---- read one Variant at pos ---------------------------------------------------
            if len(stack) > max_depth:
                raise _Fail(pos, f"nesting deeper than {max_depth} levels", ERR_OUT_OF_MEMORY)
            if stack and stack[-1].kind == "object":
                f = stack[-1]
                f.prop, pos = rs(buf, pos, end, "property name")
            if end - pos < 4:
                raise _Fail(pos, f"Variant header: needs 4 bytes, {max(end - pos, 0)} left")
            header = unpack_u32(buf, pos)[0]
            t = header & L.TYPE_MASK
            if t >= vmax:
                raise _Fail(pos, f"type id {t} is not below {vmax} ({c.dialect.name})")
            start = pos
            pos += 4
            reader = leaf[t]
            if reader is not None:
                value, pos = reader(buf, pos, end, header)
            else:
                kind = kinds[t]
                if kind == "object":
                    value, pos, frame = _open_object(buf, pos, end, header, allow_objects, rs, start)
                else:
                    value, pos, frame = _open_container(c, buf, pos, end, header, t, typed_arrays,
                                                        typed_dicts, allow_objects, start)
                if frame is not None:
                    stack.append(frame)
                    continue
            # ---- hand the value to the open containers ----------------------------------------
            while stack:
                f = stack[-1]
                if f.kind == "array":
                    f.value.append(value)
                    f.index += 1
                    f.left -= 1
                elif f.kind == "dict":
                    if f.key is _NO_KEY:
                        f.key = V.freeze(value) if isinstance(value, (list, dict)) else value
                        break
                    f.value[f.key] = value
                    f.key = _NO_KEY
                    f.index += 1
                    f.left -= 1
                else:
                    f.value.properties[f.prop] = value
                    f.prop = ""
                    f.index += 1
                    f.left -= 1
                if f.left > 0:
                    break
                stack.pop()
                value = _finish(f, c.dialect)
            else:
                return value, pos - offset
    except _Fail as e:
        raise DecodeError(e.offset, e.reason, _path(stack), e.code) from None
    except (TypeError, UnicodeError) as e:  # e.g. an unhashable key inside a frozen key
        raise DecodeError(pos, f"cannot represent value: {e}", _path(stack)) from None


def _finish(f: _Frame, dialect: Dialect) -> Any:
    v = f.value
    if type(v) is V.TypedArray:
        return settle_array(dialect, v)
    if type(v) is V.TypedDictionary:
        return settle_dictionary(dialect, v)
    return v


def _open_object(buf: Any, pos: int, end: int, header: int, allow_objects: bool,
                 rs: Callable, start: int) -> tuple[Any, int, _Frame | None]:
    if header & L.FLAG_OBJECT_AS_ID.mask:
        _need(pos, end, 8, "Object id")
        return V.ObjectID(_U64.unpack_from(buf, pos)[0]), pos + 8, None
    if not allow_objects:
        raise _Fail(start, "full Object while objects are not allowed", ERR_UNAUTHORIZED)
    cls_name, pos = rs(buf, pos, end, "Object class name")
    obj = V.Object(cls_name)
    if not cls_name:
        return obj, pos, None
    _need(pos, end, 4, "Object property count")
    n = _I32.unpack_from(buf, pos)[0]
    pos += 4
    if n <= 0:
        return obj, pos, None
    return obj, pos, _Frame("object", obj, n, start)


def _container_type(c: CompiledDecoder, buf: Any, pos: int, end: int, kind: int,
                    allow_objects: bool, what: str) -> tuple[V.ContainerType, int]:
    name = _CONTAINER_KINDS[kind]
    if name == "builtin":
        _need(pos, end, 4, f"{what} builtin type")
        t = _U32.unpack_from(buf, pos)[0]
        if t >= len(c.names):
            raise _Fail(pos, f"{what} builtin type {t} is not below {len(c.names)}")
        return V.ContainerType("builtin", c.names[t]), pos + 4
    s, new_pos = c.read_string(buf, pos, end, f"{what} {name.replace('_', ' ')}")
    if name == "script" and allow_objects and not s.startswith("res://"):
        raise _Fail(pos, f"{what} script path {s!r} does not start with res://")
    return V.ContainerType(name, s), new_pos


def _open_container(c: CompiledDecoder, buf: Any, pos: int, end: int, header: int, t: int,
                    typed_arrays: bool, typed_dicts: bool, allow_objects: bool,
                    start: int) -> tuple[Any, int, _Frame | None]:
    pairs = c.dialect.entries[t].typedef.layout.pairs  # type: ignore[attr-defined]
    value: Any
    if pairs:
        kk = L.DICT_KEY_KIND.get(header) if typed_dicts else 0
        vk = L.DICT_VALUE_KIND.get(header) if typed_dicts else 0
        if kk or vk:
            kt = vt = None
            if kk:
                kt, pos = _container_type(c, buf, pos, end, kk, allow_objects, "Dictionary key")
            if vk:
                vt, pos = _container_type(c, buf, pos, end, vk, allow_objects, "Dictionary value")
            value = V.TypedDictionary(object_type(kt, allow_objects), object_type(vt, allow_objects))
        else:
            value = {}
        what = "Dictionary"
    else:
        ek = L.ARRAY_ELEMENT_KIND.get(header) if typed_arrays else 0
        if ek:
            et, pos = _container_type(c, buf, pos, end, ek, allow_objects, "Array element")
            value = V.TypedArray(object_type(et, allow_objects))
        else:
            value = []
        what = "Array"
    _need(pos, end, 4, f"{what} count")
    n = _U32.unpack_from(buf, pos)[0] & L.Container.count_mask
    pos += 4
    if n == 0:
        return value, pos, None
    return value, pos, _Frame("dict" if pairs else "array", value, n, start)


def decode(data: bytes | bytearray | memoryview, dialect: Dialect | str = "godot4", *,
           allow_objects: bool = False, max_depth: int = MAX_DEPTH) -> Any:
    """Decode one Variant from the start of ``data``; trailing bytes are ignored like the engine."""
    return decode_prefix(data, dialect, allow_objects=allow_objects, max_depth=max_depth)[0]
