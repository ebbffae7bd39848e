"""Variant decoder: bytes -> Python value, compiled once per dialect from the spec.

Leaf types are read by small closures over precompiled ``struct.Struct`` objects. Arrays,
Dictionaries and full Objects are walked with an explicit stack, so nesting depth is limited only
by ``max_depth`` (never by Python's recursion limit), and no count is trusted before the bytes are
there: containers grow element by element as the elements are read.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from .. import values as V
from ..deep import deep_recursion
from ..errors import (
    ERR_OUT_OF_MEMORY,
    ERR_UNAUTHORIZED,
    DecodeError,
)
from ..spec import layouts as L
from ..spec.dialects import Dialect, per_dialect
from ..spec.kinds import count_code, kind_params
from ..spec.transports import MAX_DEPTH, MAX_KEYS_OF_ONE_HASH
from . import fast as _fast
from .kinds import KINDS, Fail, Reader, fits_f32, make_string_reader, need, to_f32
from .typed import object_type, settle_array, settle_dictionary

__all__ = ["CompiledDecoder", "compiled", "decode", "decode_prefix", "fits_f32", "to_f32"]

_U32 = struct.Struct("<I")  # the header word; a typed container's builtin type id
_OBJECT_ID = struct.Struct("<" + L.ObjectLayout.id.code)
_PROPERTY_COUNT = struct.Struct(count_code(L.ObjectLayout.property_count))
_CONTAINER_COUNT = struct.Struct(count_code(L.Container.count))
_CONTAINER_KINDS = L.CONTAINER_KINDS


class CompiledDecoder:
    """Per-dialect tables: ``leaf[type_id]`` reader (``codec/kinds.py``) or None for
    containers/objects, which the walker below opens."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.read_string = make_string_reader(dialect.utf8_strict)
        self.names = [e.name for e in dialect.entries]
        self.params = kind_params(dialect)
        self.kind = [p.kind for p in self.params]
        self.leaf: list[Reader | None] = [KINDS[p.kind].reader(p, self) for p in self.params]
        obj = dialect.by_key("OBJECT")
        self.object_name = obj.name if obj is not None else ""


#: the decoder tables of a dialect, made once
compiled = per_dialect(CompiledDecoder)


class _Frame:
    """One open Array, Dictionary or full Object while its elements are being read."""

    __slots__ = ("kind", "value", "left", "key", "key_start", "start", "index", "prop", "stored", "hashes", "nan")

    def __init__(self, kind: str, value: Any, left: int, start: int) -> None:
        self.kind = kind  # "array" | "dict" | "object"
        self.value = value
        self.left = left  # elements (pairs, properties) still to read
        self.key: Any = _NO_KEY  # dict: key read, value pending
        self.key_start = 0  # dict: where that key's Variant starts
        self.stored: dict | None = None  # dict: each key as stored, once a key came twice (_check_key)
        self.hashes: dict[int, int] | None = None  # dict: keys per hash, of keys whose hash a message chooses
        self.nan: float | None = None  # dict: its first NaN key
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
                raise Fail(pos, f"nesting deeper than {max_depth} levels", ERR_OUT_OF_MEMORY)
            if stack and stack[-1].kind == "object":
                f = stack[-1]
                f.prop, pos = rs(buf, pos, end, "property name")
            if end - pos < 4:
                raise Fail(pos, f"Variant header: needs 4 bytes, {max(end - pos, 0)} left")
            header = unpack_u32(buf, pos)[0]
            t = header & L.TYPE_MASK
            if t >= vmax:
                raise Fail(pos, f"type id {t} is not below {vmax} ({c.dialect.name})")
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
            vstart = start
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
                        f.key_start = vstart
                        if type(f.key) not in _SAFE_KEY_TYPES:
                            _count_hash(f)
                        elif f.key != f.key:  # NaN: all one key in the engine (hash_compare), and in
                            f.key = f.nan = f.nan if f.nan is not None else f.key  # Python: one object
                        break
                    d = f.value
                    n = len(d)
                    d[f.key] = value
                    if len(d) == n or f.stored is not None:
                        _check_key(f, len(d) == n)
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
                vstart = f.start
            else:
                return value, pos - offset
    except Fail as e:
        raise DecodeError(e.offset, e.reason, _path(stack), e.code) from None
    except (TypeError, UnicodeError) as e:  # e.g. an unhashable key inside a frozen key
        raise DecodeError(pos, f"cannot represent value: {e}", _path(stack)) from None


_SAFE_KEY_TYPES = V.SAFE_KEY_TYPES


def _count_hash(f: _Frame) -> None:
    """A key whose hash a message can choose: refused past MAX_KEYS_OF_ONE_HASH keys of one hash in its Dictionary,
    before Python's dict compares it with all of them."""
    if f.hashes is None:
        f.hashes = {}
    if V.hash_flooded(f.hashes, f.key, MAX_KEYS_OF_ONE_HASH):
        raise Fail(f.key_start, V.hash_flood_reason(MAX_KEYS_OF_ONE_HASH))


def _check_key(f: _Frame, repeated: bool) -> None:
    """After ``f.key`` went into the frame's dict: a key that came before is the engine's repeated key (its value
    replaces the first), unless Python merged two keys the engine keeps apart, which cannot be represented. A typed
    Dictionary's keys are converted to its key type first (settle_dictionary), as the engine does: merged alike."""
    if type(f.value) is V.TypedDictionary and f.value.key_type is not None:
        return
    if f.stored is None:  # the first repeated key of this Dictionary: each key as stored, once
        f.stored = {k: k for k in f.value}
    first = V.key_clash(f.stored, f.key, repeated)
    if first is not None:
        raise Fail(f.key_start, f"cannot represent value: {V.key_clash_reason(f.key, first)}")


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
        need(pos, end, _OBJECT_ID.size, "Object id")
        return V.ObjectID(_OBJECT_ID.unpack_from(buf, pos)[0]), pos + _OBJECT_ID.size, None
    if not allow_objects:
        raise Fail(start, "full Object while objects are not allowed", ERR_UNAUTHORIZED)
    cls_name, pos = rs(buf, pos, end, "Object class name")
    obj = V.Object(cls_name)
    if not cls_name:
        return obj, pos, None
    need(pos, end, _PROPERTY_COUNT.size, "Object property count")
    n = _PROPERTY_COUNT.unpack_from(buf, pos)[0]
    pos += _PROPERTY_COUNT.size
    if n <= 0:  # property_count: a negative count is an empty Object
        return obj, pos, None
    return obj, pos, _Frame("object", obj, n, start)


def _container_type(c: CompiledDecoder, buf: Any, pos: int, end: int, kind: int,
                    allow_objects: bool, what: str) -> tuple[V.ContainerType | None, int]:
    """One typed-container type as the engine sets it (``Array::set_typed``): builtin Nil is no type (Variant),
    a class name "" is the builtin Object."""
    name = _CONTAINER_KINDS[kind]
    if name == "builtin":
        need(pos, end, 4, f"{what} builtin type")
        t = _U32.unpack_from(buf, pos)[0]
        if t >= len(c.names):
            raise Fail(pos, f"{what} builtin type {t} is not below {len(c.names)}")
        return (V.ContainerType("builtin", c.names[t]) if t else None), pos + 4
    s, new_pos = c.read_string(buf, pos, end, f"{what} {name.replace('_', ' ')}")
    if name == "script" and allow_objects and not s.startswith("res://"):
        raise Fail(pos, f"{what} script path {s!r} does not start with res://")
    if name == "class_name" and not s:
        return V.ContainerType("builtin", c.object_name), new_pos
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
            value = {} if kt is None and vt is None else \
                V.TypedDictionary(object_type(kt, allow_objects), object_type(vt, allow_objects))
        else:
            value = {}
        what = "Dictionary"
    else:
        ek = L.ARRAY_ELEMENT_KIND.get(header) if typed_arrays else 0
        if ek:
            et, pos = _container_type(c, buf, pos, end, ek, allow_objects, "Array element")
            value = [] if et is None else V.TypedArray(object_type(et, allow_objects))
        else:
            value = []
        what = "Array"
    need(pos, end, _CONTAINER_COUNT.size, f"{what} count")
    n = _CONTAINER_COUNT.unpack_from(buf, pos)[0] & L.Container.count.mask
    pos += _CONTAINER_COUNT.size
    if n == 0:
        return value, pos, None
    return value, pos, _Frame("dict" if pairs else "array", value, n, start)


def decode(data: bytes | bytearray | memoryview, dialect: Dialect | str = "godot4", *,
           allow_objects: bool = False, max_depth: int = MAX_DEPTH) -> Any:
    """Decode one Variant from the start of ``data``; trailing bytes are ignored like the engine."""
    return decode_prefix(data, dialect, allow_objects=allow_objects, max_depth=max_depth)[0]


decode = _fast.front_door(decode)  # one C call for the common case (fast.front_door)
