extends Node
# godot4-scenemultiplayer: SceneMultiplayer packets made by the engine itself, in one process.
#
# Three SceneMultiplayer instances, each assigned to its own subtree with
# get_tree().set_multiplayer(): /root/Main/Server (peer 1), /root/Main/ClientA and /root/Main/ClientB.
# Their MultiplayerPeers are loop_peer.gd (MultiplayerPeerExtension) joined by wire.gd, which prints
# every packet (PKT) and delivers it.  The subtrees are identical (Game with @rpc methods, Mid/Far/
# Burner, Players + Spawner, Lamp + Sync), so node paths relative to each multiplayer root match.
# Polling is manual (multiplayer_poll off): one scenario step per frame, then poll server, A, B in
# turn until the wire is empty, so the packet order is the same on every run.
#
# What the receiving side printed is tagged with the seq of the packet it was processing:
#   GOT <seq> <uid> <sender> <node path> <method> <argc>      inside an RPC method; ARG lines follow
#   CALL <uid> <target> <node path> <method> <argc>            before rpc()/rpc_id(); ARG lines follow
#   RAW_SENT <uid> <target> <mode> <channel> <hex> / RAW_GOT <seq> <uid> <from> <hex>
#   AUTH_SENT <uid> <to> <hex> / AUTH_GOT <seq> <uid> <from> <hex> / AUTHENTICATING <seq> <uid> <id>
#   PEER <seq> <uid> connected|disconnected <id> / CONNECTED_TO_SERVER <seq> <uid> /
#   SERVER_DISCONNECTED <seq> <uid>
#   SPAWN_FN <seq> <uid> + ARG (the spawn data given to spawn_function)
#   SPAWNED <seq> <uid> <spawner path> <name> <scene file hex> <n> + n PROP lines (spawn properties)
#   DESPAWNED <seq> <uid> <spawner path> <name>
#   SYNCED / DELTA <seq> <uid> <synchronizer path> <n> + n PROP lines (sync / watched properties)
#   PROP <property path hex> <fields>           (fields: report.gd)
#   RPCS <node path> <md5 of the names in id order> <n> + n RPC <id> <name> <rpc_mode> <transfer_mode> <call_local> <channel>
#   STEP <i> <label hex>, SINK <sink id> <packets> <bytes> <last cache id>, INFO, DONE, FATAL

const R = preload("res://report.gd")
const Wire = preload("res://wire.gd")
const LoopPeer = preload("res://loop_peer.gd")
const GameScript = preload("res://game.gd")
const TargetScript = preload("res://target.gd")
const LampScript = preload("res://lamp.gd")
const CrateScript = preload("res://crate.gd")
const PlayerScene = preload("res://player.tscn")

const SERVER := 1
const A := 1148712133  # client ids as ENetMultiplayerPeer would draw them: random, 31-bit
const B := 739342
const SINK := 99  # see step "burn": a peer whose packets are dropped unrecorded
const QUIET := 1000000.0  # replication_interval (s) while no SYNC is wanted
const U16_CACHE_ID := 300  # the server's path-cache id given to Game/Mid
const U32_CACHE_ID := 65600  # ... and to Game/Far

var wire: RefCounted
var mps := {}  # uid -> SceneMultiplayer
var worlds := {}  # uid -> root of that peer's subtree
var steps: Array = []
var step_i := 0
var finished := false


func _ready() -> void:
	get_tree().multiplayer_poll = false
	R.out("INFO\t" + R.hx("engine %s" % Engine.get_version_info()["string"]))
	wire = Wire.new()
	wire.sink_id = SINK
	for uid in [SERVER, A, B, SINK]:
		wire.add(LoopPeer.new(wire, uid))
	for pair in [[SERVER, "Server"], [A, "ClientA"], [B, "ClientB"]]:
		var uid: int = pair[0]
		var mp := SceneMultiplayer.new()
		mp.multiplayer_peer = wire.peers[uid]
		get_tree().set_multiplayer(mp, NodePath("/root/Main/" + pair[1]))
		_watch(mp, uid)
		mps[uid] = mp
		var w := _make_world(pair[1], uid)
		worlds[uid] = w
		add_child(w)
	for path in ["Game", "Game/Mid", "Game/Far", "Game/Burner", "Game/Spawner", "Game/Lamp/Sync"]:
		_print_rpc_table(path, worlds[SERVER].get_node(path))
	steps = _scenario()


func _process(_delta: float) -> void:
	if finished:
		return
	if step_i >= steps.size():
		finished = true
		# Detach the peers first: nodes leaving the tree at quit would otherwise send DESPAWNs.
		for uid in mps:
			mps[uid].multiplayer_peer = null
		wire.peers.clear()  # the peers and the wire refer to each other
		R.out("SINK\t%d\t%d\t%d\t%d" % [SINK, wire.sink_packets, wire.sink_bytes, wire.sink_last_cache_id])
		R.out("DONE\t%d" % wire.seq)
		get_tree().quit(0)
		return
	var s: Array = steps[step_i]
	wire.step = s[0]
	R.out("STEP\t%d\t%s" % [step_i, R.hx(s[0])])
	step_i += 1
	s[1].call()
	if not finished:
		_pump()


# ---- the world each peer has (same node names everywhere)

func _make_world(role: String, uid: int) -> Node:
	var root := Node.new()
	root.name = role
	var game := Node.new()
	game.name = "Game"
	game.set_script(GameScript)
	root.add_child(game)
	for n in ["Mid", "Far", "Burner"]:
		var t := Node.new()
		t.name = n
		t.set_script(TargetScript)
		game.add_child(t)
	var players := Node.new()
	players.name = "Players"
	game.add_child(players)
	var spawner := MultiplayerSpawner.new()
	spawner.name = "Spawner"
	spawner.spawn_path = NodePath("../Players")
	spawner.add_spawnable_scene(PlayerScene.resource_path)
	spawner.spawn_function = _spawn_custom.bind(uid)
	spawner.spawned.connect(_on_spawned.bind(uid, spawner))
	spawner.despawned.connect(_on_despawned.bind(uid, spawner))
	game.add_child(spawner)
	var lamp := Node2D.new()
	lamp.name = "Lamp"
	lamp.set_script(LampScript)
	game.add_child(lamp)
	var sync := MultiplayerSynchronizer.new()
	sync.name = "Sync"
	sync.replication_config = _config([[".:on", false, SceneReplicationConfig.REPLICATION_MODE_ALWAYS],
		[".:color", false, SceneReplicationConfig.REPLICATION_MODE_ON_CHANGE]])
	sync.replication_interval = QUIET
	lamp.add_child(sync)
	_watch_sync(sync, uid)
	return root


func _config(props: Array) -> SceneReplicationConfig:
	var cfg := SceneReplicationConfig.new()
	for p in props:
		var path := NodePath(p[0])
		cfg.add_property(path)
		cfg.property_set_spawn(path, p[1])
		cfg.property_set_replication_mode(path, p[2])
	return cfg


func _spawn_custom(data: Variant, uid: int) -> Node:
	R.out("SPAWN_FN\t%d\t%d" % [wire.current(uid), uid])
	R.out("ARG\t" + R.fields(data))
	var c := Node2D.new()
	c.set_script(CrateScript)
	c.name = str(data["name"])
	c.kind = data["kind"]
	c.weight = data["weight"]
	c.position = data["at"]
	var sync := MultiplayerSynchronizer.new()
	sync.name = "Sync"
	sync.replication_config = _config([[".:position", true, SceneReplicationConfig.REPLICATION_MODE_ALWAYS],
		[".:weight", true, SceneReplicationConfig.REPLICATION_MODE_ON_CHANGE],
		[".:kind", true, SceneReplicationConfig.REPLICATION_MODE_NEVER]])
	sync.replication_interval = QUIET
	c.add_child(sync)
	return c


# ---- printing what each side got

func _rel(node: Node) -> String:
	var mp := node.multiplayer as SceneMultiplayer
	return str(worlds[mp.get_unique_id()].get_path_to(node))


func got(node: Node, method: String, args: Array) -> void:
	var mp := node.multiplayer as SceneMultiplayer
	var uid := mp.get_unique_id()
	R.out("GOT\t%d\t%d\t%d\t%s\t%s\t%d" % [wire.current(uid), uid, mp.get_remote_sender_id(), _rel(node), method,
		args.size()])
	for a in args:
		R.out("ARG\t" + R.fields(a))


func _watch(mp: SceneMultiplayer, uid: int) -> void:
	mp.peer_connected.connect(func(id): R.out("PEER\t%d\t%d\tconnected\t%d" % [wire.current(uid), uid, id]))
	mp.peer_disconnected.connect(func(id): R.out("PEER\t%d\t%d\tdisconnected\t%d" % [wire.current(uid), uid, id]))
	mp.connected_to_server.connect(func(): R.out("CONNECTED_TO_SERVER\t%d\t%d" % [wire.current(uid), uid]))
	mp.server_disconnected.connect(func(): R.out("SERVER_DISCONNECTED\t%d\t%d" % [wire.current(uid), uid]))
	mp.connection_failed.connect(func(): _fatal("connection_failed on %d" % uid))
	mp.peer_authentication_failed.connect(func(id): _fatal("authentication of %d failed on %d" % [id, uid]))
	mp.peer_packet.connect(func(id, data: PackedByteArray):
		R.out("RAW_GOT\t%d\t%d\t%d\t%s" % [wire.current(uid), uid, id, data.hex_encode()]))
	mp.peer_authenticating.connect(_on_authenticating.bind(uid))


func _props(root: Node, sync: MultiplayerSynchronizer, which: String) -> Array:
	var out := []
	var cfg := sync.replication_config
	for p: NodePath in cfg.get_properties():
		var mode := cfg.property_get_replication_mode(p)
		var take: bool = (which == "spawn" and cfg.property_get_spawn(p)) \
			or (which == "sync" and mode == SceneReplicationConfig.REPLICATION_MODE_ALWAYS) \
			or (which == "watch" and mode == SceneReplicationConfig.REPLICATION_MODE_ON_CHANGE)
		if take:
			var target: Node = root if p.get_name_count() == 0 else root.get_node(NodePath(p.get_concatenated_names()))
			out.append([str(p), target.get_indexed(NodePath(p.get_concatenated_subnames()))])
	return out


func _print_props(props: Array) -> void:
	for p in props:
		R.out("PROP\t%s\t%s" % [R.hx(p[0]), R.fields(p[1])])


func _watch_sync(sync: MultiplayerSynchronizer, uid: int) -> void:
	sync.synchronized.connect(func():
		var props := _props(sync.get_node(sync.root_path), sync, "sync")
		R.out("SYNCED\t%d\t%d\t%s\t%d" % [wire.current(uid), uid, _rel(sync), props.size()])
		_print_props(props))
	sync.delta_synchronized.connect(func():
		var props := _props(sync.get_node(sync.root_path), sync, "watch")
		R.out("DELTA\t%d\t%d\t%s\t%d" % [wire.current(uid), uid, _rel(sync), props.size()])
		_print_props(props))


func _on_spawned(node: Node, uid: int, spawner: MultiplayerSpawner) -> void:
	var sync := node.get_node("Sync") as MultiplayerSynchronizer
	var props := _props(node, sync, "spawn")
	R.out("SPAWNED\t%d\t%d\t%s\t%s\t%s\t%d" % [wire.current(uid), uid, _rel(spawner), node.name,
		R.hx(node.scene_file_path), props.size()])
	_print_props(props)
	_watch_sync(sync, uid)


func _on_despawned(node: Node, uid: int, spawner: MultiplayerSpawner) -> void:
	R.out("DESPAWNED\t%d\t%d\t%s\t%s" % [wire.current(uid), uid, _rel(spawner), node.name])


func _print_rpc_table(path: String, node: Node) -> void:
	# SceneRPCInterface's ids: node-level config names sorted (id | 0x8000), then the script's @rpc
	# names sorted; the md5 in SIMPLIFY_PATH is over the names in that order.
	var rows := []
	var script: Script = node.get_script()
	var cfgs := [[node.get_node_rpc_config(), 0x8000], [script.get_rpc_config() if script else {}, 0]]
	for c in cfgs:
		var d: Dictionary = c[0] if c[0] is Dictionary else {}
		var names := d.keys().map(func(k): return str(k))
		names.sort()
		for i in range(names.size()):
			var cfg: Dictionary = d[names[i]] if d.has(names[i]) else d[StringName(names[i])]
			rows.append([i | c[1], names[i], cfg])
	var joined := "".join(rows.map(func(r): return r[1]))
	R.out("RPCS\t%s\t%s\t%d" % [path, joined.md5_text(), rows.size()])
	for r in rows:
		var cfg: Dictionary = r[2]
		R.out("RPC\t%d\t%s\t%d\t%d\t%d\t%d" % [r[0], r[1], cfg.get("rpc_mode", 0), cfg.get("transfer_mode", 2),
			int(cfg.get("call_local", false)), cfg.get("channel", 0)])


# ---- auth (SYS AUTH): the server challenges, the client answers; both complete

func _on_authenticating(id: int, uid: int) -> void:
	R.out("AUTHENTICATING\t%d\t%d\t%d" % [wire.current(uid), uid, id])
	if uid == SERVER:
		var data := ("challenge for %d" % id).to_utf8_buffer()
		R.out("AUTH_SENT\t%d\t%d\t%s" % [uid, id, data.hex_encode()])
		_check(mps[uid].send_auth(id, data), "send_auth")


func _server_auth(id: int, data: PackedByteArray) -> void:
	R.out("AUTH_GOT\t%d\t%d\t%d\t%s" % [wire.current(SERVER), SERVER, id, data.hex_encode()])
	_check(mps[SERVER].complete_auth(id), "complete_auth")


func _client_auth(id: int, data: PackedByteArray, uid: int) -> void:
	R.out("AUTH_GOT\t%d\t%d\t%d\t%s" % [wire.current(uid), uid, id, data.hex_encode()])
	var reply := ("answer from %d" % uid).to_utf8_buffer()
	R.out("AUTH_SENT\t%d\t%d\t%s" % [uid, id, reply.hex_encode()])
	_check(mps[uid].send_auth(id, reply), "send_auth")
	_check(mps[uid].complete_auth(id), "complete_auth")


# ---- driving

func _check(err: int, what: String) -> void:
	if err != OK:
		_fatal("%s: error %d" % [what, err])


func _fatal(msg: String) -> void:
	if finished:
		return
	finished = true
	R.out("FATAL\t" + R.hx("step %s: %s" % [wire.step, msg]))
	get_tree().quit(1)


func _pump() -> void:
	for _round in range(100):
		for uid in [SERVER, A, B]:
			mps[uid].poll()
			wire.processing[uid] = -1
		if wire.pending() == 0:
			return
	_fatal("the wire did not settle")


func _call(uid: int, path: String, to: int, method: String, args: Array) -> void:
	var node: Node = worlds[uid].get_node(path)
	R.out("CALL\t%d\t%d\t%s\t%s\t%d" % [uid, to, path, method, args.size()])
	for a in args:
		R.out("ARG\t" + R.fields(a))
	var err: Error
	if to == 0:
		err = node.rpc.callv([method] + args)
	else:
		err = node.rpc_id.callv([to, method] + args)
	_check(err, "rpc %s" % method)


func _raw(uid: int, to: int, data: PackedByteArray, mode := MultiplayerPeer.TRANSFER_MODE_RELIABLE,
		channel := 0) -> void:
	R.out("RAW_SENT\t%d\t%d\t%d\t%d\t%s" % [uid, to, mode, channel, data.hex_encode()])
	_check(mps[uid].send_bytes(data, to, mode, channel), "send_bytes")


func _server_syncs() -> Array:
	var out := []
	for n in worlds[SERVER].find_children("Sync", "MultiplayerSynchronizer", true, false):
		out.append(n)
	return out


func _send_sync_once() -> void:
	# Synchronizers sit at a huge replication_interval; for exactly one server poll they may sync.
	var syncs := _server_syncs()
	for s in syncs:
		s.replication_interval = 0.0
	mps[SERVER].poll()
	wire.processing[SERVER] = -1
	for s in syncs:
		s.replication_interval = QUIET


func _burn(node_path: String, cache_id: int) -> void:
	# Push the server's next path-cache id to `cache_id`, then give it to `node_path`.  Each RPC on
	# Burner to the sink makes the server assign Burner a new cache id (SIMPLIFY_PATH to the sink);
	# leaving and re-entering the tree drops that id.  The sink's packets are not recorded.
	var game: Node = worlds[SERVER].get_node("Game")
	var burner: Node = game.get_node("Burner")
	while wire.sink_last_cache_id < cache_id - 1:
		var err: Error = burner.rpc_id(SINK, "hit", 0)
		if err != OK:
			_fatal("burn rpc: %d" % err)
			return
		game.remove_child(burner)
		game.add_child(burner)
	_check(worlds[SERVER].get_node(node_path).rpc_id(SINK, "hit", 0), "burn target")
	if wire.sink_last_cache_id != cache_id:
		_fatal("%s got cache id %d, wanted %d" % [node_path, wire.sink_last_cache_id, cache_id])


func _scenario() -> Array:
	var s := []
	var game := "Game"
	s.append(["auth + connect A", func():
		mps[SERVER].auth_callback = _server_auth
		for uid in [A, B]:
			mps[uid].auth_callback = _client_auth.bind(uid)
		wire.connect_pair(SERVER, A)])
	s.append(["auth + connect B", func(): wire.connect_pair(SERVER, B)])
	s.append(["A->server before CONFIRM_PATH (full path in the packet)", func():
		_call(A, game, SERVER, "one", [true])
		_call(A, game, SERVER, "ping", [])])
	s.append(["A->server bool and int compression (every width)", func():
		for v in [false, 0, 127, -128, 128, -129, 32767, -32768, 32768, -32769, 2147483647, -2147483648,
				2147483648, -2147483649, 9223372036854775807, -9223372036854775807 - 1]:
			_call(A, game, SERVER, "one", [v])])
	s.append(["A->server other Variants (standard encoding)", func():
		for v in [1.5, 0.1, "h\u00e9llo \u2713", Vector2(1, -2.5), Vector3i(1, -2, 3), Color(1, 0.5, 0, 1),
				&"sname", NodePath("a/b:c"), [1, "a", true, null], {"k": PackedInt32Array([1, 2]), 2: [3.5]},
				null, PackedStringArray(["x", "yz"]), Transform2D(0.5, Vector2(3, 4)), Quaternion(0, 0, 0, 1)]:
			_call(A, game, SERVER, "one", [v])])
	s.append(["A->server several arguments, byte-only forms", func():
		_call(A, game, SERVER, "mixed", [true, 7, -300, 70000, 1 << 40, "s", Vector2(0.5, -1), null])
		_call(A, game, SERVER, "blob", [PackedByteArray([1, 2, 3, 250])])
		_call(A, game, SERVER, "blob", [PackedByteArray()])
		_call(A, game, SERVER, "blob2", [PackedByteArray([9]), 1])
		_call(A, game, SERVER, "ping", [])])
	s.append(["A->server transfer modes and channels", func():
		_call(A, game, SERVER, "fast", [Vector2(1, 1)])
		_call(A, game, SERVER, "ordered", [42])
		_call(A, game, SERVER, "side", ["channel two", 2])
		_call(A, game, SERVER, "side_fast", [-1])])
	s.append(["A->server large packets (fragmented on ENet)", func():
		# over 4096 bytes: report.gd prints size + SHA-256 instead of the value
		var data := PackedByteArray()
		data.resize(5000)
		for i in range(5000):
			data[i] = (i * 7) & 255
		_call(A, game, SERVER, "big", [data])
		var data2 := PackedByteArray()
		data2.resize(4500)
		for i in range(4500):
			data2[i] = (i * 13 + 5) & 255
		_call(A, game, SERVER, "big_fast", [data2])])
	s.append(["A->server node-level rpc_config (16-bit method id)", func():
		_call(A, game, SERVER, "native_cfg", [42])])
	s.append(["server->A before CONFIRM_PATH", func(): _call(SERVER, game, A, "from_server", ["to A"])])
	s.append(["server->all: A confirmed (32-bit id), B not (full path)", func():
		_call(SERVER, game, 0, "from_server", ["to all 1"])])
	s.append(["server->all: both confirmed", func(): _call(SERVER, game, 0, "from_server", ["to all 2"])])
	s.append(["A->B through the server relay, before B confirms", func():
		_call(A, game, B, "chat", ["hi B, from A"])])
	s.append(["A->B through the relay, confirmed", func(): _call(A, game, B, "chat", ["again"])])
	s.append(["B->all through the relay", func(): _call(B, game, 0, "chat", ["hello all, from B"])])
	s.append(["RAW (send_bytes)", func():
		_raw(A, SERVER, "raw from A \u2713".to_utf8_buffer())
		_raw(SERVER, A, "raw from server".to_utf8_buffer())
		_raw(A, B, "raw A->B via relay".to_utf8_buffer())
		_raw(B, SERVER, PackedByteArray([0, 1, 2, 255]), MultiplayerPeer.TRANSFER_MODE_UNRELIABLE_ORDERED, 1)])
	s.append(["spawn from the scene list (scene id 0)", func():
		var p := PlayerScene.instantiate()
		p.name = "PlayerA"
		p.hp = 90
		p.nick = "ann"
		p.position = Vector2(10, -5)
		worlds[SERVER].get_node("Game/Players").add_child(p, true)])
	s.append(["custom spawn (spawn_function, scene id 0xFF)", func():
		var sp: MultiplayerSpawner = worlds[SERVER].get_node("Game/Spawner")
		if sp.spawn({"name": "Crate1", "kind": "ammo", "weight": 12, "at": Vector2(3, 4)}) == null:
			_fatal("spawn() returned null")])
	s.append(["SYNC (unreliable): positions and lamp state", func():
		worlds[SERVER].get_node("Game/Lamp").on = true
		worlds[SERVER].get_node("Game/Players/PlayerA").position = Vector2(11, -5)
		_send_sync_once()])
	s.append(["delta SYNC (on change): hp, weight, color", func():
		worlds[SERVER].get_node("Game/Players/PlayerA").hp = 75
		worlds[SERVER].get_node("Game/Players/Crate1").weight = 13
		worlds[SERVER].get_node("Game/Lamp").color = Color(1, 0.5, 0, 1)])
	s.append(["SYNC again", func():
		worlds[SERVER].get_node("Game/Players/PlayerA").position = Vector2(12.5, -4)
		worlds[SERVER].get_node("Game/Players/Crate1").position = Vector2(3, 5)
		_send_sync_once()])
	s.append(["despawn", func():
		var c: Node = worlds[SERVER].get_node("Game/Players/Crate1")
		c.get_parent().remove_child(c)
		c.queue_free()])
	s.append(["sink peer connects", func():
		mps[SERVER].auth_callback = Callable()
		wire.connect_pair(SERVER, SINK)])
	s.append(["burn cache ids (packets to the sink, not recorded)", func():
		_burn("Game/Mid", U16_CACHE_ID)
		_burn("Game/Far", U32_CACHE_ID)])
	s.append(["sink peer disconnects", func(): wire.disconnect_pair(SERVER, SINK)])
	s.append(["server->A on Mid before CONFIRM_PATH", func(): _call(SERVER, "Game/Mid", A, "hit", [1])])
	s.append(["server->A on Mid (16-bit node id)", func(): _call(SERVER, "Game/Mid", A, "hit", [2])])
	s.append(["server->A on Far before CONFIRM_PATH", func(): _call(SERVER, "Game/Far", A, "hit", [3])])
	s.append(["server->A on Far (32-bit node id)", func(): _call(SERVER, "Game/Far", A, "hit", [4])])
	s.append(["B disconnects", func(): wire.disconnect_pair(SERVER, B)])
	return s
