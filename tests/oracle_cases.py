"""Values written three ways: Godot 3 GDScript, Godot 4 GDScript, and our Python value.

The engines evaluate the GDScript (one run per test session, see conftest.py) and tell us the
bytes and text; the tests check our codec and text notation against what they said.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from godot_dissect.values import (
    AABB,
    RID,
    Basis,
    Callable,
    Color,
    ContainerType,
    Float64,
    NodePath,
    Object,
    ObjectID,
    PackedColorArray,
    PackedFloat32Array,
    PackedFloat64Array,
    PackedInt32Array,
    PackedInt64Array,
    PackedStringArray,
    PackedVector2Array,
    PackedVector3Array,
    PackedVector4Array,
    Plane,
    Projection,
    Quaternion,
    Rect2,
    Rect2i,
    Signal,
    StringName,
    Transform2D,
    Transform3D,
    TypedArray,
    TypedDictionary,
    Vector2,
    Vector2i,
    Vector3,
    Vector3i,
    Vector4,
    Vector4i,
)

ANY_ID = object()


def F32(x: float) -> float:
    """x rounded to float32, as math types hold it in single-precision builds."""
    return struct.unpack("<f", struct.pack("<f", x))[0]  # an instance id the engine picks at run time


@dataclass(frozen=True)
class Case:
    name: str
    gd3: str | None  # Godot 3 expression (None: not in Godot 3)
    gd4: str | None  # Godot 4 expression
    value: Any
    setup3: str = ""
    setup4: str = ""
    full: bool = False  # compare with var_to_bytes_with_objects / var2bytes(v, true)


B123 = Basis(Vector3(1, 2, 3), Vector3(4, 5, 6), Vector3(7, 8, 9))
NAN = float("nan")
INF = float("inf")

CASES: list[Case] = [
    Case("nil", "null", "null", None),
    Case("false", "false", "false", False),
    Case("true", "true", "true", True),
    Case("int0", "0", "0", 0),
    Case("int1", "1", "1", 1),
    Case("int_m1", "-1", "-1", -1),
    Case("i32max", "2147483647", "2147483647", 2147483647),
    Case("i32min", "-2147483648", "-2147483648", -2147483648),
    Case("i32max_p1", "2147483648", "2147483648", 2147483648),
    Case("i32min_m1", "-2147483649", "-2147483649", -2147483649),
    Case("i64max", "9223372036854775807", "9223372036854775807", 9223372036854775807),
    Case("i64min", "-9223372036854775807 - 1", "-9223372036854775807 - 1", -9223372036854775808),
    Case("f0", "0.0", "0.0", 0.0),
    Case("f_m0", "-0.0", "-0.0", -0.0),
    Case("f1_5", "1.5", "1.5", 1.5),
    Case("f0_1", "0.1", "0.1", 0.1),
    Case("f1e10", "1e10", "1e10", 1e10),
    Case("f1e300", "1e300", "1e300", 1e300),
    Case("f_small", "1e-7", "1e-7", 1e-7),
    Case("f_third", "1.0 / 3.0", "1.0 / 3.0", 1.0 / 3.0),
    Case("f_inf", "INF", "INF", INF),
    Case("f_minf", "-INF", "-INF", -INF),
    Case("f_nan", "NAN", "NAN", NAN),
    Case("f32max", "pow(2.0, 127) * (2.0 - pow(2.0, -23))", "pow(2.0, 127) * (2.0 - pow(2.0, -23))",
         3.4028234663852886e38),  # computed: Godot 3's tokenizer rounds long literals
    Case("s_empty", '""', '""', ""),
    Case("s_a", '"a"', '"a"', "a"),
    Case("s_abcd", '"abcd"', '"abcd"', "abcd"),
    Case("s_unicode", '"h\\u00e9llo \\u2713"', '"h\\u00e9llo \\u2713 \\U01F600"',
         None),  # value set per engine below (Godot 3 has no \U escape)
    Case("s_quote", '"a\\"b\\\\c\\nd\\te"', '"a\\"b\\\\c\\nd\\te"', 'a"b\\c\nd\te'),
    Case("v2", "Vector2(1.5, -2)", "Vector2(1.5, -2)", Vector2(1.5, -2.0)),
    Case("v2_lossy", "Vector2(0.1, 0.2)", "Vector2(0.1, 0.2)", Vector2(F32(0.1), F32(0.2))),
    Case("v2i", None, "Vector2i(1, -2)", Vector2i(1, -2)),
    Case("rect2", "Rect2(1, 2, 3, 4)", "Rect2(1, 2, 3, 4)", Rect2(Vector2(1, 2), Vector2(3, 4))),
    Case("rect2i", None, "Rect2i(1, 2, 3, 4)", Rect2i(Vector2i(1, 2), Vector2i(3, 4))),
    Case("v3", "Vector3(1, 2, 3)", "Vector3(1, 2, 3)", Vector3(1, 2, 3)),
    Case("v3i", None, "Vector3i(1, 2, -3)", Vector3i(1, 2, -3)),
    Case("t2d", "Transform2D(Vector2(1, 2), Vector2(3, 4), Vector2(5, 6))",
         "Transform2D(Vector2(1, 2), Vector2(3, 4), Vector2(5, 6))",
         Transform2D(Vector2(1, 2), Vector2(3, 4), Vector2(5, 6))),
    Case("v4", None, "Vector4(1, 2, 3, 4)", Vector4(1, 2, 3, 4)),
    Case("v4i", None, "Vector4i(1, 2, 3, -4)", Vector4i(1, 2, 3, -4)),
    Case("plane", "Plane(1, 2, 3, 4)", "Plane(1, 2, 3, 4)", Plane(1, 2, 3, 4)),
    Case("quat", "Quat(1, 2, 3, 4)", "Quaternion(1, 2, 3, 4)", Quaternion(1, 2, 3, 4)),
    Case("aabb", "AABB(Vector3(1, 2, 3), Vector3(4, 5, 6))", "AABB(Vector3(1, 2, 3), Vector3(4, 5, 6))",
         AABB(Vector3(1, 2, 3), Vector3(4, 5, 6))),
    Case("basis", "Basis(Vector3(1, 2, 3), Vector3(4, 5, 6), Vector3(7, 8, 9))",
         "Basis(Vector3(1, 2, 3), Vector3(4, 5, 6), Vector3(7, 8, 9))", B123),
    Case("transform3d", "Transform(Basis(Vector3(1, 2, 3), Vector3(4, 5, 6), Vector3(7, 8, 9)), Vector3(10, 11, 12))",
         "Transform3D(Basis(Vector3(1, 2, 3), Vector3(4, 5, 6), Vector3(7, 8, 9)), Vector3(10, 11, 12))",
         Transform3D(B123, Vector3(10, 11, 12))),
    Case("projection", None,
         "Projection(Vector4(1, 2, 3, 4), Vector4(5, 6, 7, 8), Vector4(9, 10, 11, 12), Vector4(13, 14, 15, 16))",
         Projection(Vector4(1, 2, 3, 4), Vector4(5, 6, 7, 8), Vector4(9, 10, 11, 12), Vector4(13, 14, 15, 16))),
    Case("color", "Color(0.25, 0.5, 0.75, 1)", "Color(0.25, 0.5, 0.75, 1)", Color(0.25, 0.5, 0.75, 1)),
    Case("sname", None, '&"hello"', StringName("hello")),
    Case("sname_empty", None, '&""', StringName("")),
    Case("np_rel", 'NodePath("a/b")', 'NodePath("a/b")', NodePath("a/b")),
    Case("np_abs", 'NodePath("/root/x")', 'NodePath("/root/x")', NodePath("/root/x")),
    Case("np_sub", 'NodePath("a/b:c:d")', 'NodePath("a/b:c:d")', NodePath("a/b:c:d")),
    Case("np_props", 'NodePath(":p")', 'NodePath(":p")', NodePath(":p")),
    Case("np_dotdot", 'NodePath("../x")', 'NodePath("../x")', NodePath("../x")),
    Case("np_empty", 'NodePath("")', 'NodePath("")', NodePath("")),
    Case("np_long", 'NodePath("/root/Main/World/Level_01/Players/Player2/Model:transform:origin")',
         'NodePath("/root/Main/World/Level_01/Players/Player2/Model:transform:origin")',
         NodePath("/root/Main/World/Level_01/Players/Player2/Model:transform:origin")),
    Case("rid", "RID()", "RID()", RID(0)),
    Case("obj_id", "Reference.new()", "RefCounted.new()", ANY_ID),
    Case("obj_freed", "o", "o", None, setup3="var o = Node.new()\no.free()",
         setup4="var o = Object.new()\no.free()"),
    Case("obj_full", "Reference.new()", "RefCounted.new()", None, full=True),  # value per engine below
    Case("callable", None, "Callable()", Callable()),
    Case("signal_empty", None, "Signal()", Signal("", 0)),
    Case("dict_empty", "{}", "{}", {}),
    Case("dict_mixed", '{"a": 1, 2: "b", Vector2(1, 1): null}', '{"a": 1, 2: "b", Vector2i(1, 1): null}',
         None),
    Case("dict_nested", '{"k": {"x": [1, 2]}, "e": {}}', '{"k": {"x": [1, 2]}, "e": {}}',
         {"k": {"x": [1, 2]}, "e": {}}),
    Case("arr_empty", "[]", "[]", []),
    Case("arr_mixed", '[1, "x", 2.5, null, true]', '[1, "x", 2.5, null, true]', [1, "x", 2.5, None, True]),
    Case("arr_nested", "[[1], [[2]], []]", "[[1], [[2]], []]", [[1], [[2]], []]),
    Case("typed_arr_int", None, "t", TypedArray(ContainerType("builtin", "int"), [1, 2]),
         setup4="var t: Array[int] = [1, 2]"),
    Case("typed_arr_str", None, "t", TypedArray(ContainerType("builtin", "String"), ["a"]),
         setup4="var t: Array[String] = [\"a\"]"),
    Case("typed_arr_node", None, "t", TypedArray(ContainerType("class_name", "EncodedObjectAsID"), []),
         setup4="var t: Array[Node] = []"),
    Case("typed_dict", None, "t",
         TypedDictionary(ContainerType("builtin", "String"), ContainerType("builtin", "int"), {"x": 1, "y": 2}),
         setup4='var t: Dictionary[String, int] = {"x": 1, "y": 2}'),
    Case("typed_dict_keyonly", None, "t",
         TypedDictionary(ContainerType("builtin", "StringName"), None, {StringName("a"): 1.5}),
         setup4='var t: Dictionary[StringName, Variant] = {&"a": 1.5}'),
    Case("pba", "PoolByteArray([1, 2, 3])", "PackedByteArray([1, 2, 3])", b"\x01\x02\x03"),
    Case("pba4", "PoolByteArray([1, 2, 3, 4])", "PackedByteArray([1, 2, 3, 4])", b"\x01\x02\x03\x04"),
    Case("pba_empty", "PoolByteArray()", "PackedByteArray()", b""),
    Case("pia", "PoolIntArray([1, -2, 2147483647])", "PackedInt32Array([1, -2, 2147483647])",
         PackedInt32Array([1, -2, 2147483647])),
    Case("pi64", None, "PackedInt64Array([1, -9223372036854775807])",
         PackedInt64Array([1, -9223372036854775807])),
    Case("pfa", "PoolRealArray([1.5, -0.25])", "PackedFloat32Array([1.5, -0.25])",
         PackedFloat32Array([1.5, -0.25])),
    Case("pf64", None, "PackedFloat64Array([0.1, 1e300])", PackedFloat64Array([0.1, 1e300])),
    Case("psa", 'PoolStringArray(["ab", "cde", "", "\\u00e9"])', 'PackedStringArray(["ab", "cde", "", "\\u00e9"])',
         PackedStringArray(["ab", "cde", "", "\u00e9"])),
    Case("pv2", "PoolVector2Array([Vector2(1, 2), Vector2(-3, 4.5)])",
         "PackedVector2Array([Vector2(1, 2), Vector2(-3, 4.5)])",
         PackedVector2Array([(1, 2), (-3, 4.5)])),
    Case("pv3", "PoolVector3Array([Vector3(1, 2, 3)])", "PackedVector3Array([Vector3(1, 2, 3)])",
         PackedVector3Array([(1, 2, 3)])),
    Case("pcolor", "PoolColorArray([Color(1, 0, 0, 1)])", "PackedColorArray([Color(1, 0, 0, 1)])",
         PackedColorArray([(1, 0, 0, 1)])),
    Case("pv4", None, "PackedVector4Array([Vector4(1, 2, 3, 4)])", PackedVector4Array([(1, 2, 3, 4)])),
    # Godot 4.2+ remote debugger messages, as RemoteDebugger::_put_msg builds them
    Case("dbg4_set_pid", None, '["set_pid", 1, [4242]]', ["set_pid", 1, [4242]]),
    Case("dbg4_output", None, '["output", 1, [PackedStringArray(["hi"]), PackedInt32Array([0])]]',
         ["output", 1, [PackedStringArray(["hi"]), PackedInt32Array([0])]]),
    Case("dbg3_editor_cmd", '["inspect_object", 1288]', None, ["inspect_object", 1288]),
    Case("state", '{"id": 7, "name": "p1", "pos": Vector3(1, 2, 3), "hp": 0.75, "tags": ["a", "b"]}',
         '{"id": 7, "name": "p1", "pos": Vector3(1, 2, 3), "hp": 0.75, "tags": ["a", "b"]}',
         {"id": 7, "name": "p1", "pos": Vector3(1, 2, 3), "hp": 0.75, "tags": ["a", "b"]}),
]

# Values that differ between the engines (same GDScript meaning, different Python value).
PER_ENGINE: dict[tuple[str, int], Any] = {
    ("s_unicode", 3): "h\u00e9llo \u2713",
    ("s_unicode", 4): "h\u00e9llo \u2713 \U0001F600",
    ("dict_mixed", 3): {"a": 1, 2: "b", Vector2(1, 1): None},
    ("dict_mixed", 4): {"a": 1, 2: "b", Vector2i(1, 1): None},
    ("obj_full", 3): Object("Reference", {"script": None}),
    ("obj_full", 4): Object("RefCounted", {"script": None}),
}


def value_for(case: Case, family: int) -> Any:
    return PER_ENGINE.get((case.name, family), case.value)


def cases_for(family: int) -> list[Case]:
    return [c for c in CASES if (c.gd3 if family == 3 else c.gd4) is not None]


__all__ = ["ANY_ID", "CASES", "Case", "Float64", "ObjectID", "cases_for", "value_for"]
