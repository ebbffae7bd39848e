extends SceneTree
# Another shape for benchmarks/bench_lua.py: one long Godot 3.2.3 high-level multiplayer session over
# NetworkedMultiplayerENet, steady game traffic rather than connection setup: the client sends STATES
# unreliable RPCs with a Dictionary argument (id, position, rotation, sequence; 8 per frame), every 25th
# also a reliable chat RPC; the server answers each state with an unreliable world snapshot (a Dictionary
# holding an Array of two player Dictionaries) and sets a remote property every 50th. Run the server, then
# the client, from an empty folder (Godot writes logs/ there), with
# `dumpcap -i lo -f "udp port 47200" -w enet-session.pcapng` running:
#   GDX_ROLE=server godot3-server -s REPO/tools/captures/godot3/enet_load.gd &
#   GDX_ROLE=client godot3-server -s REPO/tools/captures/godot3/enet_load.gd

const PORT = 47200
const STATES = 20000
const PER_FRAME = 8
const GAME_SCRIPT = """extends Node
remote var hp = 100
var states = 0
var worlds = 0
var chats = 0
remote func state(d):
	states += 1
	get_tree().call_group("gdx", "on_state", get_tree().get_rpc_sender_id(), d)
remote func world(d):
	worlds += 1
remote func chat(text):
	chats += 1
"""

var role = ""
var game = null
var peer = null
var client_id = 0  # the client's own network id, once connected
var sent = 0
var done_at = -1


func _init():
	role = OS.get_environment("GDX_ROLE")
	Engine.target_fps = 0
	var script = GDScript.new()
	script.source_code = GAME_SCRIPT
	script.reload()
	game = Node.new()
	game.name = "Game"
	game.set_script(script)
	root.add_child(game)
	_add_relay()
	peer = NetworkedMultiplayerENet.new()
	if role == "server":
		peer.create_server(PORT, 1)
		connect("network_peer_disconnected", self, "_on_gone")
	else:
		peer.create_client("127.0.0.1", PORT)
		connect("connected_to_server", self, "_on_server")
	network_peer = peer


func _add_relay():
	# the game node's state() hands each state to on_state() here (the server answers it)
	var relay = Node.new()
	relay.name = "Relay"
	relay.set_script(_relay_script())
	relay.set_meta("tree", self)
	root.add_child(relay)
	relay.add_to_group("gdx")


func _relay_script():
	var s = GDScript.new()
	s.source_code = "extends Node\nfunc on_state(sender, d):\n\tget_meta('tree').answer(sender, d)\n"
	s.reload()
	return s


func answer(sender, d):
	var seq = d["seq"]
	var snapshot = {"tick": seq, "players": [
		{"id": 1, "pos": Vector3(seq * 0.01, 0, 0), "hp": 100 - seq % 100},
		{"id": sender, "pos": d["pos"], "hp": 50 + seq % 50}]}
	game.rpc_unreliable_id(sender, "world", snapshot)
	if seq % 50 == 0:
		game.rset_id(sender, "hp", 100 - seq % 100)


func _on_gone(_id):
	quit()


func _on_server():
	client_id = get_network_unique_id()


func _idle(_delta):
	if role != "client" or client_id == 0:
		return false
	if sent >= STATES:
		if done_at < 0:
			done_at = OS.get_ticks_msec()
		elif OS.get_ticks_msec() > done_at + 1000:  # let the last answers arrive, then leave
			peer.close_connection()
			quit()
		return false
	for _i in range(PER_FRAME):
		var t = sent * 0.02
		game.rpc_unreliable_id(1, "state", {"id": client_id, "pos": Vector3(sin(t) * 10, 0, cos(t) * 10),
				"rot": Quat(0, sin(t / 2), 0, cos(t / 2)), "seq": sent})
		if sent % 25 == 0:
			game.rpc_id(1, "chat", "message %d" % sent)
		sent += 1
	return false
