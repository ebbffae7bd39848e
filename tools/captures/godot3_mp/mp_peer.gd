extends SceneTree
# One peer of the multiplayer captures, run as the main loop:
#   GDX_ROLE=s|a|b  GDX_TRANSPORT=enet|websocket  GDX_PORT=<server port>  GDX_CLIENT_PORT=<client's own UDP port (ENet)>
#   GDX_PLAN=compressed  (optional) plan.gd's compressed_steps: a server and one client ("a") only
#   GDX_PLAN=profile     (optional) profile_plan.gd's steps (server, a and b); each rpc/rset also prints
#       CALLSIZE <n> <var2bytes(args).size()>
#   GDX_COMPRESSION=COMPRESS_RANGE_CODER|COMPRESS_FASTLZ|COMPRESS_ZLIB|COMPRESS_ZSTD  (optional, ENet)
#       NetworkedMultiplayerENet.compression_mode, set before create_server/create_client (both ends
#       must agree: nothing on the wire says which codec) and printed back as COMPRESSION <name> <value>
# Builds the same node tree on every peer (/root/Main, Main/World/Players/Host and .../Guest), connects,
# then follows plan.gd, printing every send and every receive (report.gd).  Quits by itself: after the
# plan (clients), when both clients are gone (server), or at the deadline.

const R = preload("res://report.gd")
const Plan = preload("res://plan.gd")
const ProfilePlan = preload("res://profile_plan.gd")
const MainScript = preload("res://main.gd")
const PlayerScript = preload("res://player.gd")

const DEADLINE_MS = 30000

var role = ""
var transport = ""
var plan = ""  # "" = Plan.steps (server + clients a and b), "compressed" = Plan.compressed_steps (server + a)
var n_clients = 2
var peer = null
var ids = {"s": 1}
var clients = []  # connected client ids, in connection order (server)
var steps = []
var t0 = -1
var step = 0
var send_n = 0
var closed_at = -1
var deadline = 0
var done = false


func _init():
	set_meta("gdx_recv_count", 0)
	role = OS.get_environment("GDX_ROLE")
	transport = OS.get_environment("GDX_TRANSPORT")
	plan = OS.get_environment("GDX_PLAN")
	if plan == "compressed":
		n_clients = 1
	Engine.target_fps = 100  # poll every ~10 ms instead of spinning a core
	deadline = OS.get_ticks_msec() + DEADLINE_MS
	_build_tree()
	connect("network_peer_connected", self, "_on_peer_connected")
	connect("network_peer_disconnected", self, "_on_peer_disconnected")
	connect("connection_failed", self, "_on_failed")
	connect("server_disconnected", self, "_on_server_gone")
	multiplayer.connect("network_peer_packet", self, "_on_raw")
	var port = int(OS.get_environment("GDX_PORT"))
	var err = _create_peer(port)
	if err != OK:
		R.out("FATAL\tcreate peer: %d" % err)
		done = true
		quit()
		return
	network_peer = peer
	if role == "s":
		R.out("ME\ts\t1")
		R.out("READY")


func _build_tree():
	var main = Node.new()
	main.name = "Main"
	main.set_script(MainScript)
	root.add_child(main)
	var world = Node.new()
	world.name = "World"
	main.add_child(world)
	var players = Node.new()
	players.name = "Players"
	world.add_child(players)
	for n in ["Host", "Guest"]:
		var p = Node.new()
		p.name = n
		p.set_script(PlayerScript)
		players.add_child(p)


func _create_peer(port):
	if transport == "enet":
		peer = NetworkedMultiplayerENet.new()
		var compression = OS.get_environment("GDX_COMPRESSION")
		if compression != "":
			if not ClassDB.class_has_integer_constant("NetworkedMultiplayerENet", compression):
				return ERR_INVALID_PARAMETER
			peer.compression_mode = ClassDB.class_get_integer_constant("NetworkedMultiplayerENet", compression)
			R.out("COMPRESSION\t%s\t%d" % [compression, peer.compression_mode])
		if role == "s":
			peer.set_bind_ip("127.0.0.1")
			return peer.create_server(port, 4)
		return peer.create_client("127.0.0.1", port, 0, 0, int(OS.get_environment("GDX_CLIENT_PORT")))
	if role == "s":
		peer = WebSocketServer.new()
		peer.bind_ip = "127.0.0.1"
		return peer.listen(port, PoolStringArray(), true)
	peer = WebSocketClient.new()
	return peer.connect_to_url("ws://127.0.0.1:%d" % port, PoolStringArray(), true)


func _on_peer_connected(id):
	var port = peer.get_peer_port(id) if role == "s" else -1
	R.out("PEER\tconnected\t%d\t%d\t%d" % [id, OS.get_system_time_msecs(), port])
	if role == "s":
		clients.append(id)
		if clients.size() == 1:
			ids["a"] = id
		elif clients.size() == 2:
			ids["b"] = id
	elif id != 1:
		ids["b" if role == "a" else "a"] = id


func _on_peer_disconnected(id):
	R.out("PEER\tdisconnected\t%d\t%d\t-1" % [id, OS.get_system_time_msecs()])
	clients.erase(id)


func _on_failed():
	if closed_at >= 0:  # the 3.2.3 WebSocketClient reports its own close as a failed connection
		R.info("connection_failed after close")
		return
	R.out("FATAL\tconnection failed")
	_finish()


func _on_server_gone():
	R.info("server_disconnected")


func _on_raw(id, packet):
	R.recv_raw(self, id, packet)


func _started():
	if role == "s":
		return clients.size() == n_clients
	if peer.get_connection_status() != NetworkedMultiplayerPeer.CONNECTION_CONNECTED:
		return false
	if get_network_unique_id() == 0:  # WebSocket: connected, but the server's SYS_ID not read yet
		return false
	if not ids.has(role):
		ids[role] = get_network_unique_id()
		R.out("ME\t%s\t%d" % [role, ids[role]])
		R.out("CONNECTED")
	return ids.has("a") and (n_clients == 1 or ids.has("b"))


func _idle(_delta):
	if done:
		return
	var now = OS.get_ticks_msec()
	if now > deadline:
		R.out("FATAL\tdeadline reached at step %d" % step)
		_finish()
		return
	if t0 < 0:
		if not _started():
			return
		t0 = now
		R.out("START\t%d\t%d" % [ids["a"], ids.get("b", 0)])
		if plan == "profile":
			steps = ProfilePlan.steps()
		else:
			steps = Plan.compressed_steps(ids["a"]) if plan == "compressed" else Plan.steps(ids["a"])
		# Guest belongs to client a on every peer (spawned() says so again, as games do).
		root.get_node("Main/World/Players/Guest").set_network_master(ids["a"])
	while step < steps.size() and now >= t0 + step * Plan.STEP_MS:
		var s = steps[step]
		step += 1
		if s["actor"] == role:
			_run_step(s)
	if step < steps.size():
		return
	if role == "s":
		if clients.empty():
			if closed_at < 0:
				_close()
				closed_at = now
			elif now > closed_at + 200:
				_finish()
	elif closed_at >= 0 and now > closed_at + 300:
		_finish()


func _target(t):
	if typeof(t) == TYPE_INT:
		return t
	if t.begins_with("-"):
		return -ids[t.substr(1, 9)]
	return ids[t]


func _run_step(s):
	match s["op"]:
		"rpc", "rset":
			var node = root.get_node(s["node"])
			var target = _target(s["target"])
			# transfer_channel: -1 (the 3.2.3 default) = the channel of the transfer mode
			var channel = s["channel"] if transport == "enet" and s["channel"] > 0 else -1
			if channel > 0:
				peer.transfer_channel = channel
			R.send(send_n, s["op"], s["node"], s["name"], target, int(s["unreliable"]), channel, s["args"])
			if plan == "profile":
				R.out("CALLSIZE\t%d\t%d" % [send_n, var2bytes(s["args"]).size()])
			send_n += 1
			var m = s["op"]
			if s["unreliable"]:
				m += "_unreliable"
			if target == 0:
				node.callv(m, [s["name"]] + s["args"])
			else:
				node.callv(m + "_id", [target, s["name"]] + s["args"])
			if channel > 0:
				peer.transfer_channel = -1
		"raw":
			var target = _target(s["target"])
			R.send_raw(send_n, s["args"][0], target, s["mode"], peer.transfer_channel if transport == "enet" else -1)
			send_n += 1
			var err = multiplayer.send_bytes(s["args"][0], target, s["mode"])
			if err != OK:
				R.out("FATAL\tsend_bytes: %d" % err)
		"close":
			_close()
			closed_at = OS.get_ticks_msec()


func _close():
	R.out("CLOSE\t%d" % OS.get_system_time_msecs())
	if transport == "enet":
		peer.close_connection()
	elif role == "s":
		peer.stop()
	else:
		peer.disconnect_from_host(1000, "bye")


func _finish():
	if done:
		return
	done = true
	R.out("DONE")
	quit()
