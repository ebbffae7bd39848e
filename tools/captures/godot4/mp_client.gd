extends Node
# godot4-websocket-multiplayer, the Godot side: WebSocketMultiplayerPeer.create_client() +
# SceneMultiplayer against our stand-in server (make_godot4_captures.py).  This script is the main
# scene's root, /root/Main; its @rpc methods (sorted by name they get the method ids 0..N-1) are
# called on the server (peer 1), and the server sends each REMOTE_CALL packet back unchanged, so the
# engine decodes every call it sent and prints what it got (GOT lines).
#
#   CALL <i> <target peer> <method> <argc>        before rpc_id(); then one ARG line per argument
#   GOT <i> <sender> <method> <argc>              inside the called method; then ARG lines
#   ARG <fields>                                  (report.gd)
#   RAW_SENT <hex> / RAW_GOT <sender> <hex>       send_bytes() / peer_packet
#   PEER <connected|disconnected> <id>, ID <unique id>, DONE, FATAL <text hex>
#
# Order: two calls in the first frame after connecting (full node path: the server has not yet
# confirmed the path), wait 400 ms (CONFIRM_PATH arrives: later calls use the cached node id), one
# call per frame, send_bytes(); the server answers RAW and announces peer 5 (SYS ADD_PEER), which the
# client calls through the server relay (SYS RELAY); the server removes it (DEL_PEER); close.

const R = preload("res://report.gd")
const DEADLINE_MS := 40000

var peer := WebSocketMultiplayerPeer.new()
var phase := "connecting"
var started_ms := 0
var wait_until := 0
var calls: Array = []  # [method, args]
var sent_calls := 0
var echoes := 0
var raw_replies := 0
var peer5_done := false
var call_index := 0


func _ready() -> void:
	started_ms = Time.get_ticks_msec()
	var cfg: Dictionary = JSON.parse_string(FileAccess.get_file_as_string("res://config.json"))
	var vi := Engine.get_version_info()
	R.out("INFO\t" + R.hx("engine %s" % vi["string"]))
	R.out("INFO\t" + R.hx("path %s" % str(get_path())))
	peer.inbound_buffer_size = 1 << 21
	peer.outbound_buffer_size = 1 << 21
	var err := peer.create_client("ws://127.0.0.1:%d" % int(cfg["port"]))
	if err != OK:
		_fatal("create_client: %d" % err)
		return
	multiplayer.multiplayer_peer = peer
	multiplayer.connected_to_server.connect(_on_connected)
	multiplayer.connection_failed.connect(func(): _fatal("connection_failed"))
	multiplayer.server_disconnected.connect(_on_server_disconnected)
	multiplayer.peer_connected.connect(_on_peer_connected)
	multiplayer.peer_disconnected.connect(_on_peer_disconnected)
	(multiplayer as SceneMultiplayer).peer_packet.connect(_on_raw)
	calls = [
		["chat", ["hello \u2713", Color(1, 0, 0, 1)]],
		["move", [Vector3(1.5, 0, -2), Vector2(0.5, 0), 1001]],
		["misc", [true, false, 5, -300, 70000, 1 << 40, -(1 << 40), 0.5, 0.1, "str", &"sname",
			NodePath("a/b:c"), [1, "a", Vector2i(2, 3)], {"k": PackedInt32Array([1, 2])}, null]],
		["ping", []],
		["blob", [PackedByteArray([1, 2, 3, 250])]],
		["set_state", [_game_state(0)]],
		["move", [Vector3(2, 0, -2), Vector2(0.5, 0.25), 1002]],
		["set_state", [_big_state()]],
		["chat", ["", Color(0, 0, 0, 0)]],
	]


func _game_state(i: int) -> Dictionary:
	return {"tick": 2000 + i, "players": [{"id": 1, "pos": Vector3(i, 0, 0), "hp": 100}],
		"flags": PackedStringArray(["a", "b"])}


func _big_state() -> Dictionary:
	var pts := PackedVector3Array()
	for i in range(2000):
		pts.append(Vector3(i, i * 0.5, -i))
	return {"tick": 3000, "trail": pts}


func _fatal(msg: String) -> void:
	R.out("FATAL\t" + R.hx(msg))
	phase = "done"
	get_tree().quit(1)


func _args(args: Array) -> void:
	for a in args:
		R.out("ARG\t" + R.fields(a))


func _call(target: int, method: String, args: Array) -> void:
	R.out("CALL\t%d\t%d\t%s\t%d" % [call_index, target, method, args.size()])
	_args(args)
	call_index += 1
	var err: Error = rpc_id.callv([target, method] + args)
	if err != OK:
		_fatal("rpc_id %s: %d" % [method, err])


func _got(method: String, args: Array) -> void:
	R.out("GOT\t%d\t%d\t%s\t%d" % [echoes, multiplayer.get_remote_sender_id(), method, args.size()])
	_args(args)
	echoes += 1


# ---- the RPC methods (ids: blob 0, chat 1, misc 2, move 3, ping 4, set_state 5)

@rpc("any_peer", "call_remote", "reliable")
func chat(msg, color) -> void:
	_got("chat", [msg, color])


@rpc("any_peer")
func move(pos, vel, tick) -> void:
	_got("move", [pos, vel, tick])


@rpc("any_peer", "call_remote", "unreliable_ordered")
func set_state(state) -> void:
	_got("set_state", [state])


@rpc("any_peer")
func ping() -> void:
	_got("ping", [])


@rpc("any_peer")
func blob(data) -> void:
	_got("blob", [data])


@rpc("any_peer", "call_remote", "unreliable")
func misc(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o) -> void:
	_got("misc", [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o])


# ---- connection events

func _on_connected() -> void:
	R.out("ID\t%d" % multiplayer.get_unique_id())
	phase = "calls_a"


func _on_server_disconnected() -> void:
	if phase != "done":
		_fatal("server_disconnected")


func _on_peer_connected(id: int) -> void:
	R.out("PEER\tconnected\t%d" % id)
	if id == 5:
		_call(5, "chat", ["hi peer 5 via the server", Color(0, 0, 1, 1)])


func _on_peer_disconnected(id: int) -> void:
	R.out("PEER\tdisconnected\t%d" % id)
	if id == 5:
		peer5_done = true


func _on_raw(id: int, packet: PackedByteArray) -> void:
	R.out("RAW_GOT\t%d\t%s" % [id, packet.hex_encode()])
	raw_replies += 1


func _process(_delta: float) -> void:
	if phase == "done":
		return
	if Time.get_ticks_msec() - started_ms > DEADLINE_MS:
		_fatal("deadline in phase %s (calls %d, echoes %d, raw %d)" % [phase, sent_calls, echoes, raw_replies])
		return
	match phase:
		"calls_a":
			for _k in range(2):
				var c: Array = calls.pop_front()
				_call(1, c[0], c[1])
				sent_calls += 1
			phase = "wait_confirm"
			wait_until = Time.get_ticks_msec() + 400
		"wait_confirm":
			if Time.get_ticks_msec() >= wait_until:
				phase = "calls_b"
		"calls_b":
			if calls.is_empty():
				var raw := "raw bytes \u2713".to_utf8_buffer()
				R.out("RAW_SENT\t" + raw.hex_encode())
				(multiplayer as SceneMultiplayer).send_bytes(raw, 1)
				phase = "wait"
			else:
				var c: Array = calls.pop_front()
				_call(1, c[0], c[1])
				sent_calls += 1
		"wait":
			if echoes == sent_calls and raw_replies == 1 and peer5_done:
				R.out("DONE\t%d\t%d" % [sent_calls, echoes])
				phase = "done"
				peer.close()
				multiplayer.multiplayer_peer = null
				get_tree().create_timer(0.3).timeout.connect(func(): get_tree().quit(0))
