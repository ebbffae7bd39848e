extends MultiplayerPeerExtension
# A MultiplayerPeer whose "network" is wire.gd: put_packet() hands the packet with its target,
# transfer mode and channel to the wire, which records it and queues it for the destination.
# Connection events are raised as peer_connected/peer_disconnected at the next poll(), where
# SceneMultiplayer expects them.  Server relay is supported, as in ENetMultiplayerPeer and
# WebSocketMultiplayerPeer, so SceneMultiplayer uses SYS ADD_PEER/DEL_PEER/RELAY.

var wire: RefCounted
var uid := 0
var status: int = MultiplayerPeer.CONNECTION_CONNECTING
var links := {}  # connected peer id -> true
var inbox: Array = []  # [seq, from, bytes, transfer mode, channel], oldest first
var events: Array = []  # ["connected" | "disconnected", peer id]
var target := 0
var mode: int = MultiplayerPeer.TRANSFER_MODE_RELIABLE
var channel := 0
var refusing := false


func _init(p_wire: RefCounted, p_uid: int) -> void:
	wire = p_wire
	uid = p_uid
	if uid == 1:
		status = MultiplayerPeer.CONNECTION_CONNECTED  # a server is up as soon as it listens


func _get_packet_script() -> PackedByteArray:
	var p: Array = inbox.pop_front()
	wire.processing[uid] = p[0]
	return p[2]


func _put_packet_script(p_buffer: PackedByteArray) -> Error:
	return wire.send(uid, target, p_buffer, mode, channel)


func _get_available_packet_count() -> int:
	return inbox.size()


func _get_max_packet_size() -> int:
	return 1 << 24


func _get_packet_peer() -> int:
	return inbox[0][1] if inbox.size() else 0


func _get_packet_mode() -> TransferMode:
	return inbox[0][3] if inbox.size() else TRANSFER_MODE_RELIABLE


func _get_packet_channel() -> int:
	return inbox[0][4] if inbox.size() else 0


func _set_transfer_mode(p_mode: TransferMode) -> void:
	mode = p_mode


func _get_transfer_mode() -> TransferMode:
	return mode as TransferMode


func _set_transfer_channel(p_channel: int) -> void:
	channel = p_channel


func _get_transfer_channel() -> int:
	return channel


func _set_target_peer(p_peer: int) -> void:
	target = p_peer


func _is_server() -> bool:
	return uid == 1


func _poll() -> void:
	wire.processing[uid] = -1
	while events.size():
		var e: Array = events.pop_front()
		if e[0] == "connected":
			peer_connected.emit(e[1])
		else:
			peer_disconnected.emit(e[1])


func _close() -> void:
	for id in links.keys():
		wire.disconnect_pair(uid, id)
	status = MultiplayerPeer.CONNECTION_DISCONNECTED


func _disconnect_peer(p_peer: int, _p_force: bool) -> void:
	wire.disconnect_pair(uid, p_peer)


func _get_unique_id() -> int:
	return uid


func _set_refuse_new_connections(p_enable: bool) -> void:
	refusing = p_enable


func _is_refusing_new_connections() -> bool:
	return refusing


func _is_server_relay_supported() -> bool:
	return true


func _get_connection_status() -> ConnectionStatus:
	return status as ConnectionStatus
