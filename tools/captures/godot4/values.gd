extends RefCounted
# The values the Godot 4 WebSocket client sends with put_var() (godot4-websocket-put-var).  Every
# Godot 4 Variant type appears at least once; labels go into the golden so a reader can tell cases
# apart.  `keep` holds objects and RIDs alive while they are sent; `owner_node` is the Node used as
# the target of the Callable/Signal values.


static func all_types(keep: Array, owner_node: Node) -> Array:
	var ref := RefCounted.new()
	keep.append(ref)
	var node := Node.new()
	node.name = "Sent"
	keep.append(node)
	var body := PhysicsServer2D.body_create()
	keep.append(body)
	var freed := Node.new()
	freed.free()
	var null_obj: Object = null

	var ta_int: Array[int] = [1, -2, 3000000000]
	var ta_str: Array[String] = ["a", "bc", "\u00e9"]
	var ta_vec2: Array[Vector2] = [Vector2(1, 2), Vector2(-0.5, 0.25)]
	var ta_empty: Array[int] = []
	var ta_node: Array[Node] = [node]
	var td_str_int: Dictionary[String, int] = {"a": 1, "b": -2, "big": 9000000000}
	var td_int_vec3: Dictionary[int, Vector3] = {1: Vector3(1, 2, 3), -7: Vector3.ZERO}
	var td_sn_variant: Dictionary[StringName, Variant] = {&"hp": 100, &"name": "x", &"pos": Vector2i(3, 4)}
	var td_empty: Dictionary[String, int] = {}

	var v := []
	v.append(["nil", null])
	v.append(["bool_false", false])
	v.append(["bool_true", true])
	v.append(["int_0", 0])
	v.append(["int_m1", -1])
	v.append(["int32_max", 2147483647])
	v.append(["int32_min", -2147483648])
	v.append(["int64_2p31", 2147483648])
	v.append(["int64_max", 9223372036854775807])
	v.append(["int64_min", -9223372036854775807 - 1])
	v.append(["float_1_5", 1.5])
	v.append(["float_m0", -0.0])
	v.append(["float64_0_1", 0.1])
	v.append(["float64_third", 1.0 / 3.0])
	v.append(["float64_1e300", 1e300])
	v.append(["float64_denormal_min", pow(2.0, -1074)])
	v.append(["float_inf", INF])
	v.append(["float_minf", -INF])
	v.append(["float_nan", NAN])
	v.append(["string_empty", ""])
	v.append(["string_ascii", "hello"])
	v.append(["string_abcd", "abcd"])
	v.append(["string_unicode", "h\u00e9llo \u2713 \u65e5\u672c " + char(0x1F600)])
	v.append(["string_escapes", "a\"b\\c\nd\te"])
	v.append(["vector2", Vector2(1.5, -2)])
	v.append(["vector2_lossy", Vector2(0.1, 0.2)])
	v.append(["vector2i", Vector2i(1, -2)])
	v.append(["vector2i_extremes", Vector2i(2147483647, -2147483648)])
	v.append(["rect2", Rect2(1, 2, 3, 4)])
	v.append(["rect2i", Rect2i(-1, -2, 30, 40)])
	v.append(["vector3", Vector3(1, 2, 3)])
	v.append(["vector3i", Vector3i(-1, 0, 65536)])
	v.append(["transform2d", Transform2D(Vector2(1, 2), Vector2(3, 4), Vector2(5, 6))])
	v.append(["vector4", Vector4(1, 2.5, -3, 4)])
	v.append(["vector4i", Vector4i(1, -2, 3, -4)])
	v.append(["plane", Plane(0, 1, 0, 4.5)])
	v.append(["quaternion", Quaternion(0, 0, 0.70710678, 0.70710678)])
	v.append(["aabb", AABB(Vector3(1, 2, 3), Vector3(4, 5, 6))])
	v.append(["basis", Basis(Vector3(1, 2, 3), Vector3(4, 5, 6), Vector3(7, 8, 9))])
	v.append(["transform3d", Transform3D(Basis.IDENTITY, Vector3(10, 11, 12))])
	v.append(["projection", Projection(Vector4(1, 2, 3, 4), Vector4(5, 6, 7, 8), Vector4(9, 10, 11, 12), Vector4(13, 14, 15, 16))])
	v.append(["projection_identity", Projection.IDENTITY])
	v.append(["color", Color(0.25, 0.5, 0.75, 1)])
	v.append(["string_name", &"player_name"])
	v.append(["string_name_empty", &""])
	v.append(["nodepath_relative", NodePath("a/b")])
	v.append(["nodepath_absolute", NodePath("/root/Main/Player")])
	v.append(["nodepath_subnames", NodePath("Player/Model:transform:origin")])
	v.append(["nodepath_property_only", NodePath(":position")])
	v.append(["nodepath_dotdot", NodePath("../Enemy")])
	v.append(["nodepath_empty", NodePath("")])
	v.append(["rid_empty", RID()])
	v.append(["rid_from_int64", rid_from_int64(1234567890123)])
	v.append(["rid_physics_body", body])
	v.append(["object_refcounted_as_id", ref])
	v.append(["object_node_as_id", node])
	v.append(["object_null", null_obj])
	v.append(["object_freed", freed])
	v.append(["callable_method", Callable(owner_node, "_process")])
	v.append(["callable_lambda", func(): return 1])
	v.append(["callable_empty", Callable()])
	v.append(["signal", Signal(owner_node, "tree_exiting")])
	v.append(["signal_empty", Signal()])
	v.append(["dict_empty", {}])
	v.append(["dict_mixed_keys", {"a": 1, 2: "b", Vector2(1, 1): null, &"sn": [1]}])
	v.append(["dict_nested", {"k": {"x": [1, 2], "y": {"z": true}}, "e": {}}])
	v.append(["array_empty", []])
	v.append(["array_mixed", [1, "x", 2.5, null, true, Vector3(0, 1, 0), &"n", Vector2i(1, 1)]])
	v.append(["array_nested", [[1], [[2]], [], [{"deep": [3]}]]])
	v.append(["typed_array_int", ta_int])
	v.append(["typed_array_string", ta_str])
	v.append(["typed_array_vector2", ta_vec2])
	v.append(["typed_array_int_empty", ta_empty])
	v.append(["typed_array_node", ta_node])
	v.append(["typed_dict_string_int", td_str_int])
	v.append(["typed_dict_int_vector3", td_int_vec3])
	v.append(["typed_dict_stringname_variant", td_sn_variant])
	v.append(["typed_dict_string_int_empty", td_empty])
	v.append(["packed_byte_array", PackedByteArray([0, 1, 2, 127, 128, 255])])
	v.append(["packed_byte_array_3", PackedByteArray([1, 2, 3])])
	v.append(["packed_byte_array_empty", PackedByteArray()])
	v.append(["packed_int32_array", PackedInt32Array([1, -2, 2147483647, -2147483648])])
	v.append(["packed_int64_array", PackedInt64Array([1, -2, 9223372036854775807, -9223372036854775807 - 1])])
	v.append(["packed_float32_array", PackedFloat32Array([1.5, -0.25, 0.1])])
	v.append(["packed_float64_array", PackedFloat64Array([1.5, 0.1, 1.0 / 3.0, -INF])])
	v.append(["packed_string_array", PackedStringArray(["ab", "cde", "", "\u00e9", "abcd"])])
	v.append(["packed_vector2_array", PackedVector2Array([Vector2(1, 2), Vector2(-3, 4.5)])])
	v.append(["packed_vector3_array", PackedVector3Array([Vector3(1, 2, 3), Vector3(-1, -2, -3)])])
	v.append(["packed_color_array", PackedColorArray([Color(1, 0, 0, 1), Color(0, 0, 1, 0.5)])])
	v.append(["packed_vector4_array", PackedVector4Array([Vector4(1, 2, 3, 4), Vector4(-1, 0.5, 0, 1e10)])])
	for i in range(3):
		v.append(["game_state_%d" % i, game_state(i)])
	v.append(["game_input", {"seq": 1234, "t": 0.016, "keys": PackedStringArray(["up", "fire"]), "aim": Vector2(0.5, -0.5)}])
	v.append(["game_event", ["spawn", 42, "res://enemy.tscn", Transform2D(0.5, Vector2(100, 200))]])
	return v


static func game_state(i: int) -> Dictionary:
	return {
		"tick": 1000 + i,
		"players": [
			{"id": 1, "name": "host", "pos": Vector3(i, 0, -i), "rot": Quaternion(0, 0, 0, 1), "hp": 100 - i, "alive": true},
			{"id": 1837465, "name": "p\u00e9lerin", "pos": Vector3(2.5, 0, 3.25 * i), "rot": Quaternion(0, 0.38268343, 0, 0.92387953), "hp": 0.5 * i, "alive": i != 2},
		],
		"projectiles": PackedVector3Array([Vector3(1, 1, 1), Vector3(i, i, i)]),
		"score": {"red": 3, "blue": i},
	}


static func big_byte_array(n: int) -> PackedByteArray:
	var b := PackedByteArray()
	b.resize(n)
	for i in range(n):
		b[i] = (i * 7 + (i >> 8)) & 0xFF
	return b


static func big_array(n: int) -> Array:
	var a := []
	for i in range(n):
		match i % 5:
			0: a.append(i)
			1: a.append("item_%d" % i)
			2: a.append(Vector3(i, -i, 0.5))
			3: a.append({"i": i})
			_: a.append(i * 0.25)
	return a
