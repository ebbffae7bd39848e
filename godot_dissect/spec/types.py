"""Every Godot Variant type once: its payload layout and which header bits it uses.

Keys (``"VECTOR3"``) are dialect-independent; each dialect (``dialects.py``) lists which keys it
has, in id order, and what the engine calls them.
"""

from __future__ import annotations

from .layouts import (
    ARRAY_ELEMENT_KIND,
    DICT_KEY_KIND,
    DICT_VALUE_KIND,
    F32,
    F64,
    FLAG_64,
    FLAG_OBJECT_AS_ID,
    I32,
    I64,
    REAL,
    U32,
    Boolean,
    Container,
    Empty,
    Id64,
    Layout,
    NodePathLayout,
    Number,
    ObjectLayout,
    Packed,
    PackedBytes,
    PackedStrings,
    SignalLayout,
    StringLayout,
    Struct,
)
from .row import row
from .words import BitField


@row
class TypeDef:
    key: str
    layout: Layout
    header_fields: tuple[BitField, ...] = ()

    @property
    def uses_real(self) -> bool:
        """True for the "math" types whose components follow real_t (and FLAG_64 in Godot 4)."""
        comp = getattr(self.layout, "component", None)
        return comp is REAL


def _t(key: str, layout: Layout, *fields: BitField) -> TypeDef:
    return TypeDef(key, layout, tuple(fields))


_XY = ("x", "y")
_XYZ = ("x", "y", "z")
_XYZW = ("x", "y", "z", "w")
_RECT2 = ("position.x", "position.y", "size.x", "size.y")
_AABB = ("position.x", "position.y", "position.z", "size.x", "size.y", "size.z")
# Basis is written row by row; the axis vectors x, y, z are its columns.
_BASIS = ("x.x", "y.x", "z.x", "x.y", "y.y", "z.y", "x.z", "y.z", "z.z")
_TRANSFORM2D = ("x.x", "x.y", "y.x", "y.y", "origin.x", "origin.y")  # column by column
_TRANSFORM3D = tuple("basis." + f for f in _BASIS) + ("origin.x", "origin.y", "origin.z")
_PROJECTION = tuple(f"{c}.{r}" for c in "xyzw" for r in "xyzw")  # column-major

NIL = _t("NIL", Empty())
BOOL = _t("BOOL", Boolean())
INT = _t("INT", Number(I32, I64, wide_marker="WideInt"), FLAG_64)
FLOAT = _t("FLOAT", Number(F32, F64, narrow_marker="Float32", wide_marker="Float64"), FLAG_64)
STRING = _t("STRING", StringLayout())
VECTOR2 = _t("VECTOR2", Struct(REAL, _XY), FLAG_64)
VECTOR2I = _t("VECTOR2I", Struct(I32, _XY))
RECT2 = _t("RECT2", Struct(REAL, _RECT2), FLAG_64)
RECT2I = _t("RECT2I", Struct(I32, _RECT2))
VECTOR3 = _t("VECTOR3", Struct(REAL, _XYZ), FLAG_64)
VECTOR3I = _t("VECTOR3I", Struct(I32, _XYZ))
TRANSFORM2D = _t("TRANSFORM2D", Struct(REAL, _TRANSFORM2D), FLAG_64)
VECTOR4 = _t("VECTOR4", Struct(REAL, _XYZW), FLAG_64)
VECTOR4I = _t("VECTOR4I", Struct(I32, _XYZW))
PLANE = _t("PLANE", Struct(REAL, ("x", "y", "z", "d")), FLAG_64)
QUATERNION = _t("QUATERNION", Struct(REAL, _XYZW), FLAG_64)
AABB = _t("AABB", Struct(REAL, _AABB), FLAG_64)
BASIS = _t("BASIS", Struct(REAL, _BASIS), FLAG_64)
TRANSFORM3D = _t("TRANSFORM3D", Struct(REAL, _TRANSFORM3D), FLAG_64)
PROJECTION = _t("PROJECTION", Struct(REAL, _PROJECTION), FLAG_64)
COLOR = _t("COLOR", Struct(F32, ("r", "g", "b", "a")))  # always single precision
STRING_NAME = _t("STRING_NAME", StringLayout(wrapper="StringName"))
NODE_PATH = _t("NODE_PATH", NodePathLayout())
RID_EMPTY = _t("RID", Empty("RID"))  # Godot 3: header only (decodes to RID(0))
RID = _t("RID", Id64())  # Godot 4: u64 id
OBJECT = _t("OBJECT", ObjectLayout(), FLAG_OBJECT_AS_ID)
CALLABLE = _t("CALLABLE", Empty("Callable"))  # never carries its target on the wire
SIGNAL = _t("SIGNAL", SignalLayout())
DICTIONARY = _t("DICTIONARY", Container(pairs=True), DICT_KEY_KIND, DICT_VALUE_KIND)
ARRAY = _t("ARRAY", Container(pairs=False), ARRAY_ELEMENT_KIND)
DICTIONARY_UNTYPED = _t("DICTIONARY", Container(pairs=True))
ARRAY_UNTYPED = _t("ARRAY", Container(pairs=False))
PACKED_BYTE_ARRAY = _t("PACKED_BYTE_ARRAY", PackedBytes())
PACKED_INT32_ARRAY = _t("PACKED_INT32_ARRAY", Packed(I32))
PACKED_INT64_ARRAY = _t("PACKED_INT64_ARRAY", Packed(I64))
PACKED_FLOAT32_ARRAY = _t("PACKED_FLOAT32_ARRAY", Packed(F32))
PACKED_FLOAT64_ARRAY = _t("PACKED_FLOAT64_ARRAY", Packed(F64))
PACKED_STRING_ARRAY = _t("PACKED_STRING_ARRAY", PackedStrings())
PACKED_VECTOR2_ARRAY = _t("PACKED_VECTOR2_ARRAY", Packed(REAL, 2, "VECTOR2"), FLAG_64)
PACKED_VECTOR3_ARRAY = _t("PACKED_VECTOR3_ARRAY", Packed(REAL, 3, "VECTOR3"), FLAG_64)
PACKED_COLOR_ARRAY = _t("PACKED_COLOR_ARRAY", Packed(F32, 4, "COLOR"))
PACKED_VECTOR4_ARRAY = _t("PACKED_VECTOR4_ARRAY", Packed(REAL, 4, "VECTOR4"), FLAG_64)
# Godot 3 (any build): math types and Pool*Arrays are float32 whatever the header says.
VECTOR2_F32 = _t("VECTOR2", Struct(F32, _XY))
RECT2_F32 = _t("RECT2", Struct(F32, _RECT2))
VECTOR3_F32 = _t("VECTOR3", Struct(F32, _XYZ))
TRANSFORM2D_F32 = _t("TRANSFORM2D", Struct(F32, _TRANSFORM2D))
PLANE_F32 = _t("PLANE", Struct(F32, ("x", "y", "z", "d")))
QUATERNION_F32 = _t("QUATERNION", Struct(F32, _XYZW))
AABB_F32 = _t("AABB", Struct(F32, _AABB))
BASIS_F32 = _t("BASIS", Struct(F32, _BASIS))
TRANSFORM3D_F32 = _t("TRANSFORM3D", Struct(F32, _TRANSFORM3D))
POOL_INT_ARRAY = PACKED_INT32_ARRAY
POOL_REAL_ARRAY = _t("PACKED_FLOAT32_ARRAY", Packed(F32))
# Godot 3 double builds: encode_float() into a sizeof(real_t)=8 stride (4 bytes left undefined).
POOL_REAL_ARRAY_DOUBLE = _t("PACKED_FLOAT32_ARRAY", Packed(F32, stride=8))
POOL_VECTOR2_ARRAY = _t("PACKED_VECTOR2_ARRAY", Packed(F32, 2, "VECTOR2"))
POOL_VECTOR3_ARRAY = _t("PACKED_VECTOR3_ARRAY", Packed(F32, 3, "VECTOR3"))

#: Only here so that the docs-table dialect can say "these bytes are a u32 type id".
TYPE_ID = U32
