"""One ordinary example value per type key: the seeds that mutations start from."""

from __future__ import annotations

from typing import Any

from .. import values as V

SAMPLES: dict[str, Any] = {
    "NIL": None,
    "BOOL": True,
    "INT": -7,
    "FLOAT": 0.5,
    "STRING": "hi\u00e9",
    "VECTOR2": V.Vector2(1.5, -2.0),
    "VECTOR2I": V.Vector2i(3, -4),
    "RECT2": V.Rect2(V.Vector2(1, 2), V.Vector2(3, 4)),
    "RECT2I": V.Rect2i(V.Vector2i(1, 2), V.Vector2i(3, 4)),
    "VECTOR3": V.Vector3(1, 2, 3),
    "VECTOR3I": V.Vector3i(1, 2, 3),
    "TRANSFORM2D": V.Transform2D(),
    "VECTOR4": V.Vector4(1, 2, 3, 4),
    "VECTOR4I": V.Vector4i(1, 2, 3, 4),
    "PLANE": V.Plane(0, 1, 0, 2),
    "QUATERNION": V.Quaternion(0, 0, 0, 1),
    "AABB": V.AABB(V.Vector3(1, 2, 3), V.Vector3(4, 5, 6)),
    "BASIS": V.Basis(),
    "TRANSFORM3D": V.Transform3D(),
    "PROJECTION": V.Projection(),
    "COLOR": V.Color(1, 0.5, 0.25, 1),
    "STRING_NAME": V.StringName("name"),
    "NODE_PATH": V.NodePath("/root/a:b"),
    "RID": V.RID(13),
    "OBJECT": V.ObjectID(1288),
    "CALLABLE": V.Callable(),
    "SIGNAL": V.Signal("hit", 5),
    "DICTIONARY": {"a": 1, "b": [2]},
    "ARRAY": [1, "x", 2.5],
    "PACKED_BYTE_ARRAY": b"\x01\x02\x03",
    "PACKED_INT32_ARRAY": V.PackedInt32Array([1, -2]),
    "PACKED_INT64_ARRAY": V.PackedInt64Array([1, -2]),
    "PACKED_FLOAT32_ARRAY": V.PackedFloat32Array([1.5]),
    "PACKED_FLOAT64_ARRAY": V.PackedFloat64Array([0.1]),
    "PACKED_STRING_ARRAY": V.PackedStringArray(["ab", "cde"]),
    "PACKED_VECTOR2_ARRAY": V.PackedVector2Array([(1, 2)]),
    "PACKED_VECTOR3_ARRAY": V.PackedVector3Array([(1, 2, 3)]),
    "PACKED_COLOR_ARRAY": V.PackedColorArray([(1, 0, 0, 1)]),
    "PACKED_VECTOR4_ARRAY": V.PackedVector4Array([(1, 2, 3, 4)]),
}
