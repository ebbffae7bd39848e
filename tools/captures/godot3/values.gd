extends Reference
# The values both transports send (godot3-udp-all-types, godot3-tcp-stream).  Every Godot 3 Variant
# type appears at least once; labels go into the goldens so a reader can tell cases apart.
# Godot 3's tokenizer rounds long float literals, so exact float64 values are computed.


static func all_types(keep):
	# `keep` holds objects alive (the Reference sent as id must exist while it is sent).
	var ref = Reference.new()
	keep.append(ref)
	var node = Node.new()
	node.name = "Sent"
	keep.append(node)
	var body = Physics2DServer.body_create()
	keep.append(body)
	var v = []
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
	v.append(["float64_1e300", pow(10.0, 300)])
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
	v.append(["rect2", Rect2(1, 2, 3, 4)])
	v.append(["vector3", Vector3(1, 2, 3)])
	v.append(["transform2d", Transform2D(Vector2(1, 2), Vector2(3, 4), Vector2(5, 6))])
	v.append(["plane", Plane(0, 1, 0, 4.5)])
	v.append(["quat", Quat(0, 0, 0.70710678, 0.70710678)])
	v.append(["aabb", AABB(Vector3(1, 2, 3), Vector3(4, 5, 6))])
	v.append(["basis", Basis(Vector3(1, 2, 3), Vector3(4, 5, 6), Vector3(7, 8, 9))])
	v.append(["transform", Transform(Basis(Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1)), Vector3(10, 11, 12))])
	v.append(["color", Color(0.25, 0.5, 0.75, 1)])
	v.append(["nodepath_relative", NodePath("a/b")])
	v.append(["nodepath_absolute", NodePath("/root/Main/Player")])
	v.append(["nodepath_subnames", NodePath("Player/Model:transform:origin")])
	v.append(["nodepath_property_only", NodePath(":position")])
	v.append(["nodepath_dotdot", NodePath("../Enemy")])
	v.append(["nodepath_empty", NodePath("")])
	v.append(["rid_empty", RID()])
	v.append(["rid_physics_body", body])
	v.append(["object_reference_as_id", ref])
	v.append(["object_node_as_id", node])
	v.append(["dict_empty", {}])
	v.append(["dict_mixed_keys", {"a": 1, 2: "b", Vector2(1, 1): null}])
	v.append(["dict_nested", {"k": {"x": [1, 2], "y": {"z": true}}, "e": {}}])
	v.append(["array_empty", []])
	v.append(["array_mixed", [1, "x", 2.5, null, true, Vector3(0, 1, 0)]])
	v.append(["array_nested", [[1], [[2]], [], [{"deep": [3]}]]])
	v.append(["pool_byte_array", PoolByteArray([0, 1, 2, 127, 128, 255])])
	v.append(["pool_byte_array_3", PoolByteArray([1, 2, 3])])
	v.append(["pool_byte_array_empty", PoolByteArray()])
	v.append(["pool_int_array", PoolIntArray([1, -2, 2147483647, -2147483648])])
	v.append(["pool_real_array", PoolRealArray([1.5, -0.25, 0.1])])
	v.append(["pool_string_array", PoolStringArray(["ab", "cde", "", "\u00e9", "abcd"])])
	v.append(["pool_vector2_array", PoolVector2Array([Vector2(1, 2), Vector2(-3, 4.5)])])
	v.append(["pool_vector3_array", PoolVector3Array([Vector3(1, 2, 3), Vector3(-1, -2, -3)])])
	v.append(["pool_color_array", PoolColorArray([Color(1, 0, 0, 1), Color(0, 0, 1, 0.5)])])
	for i in range(3):
		v.append(["game_state_%d" % i, game_state(i)])
	v.append(["game_input", {"seq": 1234, "t": 0.016, "keys": PoolStringArray(["up", "fire"]), "aim": Vector2(0.5, -0.5)}])
	v.append(["game_event", ["spawn", 42, "res://enemy.tscn", Transform2D(0.5, Vector2(100, 200))]])
	return v


static func game_state(i):
	return {
		"tick": 1000 + i,
		"players": [
			{"id": 1, "name": "host", "pos": Vector3(i, 0, -i), "rot": Quat(0, 0, 0, 1), "hp": 100 - i, "alive": true},
			{"id": 1837465, "name": "p\u00e9lerin", "pos": Vector3(2.5, 0, 3.25 * i), "rot": Quat(0, 0.38268343, 0, 0.92387953), "hp": 0.5 * i, "alive": i != 2},
		],
		"projectiles": PoolVector3Array([Vector3(1, 1, 1), Vector3(i, i, i)]),
		"score": {"red": 3, "blue": i},
	}
