"""Apply a typed container's element type to decoded elements, as the engine's assign() does."""

from __future__ import annotations

import contextlib
from typing import Any

from .. import values as V
from ..spec.conversions import OBJECT_AS_ID_CLASS, STRICT_CONVERSIONS
from ..spec.dialects import Dialect

_CONVERT = {
    "BOOL": bool,
    "INT": lambda v: int(v) if v == v and abs(v) != float("inf") else 0,
    "FLOAT": float,
    "STRING": str,
    "STRING_NAME": V.StringName,
    "NODE_PATH": V.NodePath.parse,
    "VECTOR2": lambda v: V.Vector2(*v), "VECTOR3": lambda v: V.Vector3(*v),
    "VECTOR4": lambda v: V.Vector4(*v),
    "VECTOR2I": lambda v: V.Vector2i(*map(int, v)), "VECTOR3I": lambda v: V.Vector3i(*map(int, v)),
    "VECTOR4I": lambda v: V.Vector4i(*map(int, v)),
    "RECT2": lambda v: V.Rect2(V.Vector2(*v.position), V.Vector2(*v.size)),
    "RECT2I": lambda v: V.Rect2i(V.Vector2i(*map(int, v.position)), V.Vector2i(*map(int, v.size))),
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
