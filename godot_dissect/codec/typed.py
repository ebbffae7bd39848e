"""Apply a typed container's element type to decoded elements, as the engine's assign() does."""

from __future__ import annotations

import contextlib
from typing import Any

from .. import values as V
from ..spec import types as T
from ..spec.conversions import OBJECT_AS_ID_CLASS, STRICT_CONVERSIONS
from ..spec.dialects import Dialect
from ..spec.layouts import Scalar


def _to_int(x: float, scalar: Scalar) -> int:
    """A float converted to an integer scalar as Godot 4.6 converts it (its engine, asked: toward zero,
    NaN 0, past the range the nearest end, e.g. inf -> 2147483647 in a Vector2i); never an exception."""
    lo, hi = scalar.int_range
    if x != x:
        return 0
    return hi if x >= hi else lo if x <= lo else int(x)


_INT = T.INT.layout.wide  # type: ignore[attr-defined]  # Variant's int is 64-bit


def _ints(v: Any, t: T.TypeDef) -> list[int]:
    """The float components of v as the integer components of type t (each type's own width, from its row)."""
    component = t.layout.component  # type: ignore[attr-defined]
    return [_to_int(x, component) for x in v]


_CONVERT = {
    "BOOL": bool,
    "INT": lambda v: _to_int(v, _INT) if isinstance(v, float) else int(v),
    "FLOAT": float,
    "STRING": str,
    "STRING_NAME": V.StringName,
    "NODE_PATH": V.NodePath.parse,
    "VECTOR2": lambda v: V.Vector2(*v), "VECTOR3": lambda v: V.Vector3(*v),
    "VECTOR4": lambda v: V.Vector4(*v),
    "VECTOR2I": lambda v: V.Vector2i(*_ints(v, T.VECTOR2I)), "VECTOR3I": lambda v: V.Vector3i(*_ints(v, T.VECTOR3I)),
    "VECTOR4I": lambda v: V.Vector4i(*_ints(v, T.VECTOR4I)),
    "RECT2": lambda v: V.Rect2(V.Vector2(*v.position), V.Vector2(*v.size)),
    "RECT2I": lambda v: V.Rect2i(V.Vector2i(*_ints(v.position, T.RECT2I)), V.Vector2i(*_ints(v.size, T.RECT2I))),
}


class _Mismatch(Exception):
    pass


def object_type(t: V.ContainerType | None, allow_objects: bool, object_name: str = "Object") -> V.ContainerType | None:
    """Without allow_objects every Object-typed container (class, script or builtin Object)
    becomes an EncodedObjectAsID container."""
    if t is not None and not allow_objects and (t.kind != "builtin" or t.name == object_name):
        return V.ContainerType("class_name", OBJECT_AS_ID_CLASS)
    return t


def _coerce(dialect: Dialect, t: V.ContainerType | None, v: Any) -> Any:
    if t is None:
        return v
    if t.kind != "builtin" or t.name == dialect.entries[dialect.by_key("OBJECT").id].name:  # type: ignore[union-attr]
        if v is None or isinstance(v, (V.ObjectID, V.Object)):
            return v
        raise _Mismatch
    entry = next(e for e in dialect.entries if e.name == t.name)
    key = V.type_key(v)
    if key == entry.key or entry.key == "NIL":
        return v
    if key in STRICT_CONVERSIONS.get(entry.key, ()):
        return _CONVERT[entry.key](v)
    raise _Mismatch


def settle_array(dialect: Dialect, arr: V.TypedArray) -> V.TypedArray:
    """Each element is pushed: kept, converted, or dropped (the engine prints an error)."""
    items = []
    for v in arr:
        with contextlib.suppress(_Mismatch):
            items.append(_coerce(dialect, arr.element, v))
    return V.TypedArray(arr.element, items)


def settle_dictionary(dialect: Dialect, d: V.TypedDictionary) -> V.TypedDictionary:
    """Keys are checked (kept, converted, or the entry dropped); Godot 4.6 leaves values as sent."""
    items = []
    for k, v in d.items():
        with contextlib.suppress(_Mismatch):
            items.append((V.freeze(_coerce(dialect, d.key_type, k)), v))
    return V.TypedDictionary(d.key_type, d.value_type, items)
