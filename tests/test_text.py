"""Text notation against the real engines: ``to_text(value)`` must print exactly what var2str /
var_to_str print for the same value, and ``from_text`` must read that text back to the value.

Every expected string comes from an engine run (one run per engine for the whole module). The
Python value of each case is written next to its GDScript expression. ``exact=False`` marks values
whose text is lossy in the engine itself (Godot 3's 6 significant digits, Godot 4's float32 digits
for a double that happens to be a float32, the 100-level cut-off): for those only ``to_text`` is
checked, and ``from_text`` is checked against the engine's own ``str_to_var`` instead.
"""

from __future__ import annotations

import contextlib
import math
import struct
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from godot_dissect import values as V
from godot_dissect.codec import decode, encode
from godot_dissect.text import TextParseError, from_text, to_text
from godot_dissect.text.writer import f32

T = V.ContainerType


@dataclass(frozen=True)
class Case:
    name: str
    expr: str
    value: Any
    setup: str = ""
    exact: bool = True


def _nest(depth: int, leaf: Any, wrap: Any) -> Any:
    v = leaf
    for _ in range(depth):
        v = wrap(v)
    return v


_COLOR_KEYS = [7, 3, 19, 0, 12, 5, 16, 1, 9, 14, 2, 18, 6, 11, 4, 17, 8, 13, 10, 15]

COMMON = [  # the same GDScript in both engines
    Case("null", "null", None), Case("true", "true", True), Case("false", "false", False),
    Case("int0", "0", 0), Case("int_neg", "-1", -1), Case("int_big", "2147483648", 2**31),
    Case("int_max", "9223372036854775807", 2**63 - 1), Case("int_min", "-9223372036854775807 - 1", -2**63),
    Case("f_one", "1.0", 1.0), Case("f_negzero", "-0.0", -0.0), Case("f_half", "-2.5", -2.5),
    Case("f_hundred", "100.0", 100.0), Case("f_1e20", "1e20", 1e20), Case("f_1e15", "1e15", 1e15),
    Case("f_1e-5", "0.00001", 1e-05), Case("f_1e-4", "0.0001", 0.0001),
    Case("f_inf", "INF", math.inf), Case("f_ninf", "-INF", -math.inf), Case("f_nan", "NAN", math.nan),
    Case("s_empty", '""', ""), Case("s_uni", '"héllo wörld ✓ 😀"', "héllo wörld ✓ 😀"),
    Case("s_esc", '"a\\n\\tb\\"c\\\\d\'?"', 'a\n\tb"c\\d\'?'),
    Case("s_ctrl", "char(1) + char(7) + char(8) + char(11) + char(13) + char(127) + char(160) + char(8232)",
         "\x01\x07\x08\x0b\r\x7f\xa0\u2028"),
    Case("np", 'NodePath("a/b:c")', V.NodePath("a/b:c")), Case("np_abs", 'NodePath("/root/x")', V.NodePath("/root/x")),
    Case("np_empty", 'NodePath("")', V.NodePath("")), Case("np_up", 'NodePath("..")', V.NodePath("..")),
    Case("np_esc", 'NodePath("a\\nb\'c?")', V.NodePath("a\nb'c?")),
    Case("v2", "Vector2(1, 2)", V.Vector2(1.0, 2.0)),
    Case("v2_frac", "Vector2(0.1, -0.5)", V.Vector2(f32(0.1), -0.5)),
    Case("v2_third", "Vector2(1.0 / 3.0, 123456789.0)", V.Vector2(f32(1 / 3), f32(123456789.0)), exact=False),
    Case("v2_special", "Vector2(INF, -INF)", V.Vector2(math.inf, -math.inf)),
    Case("rect2", "Rect2(1, 2, 3, 4)", V.Rect2(V.Vector2(1, 2), V.Vector2(3, 4))),
    Case("v3", "Vector3(1, 2.5, -3)", V.Vector3(1, 2.5, -3)),
    Case("t2d", "Transform2D(Vector2(1, 2), Vector2(3, 4), Vector2(5, 6))",
         V.Transform2D(V.Vector2(1, 2), V.Vector2(3, 4), V.Vector2(5, 6))),
    Case("plane", "Plane(1, 2, 3, 4)", V.Plane(1, 2, 3, 4)),
    Case("aabb", "AABB(Vector3(1, 2, 3), Vector3(4, 5, 6))", V.AABB(V.Vector3(1, 2, 3), V.Vector3(4, 5, 6))),
    Case("basis", "Basis(Vector3(1, 2, 3), Vector3(4, 5, 6), Vector3(7, 8, 9))",
         V.Basis(V.Vector3(1, 2, 3), V.Vector3(4, 5, 6), V.Vector3(7, 8, 9))),
    Case("color", "Color(0.1, 0.2, 0.3, 0.4)", V.Color(f32(0.1), f32(0.2), f32(0.3), f32(0.4))),
    Case("color3", "Color(1, 0.5, 0)", V.Color(1, 0.5, 0, 1)),
    Case("arr_empty", "[]", []), Case("dict_empty", "{}", {}),
    Case("arr", '[1, "x", 2.5, null, true]', [1, "x", 2.5, None, True]),
    Case("arr_nested", "[[1, [2]], {}, []]", [[1, [2]], {}, []]),
    Case("dict", '{"a": 1, 2: "b"}', {"a": 1, 2: "b"}),
    Case("dict_nested", '{"a": {"b": {}}, "c": [{"d": 1}]}', {"a": {"b": {}}, "c": [{"d": 1}]}),
    Case("dict_ints", "d", {k: k * k for k in _COLOR_KEYS}, f"var d = {{}}\nfor k in {_COLOR_KEYS}:\n\td[k] = k * k"),
    Case("dict_strs", "d", {f"k{k}": k for k in _COLOR_KEYS},
         f"var d = {{}}\nfor k in {_COLOR_KEYS}:\n\td[\"k\" + str(k)] = k"),
    # keys without an order: the engine's introsort decides where they go
    Case("dict_colors", "d", {V.Color(k, 0, 0, 1): k for k in _COLOR_KEYS},
         f"var d = {{}}\nfor k in {_COLOR_KEYS}:\n\td[Color(k, 0, 0)] = k"),
    Case("dict_mixed", "d", {V.Color(1, 0, 0, 1): 0, 3: 1, V.Color(0, 1, 0, 1): 2, "a": 3, V.Rect2(): 4, 1.5: 5},
         "var d = {Color(1, 0, 0): 0, 3: 1, Color(0, 1, 0): 2, \"a\": 3, Rect2(): 4, 1.5: 5}"),
    Case("dict_vec_keys", "d", {V.Vector2(1, 5): 0, V.Vector2(1, 2): 1, V.Vector2(0.5, 9): 2, V.Vector2(1, 2.5): 3},
         "var d = {Vector2(1, 5): 0, Vector2(1, 2): 1, Vector2(0.5, 9): 2, Vector2(1, 2.5): 3}"),
    Case("dict_arr_keys", "d", {(2,): 0, (1,): 1, (1, 0): 2, (): 3}, "var d = {[2]: 0, [1]: 1, [1, 0]: 2, []: 3}"),
    Case("dict_nan_keys", "d", {math.nan: 0, 2.0: 1, 1.0: 2}, "var d = {}\nd[NAN] = 0\nd[2.0] = 1\nd[1.0] = 2",
         exact=False),
]

CASES4 = COMMON + [
    Case("f_tenth", "0.1", 0.1), Case("f_third", "1.0 / 3.0", 1 / 3),
    Case("f_sum", "0.1 + 0.2", 0.30000000000000004), Case("f_1e-7", "1e-7", 1e-07),
    Case("f_big", "123456789.0", 123456789.0), Case("f_1.5e14", "150000000000000.0", 1.5e14),
    Case("f_f32", "Vector2(0.1, 0).x", f32(0.1), exact=False),  # a double that is a float32
    Case("f_2p53", "9007199254740992.0", 2.0 ** 53, exact=False),
    Case("sn", '&"name"', V.StringName("name")), Case("sn_empty", '&""', V.StringName("")),
    Case("sn_esc", 'StringName("a\\nb\\tc\'d\\"e\\\\f?" + char(8) + char(12) + char(13) + char(1))',
         V.StringName("a\nb\tc'd\"e\\f?\b\f\r\x01")),
    Case("sn_bell", "StringName(char(7) + char(11))", V.StringName("\x07\x0b"), exact=False),
    Case("v2i", "Vector2i(-2147483648, 2147483647)", V.Vector2i(-2**31, 2**31 - 1)),
    Case("rect2i", "Rect2i(1, 2, 3, 4)", V.Rect2i(V.Vector2i(1, 2), V.Vector2i(3, 4))),
    Case("v3i", "Vector3i(1, -2, 3)", V.Vector3i(1, -2, 3)),
    Case("v4", "Vector4(1, 2, 3, 0.25)", V.Vector4(1, 2, 3, 0.25)),
    Case("v4i", "Vector4i(1, 2, 3, 4)", V.Vector4i(1, 2, 3, 4)),
    Case("quat", "Quaternion(1, 2, 3, 4)", V.Quaternion(1, 2, 3, 4)),
    Case("t3d", "Transform3D(Basis(Vector3(1, 2, 3), Vector3(4, 5, 6), Vector3(7, 8, 9)), Vector3(10, 11, 12))",
         V.Transform3D(V.Basis(V.Vector3(1, 2, 3), V.Vector3(4, 5, 6), V.Vector3(7, 8, 9)), V.Vector3(10, 11, 12))),
    Case("proj", "Projection(Vector4(1, 2, 3, 4), Vector4(5, 6, 7, 8), Vector4(9, 10, 11, 12), Vector4(13, 14, 5, 0))",
         V.Projection(V.Vector4(1, 2, 3, 4), V.Vector4(5, 6, 7, 8), V.Vector4(9, 10, 11, 12), V.Vector4(13, 14, 5, 0))),
    Case("rid", "RID()", V.RID(0)), Case("callable", "Callable()", V.Callable()),
    Case("signal", "Signal()", V.Signal()),
    Case("obj", "Object.new()", V.Object("Object", {"script": None})),
    Case("obj_ref", "RefCounted.new()", V.Object("RefCounted", {"script": None})),
    Case("obj_res", "Resource.new()",
         V.Object("Resource", {"resource_local_to_scene": False, "resource_name": "", "script": None})),
    Case("arr_obj", "[Object.new(), 1]", [V.Object("Object", {"script": None}), 1]),
    Case("dict_key_types", "d",
         {"z": 1, V.StringName("y"): 2, "x": 3, 2: 0, 1.5: 0, V.Vector2(0, 0): 0, None: 0, True: 0, (1,): 0,
          V.FrozenDict(): 0, V.StringName("a"): 9},
         'var d = {"z": 1, &"y": 2, "x": 3, 2: 0, 1.5: 0, Vector2(0, 0): 0, null: 0, true: 0, [1]: 0, {}: 0, &"a": 9}'),
    Case("typed_int", "a", V.TypedArray(T("builtin", "int"), [1, 2]), "var a: Array[int] = [1, 2]"),
    Case("typed_str", "a", V.TypedArray(T("builtin", "String"), []), "var a: Array[String] = []"),
    Case("typed_v2", "a", V.TypedArray(T("builtin", "Vector2"), [V.Vector2(1, 2)]),
         "var a: Array[Vector2] = [Vector2(1, 2)]"),
    Case("typed_node", "a", V.TypedArray(T("class_name", "Node"), []), "var a: Array[Node] = []"),
    Case("tdict", "d", V.TypedDictionary(T("builtin", "String"), T("builtin", "int"), {"b": 2, "a": 1}),
         'var d: Dictionary[String, int] = {"b": 2, "a": 1}'),
    Case("tdict_vv", "d", V.TypedDictionary(T("builtin", "int"), None, {}), "var d: Dictionary[int, Variant] = {}"),
    Case("tdict_node", "d", V.TypedDictionary(None, T("class_name", "Node"), {}),
         "var d: Dictionary[Variant, Node] = {}"),
    Case("pba_empty", "PackedByteArray()", b""), Case("pba", "PackedByteArray([1, 2, 255])", b"\x01\x02\xff"),
    Case("pi32", "PackedInt32Array([1, -2])", V.PackedInt32Array([1, -2])),
    Case("pi64", "PackedInt64Array([1, -9223372036854775807 - 1])", V.PackedInt64Array([1, -2**63])),
    Case("pf32", "PackedFloat32Array([0.1, 1.0 / 3.0, -INF])", V.PackedFloat32Array([0.1, 1 / 3, -math.inf])),
    Case("pf64", "PackedFloat64Array([0.1, 1.0 / 3.0, INF, 0.5])", V.PackedFloat64Array([0.1, 1 / 3, math.inf, 0.5])),
    Case("pstr", 'PackedStringArray(["a", "b\\"c", "", "d\\ne"])', V.PackedStringArray(["a", 'b"c', "", "d\ne"])),
    Case("pstr_empty", "PackedStringArray()", V.PackedStringArray([])),
    Case("pv2", "PackedVector2Array([Vector2(1, 2), Vector2(0.1, 4)])", V.PackedVector2Array([(1, 2), (0.1, 4)])),
    Case("pv3", "PackedVector3Array([Vector3(1, 2, 3)])", V.PackedVector3Array([(1, 2, 3)])),
    Case("pcol", "PackedColorArray([Color(1, 0, 0), Color(0.5, 0.25, 0, 0.125)])",
         V.PackedColorArray([(1, 0, 0, 1), (0.5, 0.25, 0, 0.125)])),
    Case("pv4", "PackedVector4Array([Vector4(1, 2, 3, 4)])", V.PackedVector4Array([(1, 2, 3, 4)])),
    Case("deep_arr", "a", _nest(105, [], lambda v: [v]), "var a = []\nfor i in range(105):\n\ta = [a]", exact=False),
    Case("deep_dict", "a", _nest(105, {}, lambda v: {1: v}), "var a = {}\nfor i in range(105):\n\ta = {1: a}",
         exact=False),
]

CASES3 = COMMON + [
    Case("f_tenth", "0.1", 0.1), Case("f_third", "1.0 / 3.0", 1 / 3, exact=False),
    Case("f_big", "123456789.0", 123456789.0, exact=False), Case("f_1e300", "1e300", 1e300, exact=False),
    Case("f_1e-300", "1e-300", 1e-300, exact=False),
    Case("quat", "Quat(1, 2, 3, 4)", V.Quaternion(1, 2, 3, 4)),
    Case("t3d", "Transform(Basis(Vector3(1, 2, 3), Vector3(4, 5, 6), Vector3(7, 8, 9)), Vector3(10, 11, 12))",
         V.Transform3D(V.Basis(V.Vector3(1, 2, 3), V.Vector3(4, 5, 6), V.Vector3(7, 8, 9)), V.Vector3(10, 11, 12))),
    Case("rid", "RID()", V.RID(0), exact=False),  # Godot 3 prints nothing for an RID
    Case("obj", 'ClassDB.instance("Object")', V.Object("Object", {"script": None})),
    Case("obj_ref", "Reference.new()", V.Object("Reference", {"script": None})),
    Case("obj_res", "Resource.new()",
         V.Object("Resource", {"resource_local_to_scene": False, "resource_name": "", "script": None})),
    Case("dict_key_types", "d",
         {"z": 1, "x": 3, 2: 0, 1.5: 0, V.Vector2(0, 0): 0, None: 0, True: 0, (1,): 0, V.FrozenDict(): 0},
         'var d = {"z": 1, "x": 3, 2: 0, 1.5: 0, Vector2(0, 0): 0, null: 0, true: 0, [1]: 0, {}: 0}'),
    Case("dict_vec_approx", "d", {V.Vector2(f32(1.000001), 0): 0, V.Vector2(1, 5): 1},
         "var d = {Vector2(1.000001, 0): 0, Vector2(1, 5): 1}", exact=False),
    Case("pba_empty", "PoolByteArray()", b""), Case("pba", "PoolByteArray([1, 2, 255])", b"\x01\x02\xff"),
    Case("pint", "PoolIntArray([1, -2])", V.PackedInt32Array([1, -2])),
    Case("preal", "PoolRealArray([0.5, 2, -INF])", V.PackedFloat32Array([0.5, 2, -math.inf])),
    Case("preal_lossy", "PoolRealArray([0.1, 1.0 / 3.0])", V.PackedFloat32Array([0.1, 1 / 3]), exact=False),
    Case("pstr", 'PoolStringArray(["a", "b\\"c", "", "d\\ne?"])', V.PackedStringArray(["a", 'b"c', "", "d\ne?"])),
    Case("pstr_empty", "PoolStringArray()", V.PackedStringArray([])),
    Case("pv2", "PoolVector2Array([Vector2(1, 2), Vector2(3, 4)])", V.PackedVector2Array([(1, 2), (3, 4)])),
    Case("pv3", "PoolVector3Array([Vector3(1, 2, 3)])", V.PackedVector3Array([(1, 2, 3)])),
    Case("pcol", "PoolColorArray([Color(1, 0, 0), Color(0.5, 0.25, 0, 0.125)])",
         V.PackedColorArray([(1, 0, 0, 1), (0.5, 0.25, 0, 0.125)])),
]

# Values the engine decodes from bytes made by our codec: exact doubles, NaN signs, objects as ids.
# name -> (value, whether the engine's text reads back to it)
_NEG_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]
DECODE4 = {
    "denormal_min": (5e-324, True), "normal_min": (2.2250738585072014e-308, True),
    "double_max": (1.7976931348623157e308, True), "f32_max": (3.4028234663852886e38, False),
    "neg_nan": (_NEG_NAN, True), "g2_a": (1.2345678901234567e-300, True), "g2_b": (9.999999999999999e22, True),
    "g2_c": (5.551115123125783e-17, False), "f_2p63": (2.0 ** 63, False),
    "objid": (V.ObjectID(123456789), True), "objid_big": (V.ObjectID(2**64 - 5), True),
    "objid_null": (V.ObjectID(0), False), "rid": (V.RID(77), True), "rid_big": (V.RID(2**64 - 1), True),
    "signal": (V.Signal("pressed", 99), False),
    "v2_denormal": (V.Vector2(f32(1.401298464324817e-45), -3.4028234663852886e38), True),
    "arr_objid": ([V.ObjectID(5), V.ObjectID(6)], True),
    # Grisu2 gives more digits than the shortest for these; the engine prints them that way
    "g2_long_a": (2.951749533409803e16, True), "g2_long_b": (2.315937287738532e-07, True),
    "g2_long_f32": (V.Vector2(207026208.0, 77371456.0), True),
}
DECODE3 = {
    "neg_nan": (_NEG_NAN, True), "f32_max": (3.4028234663852886e38, False), "tiny": (1.401298464324817e-45, False),
    "objid": (V.ObjectID(123456789), True), "objid_null": (V.ObjectID(0), False),
}

# Text the engine's own parser reads (str2var / str_to_var): our reading must print the same.
PARSE4 = [
    "Vector2( 1, 2 )", "Quat(1, 2, 3, 4)", "Transform(1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0)",
    "Matrix32(1, 0, 0, 1, 0, 0)", "Rect3(1, 2, 3, 4, 5, 6)", "Matrix3(1, 0, 0, 0, 1, 0, 0, 0, 1)",
    "PoolRealArray( 1, 2.5 )", "FloatArray(1)", "PackedRealArray(1)", "IntArray(1, 2)", "ByteArray(1, 2, 300)",
    'PackedByteArray("AQID")', 'PackedByteArray("")', "PoolVector2Array( 1, 2 )", "PackedVector2Array(1, 2, 3)",
    'PoolStringArray( "a", "b" )', "[1, 2, ]", '{"a": 1, ; comment\n"b": 2,}', '@"x"', '&"a\\ab\\vc\\?d"',
    '"\\u00e9\\U01F600\\ud83d\\ude00\\q"', "inf_neg", "-inf", "nan", "Vector2(inf_neg, nan)", "Vector2(-inf, inf)",
    "12345678901234567890", "9223372036854775808", "-9223372036854775809", "Vector2i(3000000000, 1.5)",
    "1E5", "1e", "5.", "-0", "-0.0", "Array[int]([1])", 'Dictionary[String, int]({"a": 1})',
    "Dictionary[Variant, Variant]({})", "Array[Variant]([1])",
    'Object(EncodedObjectAsID,"object_id":77,"script":null)', "RID(5)", "RID(-1)", "Vector2(0.1, 1e39)",
    "Color(1, 2, 3, 4)", "Signal()", "Callable()", "NodePath(\"a:b\")", "{\n1: [\n2,\n3\n]\n}",
    "[#ff0000, 1]", "[#abcd ]", "Vector2i(inf, nan)", "Vector2i(1e10, -1e10)", "PackedInt64Array(1e30, -inf)",
    "RID(1.5)", "PackedByteArray(-1, 1.9)", "Array[Resource]([])", "Dictionary[Resource, int]({})",
    '[&"a", @"b"]', "[1.5e+3, -2E-2, 7e2]", '["a\\\nb"]',
]
REJECT4 = ["Vector2(1)", "Color(1, 2, 3)", "Vector2(1, 2,)", "[1", '"abc', "- 5", '"\\ud83d"', "{1 2}", "[,]",
           '[PackedByteArray("AQI")]']
PARSE3 = [
    "Vector2( 1, 2 )", "Quat( 1, 2, 3, 4 )", "Transform( 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0 )",
    "Matrix32(1, 0, 0, 1, 0, 0)", "Rect3(1, 2, 3, 4, 5, 6)", "PoolRealArray( 1, 2.5 )", "FloatArray(1)",
    "IntArray(1)", "ByteArray(1)", 'StringArray("a")', "Vector2Array(1, 2)", "ColorArray(1, 1, 1, 1)",
    "[1, 2, ]", "{1: 2,}", '"a\\tb\\?c"', 'NodePath("a:b")', "nan", "inf", "1e+20", "1.5e3", "-0",
    'Object(Reference,"script":null)', 'Object(EncodedObjectAsID,"object_id":77,"script":null)', '"\\u00e9"',
    '{"a" : 1 ; comment\n, "b": [ 1, 2 ]}', "12345678901234567890", "9223372036854775808",
]
REJECT3 = ["Vector2(1)", "Color(1, 2, 3)", "[1", "Vector2( 1, 2, )"]


def _gd_string(s: str) -> str:
    """A GDScript string literal (same escapes in 3.x and 4.x)."""
    out = []
    for c in s:
        if c in '\\"':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif ord(c) < 32 or ord(c) > 126:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


@dataclass
class Run:
    dialect: str
    cases: list[Case]
    encoded: dict[str, Any]
    decoded: dict[str, Any]
    parsed: dict[str, Any]


def _run(family: int) -> Run:
    from godot_dissect.engines import DecodeCase, EncodeCase, EngineUnavailable, get_engine

    try:
        eng = get_engine(f"godot{family}")
    except EngineUnavailable as e:
        pytest.skip(f"Godot {family} engine unavailable: {e.reason}")
    dialect = f"godot{family}"
    cases = CASES3 if family == 3 else CASES4
    parse_fn = "str2var" if family == 3 else "str_to_var"
    enc = [EncodeCase(c.name, c.expr, c.setup) for c in cases]
    parses = (PARSE3 + REJECT3) if family == 3 else (PARSE4 + REJECT4)
    enc += [EncodeCase(f"parse{i}", f"{parse_fn}({_gd_string(s)})") for i, s in enumerate(parses)]
    dec_values = DECODE3 if family == 3 else DECODE4
    dec = [DecodeCase(encode(v, dialect)) for v, _ in dec_values.values()]
    res = eng.probe(encode=enc, decode=dec)
    return Run(dialect, cases, res.encoded, dict(zip(dec_values, res.decoded, strict=True)),
               {s: res.encoded[f"parse{i}"] for i, s in enumerate(parses)})


_RUNS: dict[int, Run] = {}


@pytest.fixture(scope="module")
def runs() -> Any:
    """family -> Run, each engine started once for the whole module (and only if a test needs it)."""

    def get(family: int) -> Run:
        if family not in _RUNS:
            _RUNS[family] = _run(family)
        return _RUNS[family]

    return get


@pytest.fixture(params=[3, 4], ids=["godot3", "godot4"])
def run(request: pytest.FixtureRequest, runs: Any) -> Run:
    return runs(request.param)


_PAIRS = [(3, c) for c in CASES3] + [(4, c) for c in CASES4]
_IDS = [f"godot{f}-{c.name}" for f, c in _PAIRS]


def canon(v: Any) -> Any:
    """A comparable form in which NaN equals NaN and every type is spelled out."""
    if isinstance(v, float):
        return ("float", "nan") if math.isnan(v) else ("float", float(v) + 0.0)  # -0.0 prints as 0
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return ("int", int(v))
    if isinstance(v, str):
        return (type(v).__name__, str(v))
    if isinstance(v, V.TypedArray):
        return ("TypedArray", v.element, [canon(x) for x in v])
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields") and not isinstance(v, V.PackedStringArray):
        return ("Array", [canon(x) for x in v])
    if isinstance(v, V.TypedDictionary):
        return ("TypedDictionary", v.key_type, v.value_type, sorted((repr(canon(k)), canon(x)) for k, x in v.items()))
    if isinstance(v, (dict, V.FrozenDict)):
        return ("Dictionary", sorted((repr(canon(k)), canon(x)) for k, x in v.items()))
    if isinstance(v, V.Object):
        return ("Object", v.class_name, [(k, canon(x)) for k, x in v.properties.items()])
    if isinstance(v, V.PackedArray):
        return (type(v).__name__, [canon(x) for x in v.array])
    if hasattr(v, "_fields"):
        return (type(v).__name__, [canon(x) for x in v])
    return v


def test_engine_versions(run: Run) -> None:
    assert run.encoded, "the engine ran no case"


@pytest.mark.parametrize(("family", "case"), _PAIRS, ids=_IDS)
def test_to_text_matches_engine(runs: Any, family: int, case: Case) -> None:
    run = runs(family)
    got = run.encoded[case.name]
    assert got.ok, f"{case.name}: {got.error} {got.messages}"
    assert to_text(case.value, run.dialect) == got.text


@pytest.mark.parametrize(("family", "case"), [p for p in _PAIRS if p[1].exact],
                         ids=[i for i, p in zip(_IDS, _PAIRS, strict=True) if p[1].exact])
def test_from_text_reads_engine_text(runs: Any, family: int, case: Case) -> None:
    run = runs(family)
    assert canon(from_text(run.encoded[case.name].text, run.dialect)) == canon(case.value)


def test_to_text_of_engine_bytes(run: Run) -> None:
    """The codec's reading of var_to_bytes(v) prints as var_to_str(v) (objects travel as ids)."""
    for case in run.cases:
        got = run.encoded[case.name]
        if not got.ok or got.data is None or "obj" in case.name or case.name.startswith("deep"):
            continue
        if case.name in ("typed_node", "tdict_node"):
            continue  # class-typed containers travel as Array[EncodedObjectAsID] when objects are not sent
        assert to_text(decode(got.data, run.dialect), run.dialect) == got.text, case.name


def test_decoded_values(run: Run) -> None:
    values = DECODE3 if run.dialect == "godot3" else DECODE4
    for name, (value, _) in values.items():
        res = run.decoded[name]
        assert res.ok, name
        assert to_text(value, run.dialect) == res.text, name


def test_from_text_of_decoded_values(run: Run) -> None:
    values = DECODE3 if run.dialect == "godot3" else DECODE4
    for name, (value, exact) in values.items():
        back = from_text(run.decoded[name].text, run.dialect)
        if exact:
            assert canon(back) == canon(value), name


def test_parser_agrees_with_engine_parser(run: Run) -> None:
    accepted = PARSE3 if run.dialect == "godot3" else PARSE4
    for text in accepted:
        engine = run.parsed[text]
        assert engine.ok and engine.text not in (None, "null", to_text(text, run.dialect)), text
        assert to_text(from_text(text, run.dialect), run.dialect) == engine.text, text


def test_parser_rejects_what_engine_rejects(run: Run) -> None:
    rejected = REJECT3 if run.dialect == "godot3" else REJECT4
    for text in rejected:
        engine = run.parsed[text].text
        # Godot 4 gives null, Godot 3 gives back the input string
        assert engine in ("null", to_text(text, run.dialect)), (text, engine)
        with pytest.raises(TextParseError):
            from_text(text, run.dialect)


# --------------------------------------------------------------------------- without engines


def test_errors_have_line_and_column() -> None:
    with pytest.raises(TextParseError) as e:
        from_text('{\n"a": 1,\n"b": Vector2(1, x)\n}')
    assert (e.value.line, e.value.column) == (3, 17)
    with pytest.raises(TextParseError, match="line 1, column 3"):
        from_text("[1")


def test_deep_nesting_without_recursion() -> None:
    depth = 200_000
    v = from_text("[" * depth + "]" * depth)
    for _ in range(depth - 1):
        v = v[0]
    assert v == []
    with pytest.raises(TextParseError):
        from_text("[" * depth)
    deep = _nest(20_000, [], lambda x: [x])
    assert to_text(deep, "godot3") == "[ " * 20_000 + "[  ]" + " ]" * 20_000


def test_types_missing_from_dialect() -> None:
    from godot_dissect.errors import EncodeError

    with pytest.raises(EncodeError):
        to_text(V.Vector2i(1, 2), "godot3")
    with pytest.raises(EncodeError):
        to_text(2**70)


def test_width_markers_print_as_numbers() -> None:
    for dialect in ("godot3", "godot4"):
        assert to_text(V.WideInt(5), dialect) == to_text(5, dialect)
        assert to_text(V.Float64(0.5), dialect) == to_text(0.5, dialect)
        assert to_text(V.Float32(math.nan), dialect) == to_text(math.nan, dialect)


_PIECES = [*'[]{}(),:;"&#-.e0123456789 \n\\', "Vector2", "inf", "null", "Object", "Array", "PackedByteArray",
           "RID", "Dictionary", "Color", '"\\u', "NodePath"]
_GRAMMAR = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@given(st.one_of(_GRAMMAR, st.text(max_size=30)))
def test_parser_never_fails_otherwise(text: str) -> None:
    """Any text gives a value or a TextParseError: no other exception, no hang."""
    for dialect in ("godot3", "godot4"):
        with contextlib.suppress(TextParseError):
            from_text(text, dialect)


def test_resource_refs() -> None:
    assert from_text("SubResource( 2 )", "godot3") == V.ResourceRef("SubResource", 2)
    assert from_text('ExtResource("1_ab")') == V.ResourceRef("ExtResource", "1_ab")
    assert to_text(V.ResourceRef("ExtResource", 1), "godot3") == "ExtResource( 1 )"
    assert to_text(V.ResourceRef("SubResource", "Box_x1"), "godot4") == 'SubResource("Box_x1")'


# --------------------------------------------------------------------------- round trips

# exact in float32 and too coarse for shorter float32 digits: Godot 4 prints them exactly
_short32 = st.integers(-(2**21), 2**21).map(lambda i: i / 4)
_f32 = st.floats(width=32)
_txt = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=10)
# c_escape writes \a and \v, which both engines read as plain a and v
_ctxt = st.text(st.characters(blacklist_characters="\x00\x07\x0b", blacklist_categories=("Cs",)), max_size=10)
_name = st.text(st.characters(blacklist_characters="\x00\x07\x0b/:", blacklist_categories=("Cs",)), min_size=1,
                max_size=6)


def _values(family: int) -> st.SearchStrategy[Any]:
    real = _f32 if family == 4 else st.integers(-9999, 9999).map(lambda i: i / 4)
    dbl = (st.one_of(st.floats().filter(lambda x: f32(x) != x or math.isinf(x) or math.isnan(x)), _short32)
           if family == 4 else st.integers(-9999, 9999).map(lambda i: i / 4))
    i32 = st.integers(-(2**31), 2**31 - 1)

    def vec(cls: type, comp: st.SearchStrategy, n: int) -> st.SearchStrategy:
        return st.tuples(*[comp] * n).map(lambda t: cls(*t))

    v2, v3, v4 = vec(V.Vector2, real, 2), vec(V.Vector3, real, 3), vec(V.Vector4, real, 4)
    leaves = [
        st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), dbl, _txt,
        st.builds(V.NodePath, st.lists(_name, max_size=3), st.lists(_name, max_size=2), st.booleans()),
        v2, v3, st.builds(V.Rect2, v2, v2), st.builds(V.Transform2D, v2, v2, v2), vec(V.Plane, real, 4),
        vec(V.Quaternion, real, 4), st.builds(V.AABB, v3, v3), st.builds(V.Basis, v3, v3, v3),
        st.builds(V.Transform3D, st.builds(V.Basis, v3, v3, v3), v3), vec(V.Color, real, 4),
        st.builds(V.Object, st.sampled_from(["Node", "Resource"]),
                  st.dictionaries(st.from_regex(r"[a-z_/]{1,8}", fullmatch=True), st.integers(-9, 9), max_size=2)),
        st.integers(1, 2**64 - 1).map(V.ObjectID),
        st.binary(max_size=6), st.lists(i32, max_size=4).map(V.PackedInt32Array),
        st.lists(real, max_size=4).map(V.PackedFloat32Array), st.lists(_ctxt, max_size=3).map(V.PackedStringArray),
        st.lists(v2, max_size=3).map(V.PackedVector2Array), st.lists(v3, max_size=2).map(V.PackedVector3Array),
        st.lists(vec(V.Color, real, 4), max_size=2).map(V.PackedColorArray),
    ]
    if family == 4:
        v2i = vec(V.Vector2i, i32, 2)
        leaves += [
            _ctxt.map(V.StringName), v2i, vec(V.Vector3i, i32, 3), v4, vec(V.Vector4i, i32, 4),
            st.builds(V.Rect2i, v2i, v2i), st.builds(V.Projection, v4, v4, v4, v4),
            st.integers(0, 2**64 - 1).map(V.RID), st.just(V.Signal()), st.just(V.Callable()),
            st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3).map(V.PackedInt64Array),
            st.lists(dbl, max_size=3).map(V.PackedFloat64Array), st.lists(v4, max_size=2).map(V.PackedVector4Array),
        ]
    leaf = st.one_of(leaves)
    key = st.one_of(st.integers(-5, 5), _txt, v2, st.none())

    def extend(inner: st.SearchStrategy) -> st.SearchStrategy:
        out = [st.lists(inner, max_size=4), st.dictionaries(key, inner, max_size=4)]
        if family == 4:
            out += [st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3).map(
                        lambda x: V.TypedArray(T("builtin", "int"), x)),
                    st.dictionaries(_txt, inner, max_size=3).map(
                        lambda d: V.TypedDictionary(T("builtin", "String"), None, d))]
        return st.one_of(out)

    return st.recursive(leaf, extend, max_leaves=12)


@given(_values(4))
def test_round_trip_godot4(value: Any) -> None:
    assert canon(from_text(to_text(value, "godot4"), "godot4")) == canon(value)


@given(_values(3))
def test_round_trip_godot3(value: Any) -> None:
    assert canon(from_text(to_text(value, "godot3"), "godot3")) == canon(value)
