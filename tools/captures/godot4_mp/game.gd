extends Node
# /Game in each of the three subtrees (Server, ClientA, ClientB).  Its @rpc methods get the method
# ids 0..N-1 in name order; `native_cfg` is configured on the Node itself (rpc_config), so its id
# has bit 15 set and always takes 16 bits on the wire.  Every method reports the call to main.gd,
# which prints it with the sender id and the packet being processed.

@onready var main: Node = get_node("/root/Main")


func _enter_tree() -> void:
	# Node-level RPC config (as C++ classes and rpc_config() make it): must be in place before the
	# first RPC or path-cache use of this node, on every peer.
	rpc_config("native_cfg", {"rpc_mode": MultiplayerAPI.RPC_MODE_ANY_PEER, "transfer_mode":
		MultiplayerPeer.TRANSFER_MODE_RELIABLE, "call_local": false, "channel": 0})


func native_cfg(a) -> void:
	main.got(self, "native_cfg", [a])


@rpc("any_peer", "call_remote", "reliable")
func ping() -> void:
	main.got(self, "ping", [])


@rpc("any_peer", "call_remote", "reliable")
func one(a) -> void:
	main.got(self, "one", [a])


@rpc("any_peer", "call_remote", "reliable")
func mixed(a, b, c, d, e, f, g, h) -> void:
	main.got(self, "mixed", [a, b, c, d, e, f, g, h])


@rpc("any_peer", "call_remote", "reliable")
func blob(data = null) -> void:
	main.got(self, "blob", [data])


@rpc("any_peer", "call_remote", "reliable")
func blob2(data, n) -> void:
	main.got(self, "blob2", [data, n])


@rpc("any_peer", "call_remote", "unreliable")
func fast(a) -> void:
	main.got(self, "fast", [a])


@rpc("any_peer", "call_remote", "unreliable_ordered")
func ordered(a) -> void:
	main.got(self, "ordered", [a])


@rpc("any_peer", "call_remote", "reliable", 2)
func side(a, b) -> void:
	main.got(self, "side", [a, b])


@rpc("any_peer", "call_remote", "unreliable", 1)
func side_fast(a) -> void:
	main.got(self, "side_fast", [a])


@rpc("any_peer", "call_remote", "reliable")
func big(data) -> void:
	main.got(self, "big", [data])


@rpc("any_peer", "call_remote", "unreliable")
func big_fast(data) -> void:
	main.got(self, "big_fast", [data])


@rpc("any_peer", "call_remote", "reliable")
func chat(msg) -> void:
	main.got(self, "chat", [msg])


@rpc  # authority (the server, peer 1) only, reliable, channel 0
func from_server(a) -> void:
	main.got(self, "from_server", [a])
