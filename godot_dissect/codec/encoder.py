"""Variant encoder: Python value -> the bytes the engine writes, compiled per dialect.

Writers append to one ``bytearray``. Containers are walked with an explicit stack of iterators,
so a value nested a million levels deep encodes without recursion (the fuzzer needs that).
"""

from __future__ import annotations

import itertools
import struct
import sys
from typing import Any

from .. import values as V
from ..errors import EncodeError
from ..spec import layouts as L
from ..spec.conversions import OBJECT_AS_ID_CLASS
from ..spec.dialects import Dialect, per_dialect
from ..spec.kinds import count_code, kind_params
from ..spec.transports import MAX_DEPTH
from . import fast as _fast
from .kinds import KINDS, Writer, write_string

_U32 = struct.Struct("<I")  # the header word
_CONTAINER_COUNT = struct.Struct(count_code(L.Container.count))
_PROPERTY_COUNT = struct.Struct(count_code(L.ObjectLayout.property_count))
_HEADER_AND_ID = struct.Struct("<I" + L.ObjectLayout.id.code)  # an Object as its instance id


class _Raw(bytes):
    """Bytes the walker copies as they are (Object property names between values)."""


class CompiledEncoder:
    """Per-dialect writers by type key (``codec/kinds.py``); Array, Dictionary and Object are
    written by the walker below."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.writers: dict[str, Writer] = {}
        #: the types the walker opens, by type key: ("array" | "dict" | "object", type id), from their kinds
        self.opens: dict[str, tuple[str, int]] = {}
        for p in kind_params(dialect):
            w = KINDS[p.kind].writer(p)
            if w is not None:
                self.writers[p.key] = w
            elif p.kind == "container":
                self.opens[p.key] = ("dict" if p.layout.pairs else "array", p.type_id)  # type: ignore[attr-defined]
            elif p.kind == "object":
                self.opens[p.key] = ("object", p.type_id)


#: the writers of a dialect, made once
compiled = per_dialect(CompiledEncoder)


def _container_type(c: CompiledEncoder, t: V.ContainerType, full_objects: bool, out: bytearray) -> int:
    """Write one typed-container type; return its kind number."""
    kind, name = t.kind, t.name
    if kind in ("class_name", "script") and not full_objects:
        kind, name = "class_name", OBJECT_AS_ID_CLASS  # what the engine substitutes
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


#: depth_limit by dialect name (a name only gets here once compiled() knew it: as many as there are dialects)
_DEPTH_LIMITS: dict[str, int] = {}


def depth_limit(dialect: Dialect | str) -> int:
    """Nesting levels ``dialect``'s engine decodes: a container deeper than this must be empty. Godot 3.0-3.3.4
    have no limit of their own (and crash instead): they get the later versions' MAX_DEPTH."""
    if type(dialect) is str and (known := _DEPTH_LIMITS.get(dialect)) is not None:
        return known  # (once per encode: looking the dialect up again cost more than a small message's encoding)
    d = dialect if isinstance(dialect, Dialect) else compiled(dialect).dialect
    limit = d.engine_depth_limit or MAX_DEPTH
    if type(dialect) is str:
        _DEPTH_LIMITS[dialect] = limit
    return limit


def encode(value: Any, dialect: Dialect | str = "godot4", *, full_objects: bool = False,
           max_depth: int | None = -1) -> bytes:
    """Encode ``value`` as the engine of ``dialect`` does (NodePath padding zeroed).

    A value nesting containers with elements deeper than the engine decodes (``depth_limit``, Variant
    ``MAX_RECURSION_DEPTH``) is refused with an EncodeError: the engine would refuse its bytes. ``max_depth``
    sets another limit; None builds any depth (malformed input for tests and the fuzzer)."""
    limit = depth_limit(dialect) if max_depth == -1 else max_depth
    try:
        return _encode(value, dialect, full_objects, limit)
    except (struct.error, OverflowError) as e:  # a number that does not fit its wire field
        raise EncodeError(f"value does not fit its wire field: {e}") from None


def _too_deep(limit: int) -> EncodeError:
    return EncodeError(f"containers nested deeper than {limit} levels: the engine refuses to decode them "
                       f"(Variant MAX_RECURSION_DEPTH, spec.transports.MAX_DEPTH = {MAX_DEPTH})")


def _encode(value: Any, dialect: Dialect | str, full_objects: bool, limit: int | None) -> bytes:
    """The bytes; a container below ``limit`` levels of containers holding an element (what the decoder
    refuses: it reads no element deeper than that) is refused as it comes, by both walkers (a value holding
    itself is refused too, instead of written until memory runs out)."""
    fast = _fast.fast_encode_levels  # compiled hot path (None: not built); it returns None to hand over
    if fast is not None and (res := fast(value, dialect, -1 if limit is None else limit)) is not None:
        return res[0]
    deepest = sys.maxsize if limit is None else limit  # open levels below which no element may be
    c = compiled(dialect)
    writers, opens = c.writers, c.opens
    typed_arrays = c.dialect.has_typed_arrays()
    typed_dicts = c.dialect.has_typed_dictionaries()
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
            how, h = opens.get(key) or ("", 0)
            if len(stack) > deepest and (v.class_name and v.properties if how == "object" and tv is not V.ObjectID
                                         else how in ("array", "dict") and v):
                raise _too_deep(deepest)
            if how == "array":
                body = bytearray()
                if typed_arrays and (tv is V.TypedArray or tv is V.FrozenTypedArray):
                    h |= _container_type(c, v.element, full_objects, body) << L.ARRAY_ELEMENT_KIND.shift
                out += _U32.pack(h)
                out += body
                out += _CONTAINER_COUNT.pack(len(v))
                stack.append(iter(v))
                break
            if how == "dict":
                body = bytearray()
                if typed_dicts and tv is V.TypedDictionary:
                    if v.key_type is not None:
                        h |= _container_type(c, v.key_type, full_objects, body) << L.DICT_KEY_KIND.shift
                    if v.value_type is not None:
                        h |= _container_type(c, v.value_type, full_objects, body) << L.DICT_VALUE_KIND.shift
                out += _U32.pack(h)
                out += body
                out += _CONTAINER_COUNT.pack(len(v))
                stack.append(itertools.chain.from_iterable(v.items()))
                break
            if how == "object":
                if tv is V.ObjectID:
                    out += _HEADER_AND_ID.pack(h | L.FLAG_OBJECT_AS_ID.mask, v.id)
                    continue
                out += _U32.pack(h)
                write_string(out, v.class_name)
                if not v.class_name:
                    continue
                out += _PROPERTY_COUNT.pack(len(v.properties))
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
