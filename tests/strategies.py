"""hypothesis strategies for Godot values of every type a dialect has."""

from __future__ import annotations

import struct
from typing import Any

from hypothesis import strategies as st

from godot_dissect import values as V
from godot_dissect.spec import get_dialect

i32 = st.integers(-(2**31), 2**31 - 1)
i64 = st.integers(-(2**63), 2**63 - 1)
f64 = st.floats(allow_nan=True, allow_infinity=True)
f32 = st.floats(width=32, allow_nan=False).map(lambda x: struct.unpack("<f", struct.pack("<f", x))[0])
# Godot strings stop at NUL and Python cannot hold lone surrogates in UTF-8 round trips
text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)


def _v(cls: type, comp: st.SearchStrategy, n: int) -> st.SearchStrategy:
    return st.tuples(*[comp] * n).map(lambda t: cls(*t))


def leaves(dialect: str = "godot4") -> st.SearchStrategy[Any]:
    """Non-container values whose type exists in ``dialect`` (math types in float32)."""
    d = get_dialect(dialect)
    v2, v3, v4 = _v(V.Vector2, f32, 2), _v(V.Vector3, f32, 3), _v(V.Vector4, f32, 4)
    v2i, v3i = _v(V.Vector2i, i32, 2), _v(V.Vector3i, i32, 3)
    by_key: dict[str, st.SearchStrategy] = {
        "NIL": st.none(), "BOOL": st.booleans(),
        "INT": st.one_of(i64, i32.map(V.WideInt)),
        "FLOAT": st.one_of(f64, f32.map(V.Float64)),
        "STRING": text, "STRING_NAME": text.map(V.StringName),
        "VECTOR2": v2, "VECTOR2I": v2i, "VECTOR3": v3, "VECTOR3I": v3i, "VECTOR4": v4,
        "VECTOR4I": _v(V.Vector4i, i32, 4),
        "RECT2": st.tuples(v2, v2).map(lambda t: V.Rect2(*t)),
        "RECT2I": st.tuples(v2i, v2i).map(lambda t: V.Rect2i(*t)),
        "TRANSFORM2D": st.tuples(v2, v2, v2).map(lambda t: V.Transform2D(*t)),
        "PLANE": _v(V.Plane, f32, 4), "QUATERNION": _v(V.Quaternion, f32, 4),
        "AABB": st.tuples(v3, v3).map(lambda t: V.AABB(*t)),
        "BASIS": st.tuples(v3, v3, v3).map(lambda t: V.Basis(*t)),
        "TRANSFORM3D": st.tuples(v3, v3, v3, v3).map(lambda t: V.Transform3D(V.Basis(*t[:3]), t[3])),
        "PROJECTION": st.tuples(v4, v4, v4, v4).map(lambda t: V.Projection(*t)),
        "COLOR": _v(V.Color, f32, 4),
        "NODE_PATH": st.tuples(st.lists(text.filter(lambda s: s and "/" not in s and ":" not in s), max_size=3),
                               st.lists(text.filter(bool), max_size=2), st.booleans())
                       .map(lambda t: V.NodePath(t[0], t[1], t[2] and (bool(t[0] or t[1])
                                                                     or not d.empty_node_path_is_relative))),
        "RID": st.integers(0, 2**64 - 1).map(V.RID),
        "OBJECT": st.integers(0, 2**64 - 1).map(V.ObjectID),
        "CALLABLE": st.just(V.Callable()),
        "SIGNAL": st.tuples(text, st.integers(0, 2**64 - 1)).map(lambda t: V.Signal(*t)),
        "PACKED_BYTE_ARRAY": st.binary(max_size=9),
        "PACKED_INT32_ARRAY": st.lists(i32, max_size=5).map(V.PackedInt32Array),
        "PACKED_INT64_ARRAY": st.lists(i64, max_size=5).map(V.PackedInt64Array),
        "PACKED_FLOAT32_ARRAY": st.lists(f32, max_size=5).map(V.PackedFloat32Array),
        "PACKED_FLOAT64_ARRAY": st.lists(st.floats(allow_nan=False), max_size=5).map(V.PackedFloat64Array),
        "PACKED_STRING_ARRAY": st.lists(text, max_size=4).map(V.PackedStringArray),
        "PACKED_VECTOR2_ARRAY": st.lists(v2, max_size=3).map(V.PackedVector2Array),
        "PACKED_VECTOR3_ARRAY": st.lists(v3, max_size=3).map(V.PackedVector3Array),
        "PACKED_COLOR_ARRAY": st.lists(_v(V.Color, f32, 4), max_size=3).map(V.PackedColorArray),
        "PACKED_VECTOR4_ARRAY": st.lists(v4, max_size=3).map(V.PackedVector4Array),
    }
    if d.by_key("RID").typedef.layout.kind == "empty":  # type: ignore[union-attr]  # no payload: RID()
        by_key["RID"] = st.just(V.RID(0))
    return st.one_of(*[by_key[e.key] for e in d.entries if e.key in by_key])


def values(dialect: str = "godot4") -> st.SearchStrategy[Any]:
    """Any value of ``dialect``, containers included (typed ones where the dialect has them)."""
    d = get_dialect(dialect)
    keyable = st.one_of(st.booleans(), i32, text)

    def extend(children: st.SearchStrategy) -> st.SearchStrategy:
        options = [
            st.lists(children, max_size=4),
            st.dictionaries(keyable, children, max_size=4),
        ]
        if d.has_typed_arrays():
            options.append(st.lists(i64, max_size=4).map(
                lambda xs: V.TypedArray(V.ContainerType("builtin", "int"), xs)))
        if d.has_typed_dictionaries():
            options.append(st.dictionaries(text, st.floats(allow_nan=False), max_size=3).map(
                lambda m: V.TypedDictionary(V.ContainerType("builtin", "String"),
                                            V.ContainerType("builtin", "float"), m)))
        return st.one_of(*options)

    return st.recursive(leaves(dialect), extend, max_leaves=12)
