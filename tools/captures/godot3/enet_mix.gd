extends SceneTree
# A fourth ENet shape for benchmarks/bench_lua.py: a Godot 3.2.3 NetworkedMultiplayerENet game with three
# clients, where most traffic crosses the server: each client sends ITER unreliable state(Dictionary) RPCs
# to the server (4 per frame), a reliable chat(String, String, Color) RPC to every peer each 10th (the server
# relays it to the others), a PoolByteArray of 2.5-3.2 kB to every peer each 40th (ENet fragments, relayed),
# and rsets of a remote and a remotesync property each 25th; the server answers every third state with an
# unreliable world(int, Array of per-peer Dictionaries) RPC to all. Run the server, then three clients, from
# an empty folder (Godot writes logs/ there), with `dumpcap -i lo -f "udp port 47300" -w enet-mix.pcapng`:
#   GDX_ROLE=server godot3-server -s REPO/tools/captures/godot3/enet_mix.gd &
#   for n in a b c; do GDX_ROLE=client GDX_NAME=$n godot3-server -s REPO/tools/captures/godot3/enet_mix.gd & done
const PORT = 47300
const ITER = 3000
const GAME_SCRIPT = """extends Node
remote var hp = 100
remotesync var score = 0
var got = 0
remote func state(d):
	got += 1
	get_tree().call_group("gdx", "on_state", get_tree().get_rpc_sender_id(), d)
remote func chat(who, text, color):
	got += 1
remote func blob(tag, data):
	got += 1
remote func world(tick, players):
	got += 1
"""
# the server answers every third state with a world snapshot to all peers
const RELAY_SCRIPT = """extends Node
var tick = 0
func on_state(id, d):
	tick += 1
	if get_tree().is_network_server() and tick % 3 == 0:
		var players = []
		for p in get_tree().get_network_connected_peers():
			players.append({"id": p, "pos": Vector2(tick % 100, p % 7), "alive": true, "inv": [1, 2.5, "sword"]})
		get_tree().root.get_node("Game").rpc_unreliable("world", tick, players)
"""
var role = ""
var game = null
var peer = null
var sent = 0
var done_at = -1
var client_name = ""


func _init():
	role = OS.get_environment("GDX_ROLE")
	client_name = OS.get_environment("GDX_NAME")
	Engine.target_fps = 0
	var script = GDScript.new()
	script.source_code = GAME_SCRIPT
	script.reload()
	game = Node.new()
	game.name = "Game"
	game.set_script(script)
	root.add_child(game)
	var relay = Node.new()
	relay.name = "Relay"
	relay.add_to_group("gdx")
	var rs = GDScript.new()
	rs.source_code = RELAY_SCRIPT
	rs.reload()
	relay.set_script(rs)
	root.add_child(relay)
	peer = NetworkedMultiplayerENet.new()
	if role == "server":
		peer.create_server(PORT, 4)
		connect("network_peer_disconnected", self, "_on_gone")
	else:
		peer.create_client("127.0.0.1", PORT)
	network_peer = peer

var gone = 0


func _on_gone(_id):
	gone += 1
	if gone >= 3:
		print("server done got=", game.got)
		quit()


func _idle(_delta):
	if role != "client" or peer.get_connection_status() != NetworkedMultiplayerPeer.CONNECTION_CONNECTED:
		return false
	if done_at >= 0:
		done_at += 1
		if done_at > 300:
			print(client_name, " done sent=", sent, " got=", game.got)
			quit()
		return false
	for i in range(4):
		sent += 1
		game.rpc_unreliable_id(1, "state", {"id": get_network_unique_id(), "seq": sent, "pos": Vector3(sent * 0.5, 1, -2), "name": client_name})
		if sent % 10 == 0:
			game.rpc("chat", client_name, "hello %d from %s" % [sent, client_name], Color(1, 0.5, 0, 1))
		if sent % 40 == 0:
			var b = PoolByteArray()
			b.resize(2500 + sent % 700)
			for k in range(b.size()):
				b[k] = (k * 7 + sent) % 256
			game.rpc("blob", "blob%d" % sent, b)
		if sent % 25 == 0:
			game.rset("hp", sent % 100)
			game.rset("score", sent)
		if sent >= ITER:
			done_at = 0
			break
	return false
