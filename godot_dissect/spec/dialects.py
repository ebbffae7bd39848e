"""Dialects: which types exist, their ids, their engine names, and the rules that differ.

A dialect is what one family of engine builds writes and reads. There is no version marker in
the stream; the reader guesses the dialect per flow (``godot_dissect.detect``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field, replace
from typing import TypeVar

from . import types as T
from .row import row
from .transports import MAX_DEPTH
from .types import TypeDef


@row
class TypeEntry:
    id: int
    name: str  # what this dialect's engine calls it (var_to_str / typeof names)
    typedef: TypeDef
    since: str | None = None  # first engine version of the family that has it

    @property
    def key(self) -> str:
        return self.typedef.key


@row
class Dialect:
    name: str
    title: str
    family: int  # 3 or 4: text notation style and engine oracle
    entries: tuple[TypeEntry, ...]
    #: encoder writes REAL components as f64 with FLAG_64 (real_t=double builds)
    real_is_double: bool = False
    #: UTF-8 strictness: Godot 3 accepts surrogates and code points > U+10FFFF, Godot 4 does not
    utf8_strict: bool = True
    #: engine's own nesting limit (None: Godot 3.0-3.3.4 have none and crash instead)
    engine_depth_limit: int | None = MAX_DEPTH
    #: typed Array / typed Dictionary container info in the header (None: not in this dialect)
    typed_array_since: str | None = None
    typed_dictionary_since: str | None = None
    #: a NodePath with no names and no subnames loses its absolute flag (Godot 3's constructor
    #: returns early; Godot 4 keeps "/")
    empty_node_path_is_relative: bool = False
    #: a dialect that exists only on paper (the outdated docs table)
    doc_only: bool = False
    version: str | None = None  # set by at(): the engine version these rules were narrowed to
    aliases: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        assert all(e.id == i for i, e in enumerate(self.entries)), self.name

    @property
    def variant_max(self) -> int:
        return len(self.entries)

    def by_key(self, key: str) -> TypeEntry | None:
        return _index(self).get(key)

    def has_typed_arrays(self) -> bool:
        return self.typed_array_since is not None

    def has_typed_dictionaries(self) -> bool:
        return self.typed_dictionary_since is not None

    def at(self, version: str) -> Dialect:
        """The same dialect narrowed to one engine version: later types and features removed."""
        v = _ver(version)
        entries = tuple(e for e in self.entries if e.since is None or _ver(e.since) <= v)
        ta = self.typed_array_since if self.typed_array_since and _ver(self.typed_array_since) <= v else None
        td = self.typed_dictionary_since
        td = td if td and _ver(td) <= v else None
        return replace(self, entries=entries, typed_array_since=ta, typed_dictionary_since=td,
                       version=version, name=f"{self.name}@{version}", aliases=())


def _ver(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


_INDEX: dict[str, dict[str, TypeEntry]] = {}


def _index(d: Dialect) -> dict[str, TypeEntry]:
    idx = _INDEX.get(d.name)
    if idx is None:
        idx = _INDEX[d.name] = {e.key: e for e in d.entries}
    return idx


def _table(*rows: tuple) -> tuple[TypeEntry, ...]:
    return tuple(TypeEntry(i, *row) for i, row in enumerate(rows))


_GODOT3_ROWS = (
    ("Nil", T.NIL), ("bool", T.BOOL), ("int", T.INT), ("float", T.FLOAT), ("String", T.STRING),
    ("Vector2", T.VECTOR2_F32), ("Rect2", T.RECT2_F32), ("Vector3", T.VECTOR3_F32),
    ("Transform2D", T.TRANSFORM2D_F32), ("Plane", T.PLANE_F32), ("Quat", T.QUATERNION_F32),
    ("AABB", T.AABB_F32), ("Basis", T.BASIS_F32), ("Transform", T.TRANSFORM3D_F32),
    ("Color", T.COLOR), ("NodePath", T.NODE_PATH), ("RID", T.RID_EMPTY), ("Object", T.OBJECT),
    ("Dictionary", T.DICTIONARY_UNTYPED), ("Array", T.ARRAY_UNTYPED),
    ("PoolByteArray", T.PACKED_BYTE_ARRAY), ("PoolIntArray", T.POOL_INT_ARRAY),
    ("PoolRealArray", T.POOL_REAL_ARRAY), ("PoolStringArray", T.PACKED_STRING_ARRAY),
    ("PoolVector2Array", T.POOL_VECTOR2_ARRAY), ("PoolVector3Array", T.POOL_VECTOR3_ARRAY),
    ("PoolColorArray", T.PACKED_COLOR_ARRAY),
)

GODOT3 = Dialect(
    name="godot3",
    title="Godot 3.0-3.6 (and the Pandemonium fork), single-precision builds",
    family=3,
    entries=_table(*_GODOT3_ROWS),
    utf8_strict=False,
    engine_depth_limit=None,
    empty_node_path_is_relative=True,
    aliases=("3", "godot-3", "pandemonium"),
)

GODOT3_DOUBLE = replace(
    GODOT3,
    name="godot3-double",
    title="Godot 3.x real_t=double builds: math types still float32, PoolRealArray 8-byte stride",
    entries=_table(*(("PoolRealArray", T.POOL_REAL_ARRAY_DOUBLE) if n == "PoolRealArray" else (n, t)
                     for n, t in _GODOT3_ROWS)),
    aliases=(),
)

_GODOT4_ROWS = (
    ("Nil", T.NIL), ("bool", T.BOOL), ("int", T.INT), ("float", T.FLOAT), ("String", T.STRING),
    ("Vector2", T.VECTOR2), ("Vector2i", T.VECTOR2I), ("Rect2", T.RECT2), ("Rect2i", T.RECT2I),
    ("Vector3", T.VECTOR3), ("Vector3i", T.VECTOR3I), ("Transform2D", T.TRANSFORM2D),
    ("Vector4", T.VECTOR4), ("Vector4i", T.VECTOR4I), ("Plane", T.PLANE),
    ("Quaternion", T.QUATERNION), ("AABB", T.AABB), ("Basis", T.BASIS),
    ("Transform3D", T.TRANSFORM3D), ("Projection", T.PROJECTION), ("Color", T.COLOR),
    ("StringName", T.STRING_NAME), ("NodePath", T.NODE_PATH), ("RID", T.RID), ("Object", T.OBJECT),
    ("Callable", T.CALLABLE), ("Signal", T.SIGNAL), ("Dictionary", T.DICTIONARY), ("Array", T.ARRAY),
    ("PackedByteArray", T.PACKED_BYTE_ARRAY), ("PackedInt32Array", T.PACKED_INT32_ARRAY),
    ("PackedInt64Array", T.PACKED_INT64_ARRAY), ("PackedFloat32Array", T.PACKED_FLOAT32_ARRAY),
    ("PackedFloat64Array", T.PACKED_FLOAT64_ARRAY), ("PackedStringArray", T.PACKED_STRING_ARRAY),
    ("PackedVector2Array", T.PACKED_VECTOR2_ARRAY), ("PackedVector3Array", T.PACKED_VECTOR3_ARRAY),
    ("PackedColorArray", T.PACKED_COLOR_ARRAY), ("PackedVector4Array", T.PACKED_VECTOR4_ARRAY, "4.3"),
)

GODOT4 = Dialect(
    name="godot4",
    title="Godot 4.0-4.6, single-precision builds (the official ones)",
    family=4,
    entries=_table(*_GODOT4_ROWS),
    typed_array_since="4.3",
    typed_dictionary_since="4.4",
    aliases=("4", "godot-4"),
)

GODOT4_DOUBLE = replace(
    GODOT4,
    name="godot4-double",
    title="Godot 4.x real_t=double builds: math types as float64 with the 64-bit flag",
    real_is_double=True,
    aliases=(),
)

# The outdated Godot 4 docs page renamed the Godot 3 table and inserted two packed arrays.
GODOT4_DOC_TABLE = Dialect(
    name="godot4-doc-table",
    title="the 0-28 numbering printed in the outdated Godot 4 docs page: as documented, "
          "not what Godot 4 sends",
    family=4,
    entries=_table(
        ("Nil", T.NIL), ("bool", T.BOOL), ("int", T.INT), ("float", T.FLOAT), ("String", T.STRING),
        ("Vector2", T.VECTOR2), ("Rect2", T.RECT2), ("Vector3", T.VECTOR3),
        ("Transform2D", T.TRANSFORM2D), ("Plane", T.PLANE), ("Quaternion", T.QUATERNION),
        ("AABB", T.AABB), ("Basis", T.BASIS), ("Transform3D", T.TRANSFORM3D), ("Color", T.COLOR),
        ("NodePath", T.NODE_PATH), ("RID", T.RID_EMPTY), ("Object", T.OBJECT),
        ("Dictionary", T.DICTIONARY_UNTYPED), ("Array", T.ARRAY_UNTYPED),
        ("PackedByteArray", T.PACKED_BYTE_ARRAY), ("PackedInt32Array", T.PACKED_INT32_ARRAY),
        ("PackedInt64Array", T.PACKED_INT64_ARRAY), ("PackedFloat32Array", T.PACKED_FLOAT32_ARRAY),
        ("PackedFloat64Array", T.PACKED_FLOAT64_ARRAY), ("PackedStringArray", T.PACKED_STRING_ARRAY),
        ("PackedVector2Array", T.PACKED_VECTOR2_ARRAY), ("PackedVector3Array", T.PACKED_VECTOR3_ARRAY),
        ("PackedColorArray", T.PACKED_COLOR_ARRAY),
    ),
    doc_only=True,
    aliases=("doc-table",),
)

DIALECTS: dict[str, Dialect] = {
    d.name: d for d in (GODOT3, GODOT3_DOUBLE, GODOT4, GODOT4_DOUBLE, GODOT4_DOC_TABLE)
}
DIALECT_NAMES = tuple(DIALECTS)

_ALIASES = {a: d for d in DIALECTS.values() for a in d.aliases}
_NARROWED: dict[str, Dialect] = {}


def get_dialect(name: str | Dialect) -> Dialect:
    """Look a dialect up by name; ``"godot4@4.2"`` narrows it to one engine version."""
    if isinstance(name, Dialect):
        return name
    d = DIALECTS.get(name) or _ALIASES.get(name)
    if d is not None:
        return d
    base, _, version = name.partition("@")
    d = DIALECTS.get(base) or _ALIASES.get(base)
    if d is None or not version:
        raise ValueError(f"unknown dialect {name!r}; choose one of {', '.join(DIALECT_NAMES)}")
    key = f"{d.name}@{version}"
    if key not in _NARROWED:
        _NARROWED[key] = d.at(version)
    return _NARROWED[key]


_Built = TypeVar("_Built")


def per_dialect(build: Callable[[Dialect], _Built]) -> Callable[[Dialect | str], _Built]:
    """``build(dialect)`` made once per dialect (cached by name): compiled codecs and writers."""
    cache: dict[str, _Built] = {}

    def get(dialect: Dialect | str) -> _Built:
        d = get_dialect(dialect)
        got = cache.get(d.name)
        if got is None:
            got = cache[d.name] = build(d)
        return got
    return get
