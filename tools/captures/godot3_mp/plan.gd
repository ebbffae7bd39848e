extends Reference
# The script all three peers follow: one step every STEP_MS after each peer's start time (the server:
# both clients connected; a client: connected and the other client announced).  Each peer runs the
# steps whose actor is its own role ("s" server, "a", "b" clients) and skips the others, so the steps
# happen in this order on the wire.  Targets: "s" = 1, "a"/"b" = that client's id, "-a" = everyone
# but a, 0 = everyone.  Every (sender, kind, name, arguments) is unique: the driver matches the
# engines' prints to the packets by it.

const STEP_MS = 150
const RELIABLE = NetworkedMultiplayerPeer.TRANSFER_MODE_RELIABLE
const UNRELIABLE = NetworkedMultiplayerPeer.TRANSFER_MODE_UNRELIABLE
const UNRELIABLE_ORDERED = NetworkedMultiplayerPeer.TRANSFER_MODE_UNRELIABLE_ORDERED


static func rpc(actor, node, target, name, args, unreliable = false, channel = 0):
	return {"actor": actor, "op": "rpc", "node": node, "target": target, "name": name, "args": args,
		"unreliable": unreliable, "channel": channel}


static func rset(actor, node, target, name, value, unreliable = false):
	return {"actor": actor, "op": "rset", "node": node, "target": target, "name": name, "args": [value],
		"unreliable": unreliable, "channel": 0}


static func raw(actor, target, data, mode):
	return {"actor": actor, "op": "raw", "target": target, "args": [data], "mode": mode}


static func bytes_pattern(n, mul, add):
	var b = PoolByteArray()
	b.resize(n)
	for i in range(n):
		b[i] = (i * mul + add) % 256
	return b


static func all_types():
	return [
		-123456,
		9007199254740993,  # > 2^53: the 64-bit int form
		0.5,
		1.0 / 3.0,  # needs float64
		"h\u00e9llo \u2713 w\u00f6rld",
		Vector3(1.5, -2, 3.25),
		Color(0.2, 0.4, 0.6, 0.8),
		{"name": "a", "hp": 100, "pos": Vector2(1, 2), 7: [true, null]},
		[1, "two", 3.5, Vector2(4, 5), {"k": "v"}],
		PoolIntArray([1, -2, 2147483647]),
		PoolStringArray(["x", "yz", "\u2713"]),
		NodePath("Main/World/Players/Host:position"),
		null,
	]


static func more_types():
	return [
		PoolRealArray([0.5, -1.25]),
		PoolVector2Array([Vector2(1, 2), Vector2(3, 4)]),
		PoolVector3Array([Vector3(1, 2, 3)]),
		PoolColorArray([Color(1, 0, 0, 1), Color(0, 0, 1, 0.5)]),
		Transform(Basis(), Vector3(1, 2, 3)),
		Transform2D(0.0, Vector2(5, 6)),
		Rect2(1, 2, 3, 4),
		Quat(0, 0, 0, 1),
		Basis(Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1)),
		AABB(Vector3(0, 0, 0), Vector3(1, 1, 1)),
		Plane(0, 1, 0, 2),
		true,
	]


static func steps(a_id):
	var main = "Main"
	var host = "Main/World/Players/Host"
	var guest = "Main/World/Players/Guest"
	return [
		# first calls on each node: SIMPLIFY_PATH to every receiver, then the call with the full path
		rpc("s", main, 0, "spawned", ["Guest", a_id, Vector3(0, 1, 2)]),
		rpc("a", main, 0, "chat", ["hello from a", Color(1, 0, 0)]),
		rpc("b", main, "s", "request_spawn", ["ship", Vector2(3, 4)]),
		# paths confirmed: the cached id
		rpc("s", main, "a", "chat", ["welcome a", Color(0, 1, 0)]),
		rpc("a", main, 0, "chat", ["hello again from a", Color(0, 0, 1)]),
		rpc("a", guest, 0, "move", [Vector3(1.5, 0, -2), 1], true),
		rpc("a", guest, 0, "move", [Vector3(2, 0, -2), 2], true),
		rset("s", host, 0, "hp", 75),
		rset("s", host, "b", "hp", 60),
		rset("s", host, 0, "pos", Vector3(0, 1, 0), true),
		rset("a", host, "s", "aim", Vector2(0.5, -0.25)),
		rset("b", host, 0, "label", "b was here"),
		rpc("a", main, 0, "announce", ["a is ready"]),
		rpc("s", main, 0, "tick", [42]),
		rset("a", guest, 0, "score", 3),
		rpc("b", main, "s", "ping", []),
		rpc("a", main, "s", "all_types", all_types()),
		rpc("s", main, "b", "more_types", more_types()),
		# client to client, relayed by the server
		rpc("b", main, "a", "chat", ["psst a", Color(1, 1, 0)]),
		rpc("b", main, "a", "chat", ["psst a, unreliable", Color(0, 1, 1)], true),
		rpc("s", main, "-a", "chat", ["not for a", Color(1, 0, 1)]),
		raw("a", "s", PoolByteArray([1, 2, 3, 255]), RELIABLE),
		raw("s", "a", "server raw \u2713".to_utf8(), RELIABLE),
		raw("b", "a", PoolByteArray([0, 66, 0]), UNRELIABLE_ORDERED),
		# larger than the ENet MTU: fragments (reliable ones, even for rpc_unreliable, in 3.x)
		rpc("s", main, "a", "blob", [bytes_pattern(5000, 7, 3)]),
		rpc("a", main, "s", "blob", [bytes_pattern(5000, 13, 1)], true),
		# NetworkedMultiplayerENet.transfer_channel (ENet only)
		rpc("s", main, "b", "chat", ["reliable on channel 2", Color(0.5, 0.5, 0.5)], false, 2),
		rpc("b", main, "s", "chat", ["unreliable on channel 1", Color(0.25, 0.25, 0.25)], true, 1),
		{"actor": "b", "op": "close"},
		{"actor": "a", "op": "close"},
	]


# The plan of godot3-enet-compressed (GDX_PLAN=compressed): the server and one client "a", the same
# pair once per NetworkedMultiplayerENet.compression_mode.  Arguments that compress (repeated text, byte
# patterns, a Dictionary with repeated keys), a few small packets that may stay uncompressed (ENet keeps
# the compressed form only when it is shorter), and a 2400-byte PoolByteArray over the MTU (fragments).
static func repeat(s, n):
	var out = ""
	for i in range(n):
		out += s
	return out


static func world_state():
	var players = {}
	for i in range(8):
		players["player_%d" % i] = {"name": "player %d" % i, "hp": 100 - i, "team": "red" if i % 2 else "blue",
			"pos": Vector2(i, 2 * i)}
	return {"tick": 1234, "players": players}


static func compressed_steps(_a_id):
	var main = "Main"
	var host = "Main/World/Players/Host"
	var guest = "Main/World/Players/Guest"
	return [
		rpc("s", main, 0, "chat", [repeat("compress me! ", 20), Color(1, 0, 0)]),
		rpc("a", main, "s", "chat", [repeat("hello server, ", 16), Color(0, 1, 0)]),
		rpc("s", main, "a", "state", [world_state()]),
		rset("s", host, 0, "label", repeat("label ", 40)),
		rset("s", host, "a", "hp", 75),
		rpc("a", guest, 0, "move", [Vector3(1.5, 0, -2), 1], true),
		raw("a", "s", repeat("raw bytes ", 30).to_utf8(), RELIABLE),
		raw("s", "a", bytes_pattern(300, 3, 5), UNRELIABLE_ORDERED),
		rpc("s", main, "a", "ping", []),
		# over the MTU: 2 reliable SEND_FRAGMENTs, each compressed in its own datagram
		rpc("s", main, "a", "blob", [bytes_pattern(2400, 7, 3)]),
		rset("a", guest, 0, "score", 3),
		{"actor": "a", "op": "close"},
	]
