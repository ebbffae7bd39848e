extends RefCounted
# The loopback "wire" between the recording peers (loop_peer.gd), all in one engine process.
# Every packet a SceneMultiplayer puts is printed (PKT) and appended to the destination peer's
# inbox, which that peer's SceneMultiplayer reads at its next poll().  Nothing is lost or
# reordered.  Packets addressed to the sink peer (see main.gd) are counted and dropped unrecorded.
#
#   PKT <seq> <from> <to> <channel> <transfer mode> <cause> <step hex> <packet hex>
#       cause = seq of the packet the sender was processing when it sent this one (-1: none,
#       the scenario itself made the call)

const R = preload("res://report.gd")

var peers := {}  # unique id -> loop_peer.gd
var seq := 0
var step := ""  # label of the scenario step in progress (main.gd)
var processing := {}  # unique id -> seq of the packet that peer's SceneMultiplayer is processing
var sink_id := 0
var sink_packets := 0
var sink_bytes := 0
var sink_last_cache_id := 0  # cache id of the last SIMPLIFY_PATH the sink was sent


func add(peer: MultiplayerPeerExtension) -> void:
	peers[peer.uid] = peer
	processing[peer.uid] = -1


func current(uid: int) -> int:
	return processing.get(uid, -1)


func send(from: int, to: int, data: PackedByteArray, mode: int, channel: int) -> Error:
	var src = peers[from]
	var targets: Array = []
	if to > 0:
		targets.append(to)
	else:  # 0 = everyone, -N = everyone but N (SceneMultiplayer 4.x never does this, kept for safety)
		for id in src.links:
			if id != -to:
				targets.append(id)
	for t in targets:
		if not src.links.has(t):
			R.out("FATAL\t" + R.hx("peer %d sent to %d, which it is not connected to" % [from, t]))
			return ERR_UNAVAILABLE
		if t == sink_id:
			sink_packets += 1
			sink_bytes += data.size()
			if data.size() >= 38 and (data[0] & 7) == 1:  # SIMPLIFY_PATH: [01][md5 hex + NUL][u32 id]
				sink_last_cache_id = data.decode_u32(34)
			continue
		var s := seq
		seq += 1
		R.out("PKT\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s" % [s, from, t, channel, mode, current(from), R.hx(step),
			data.hex_encode()])
		peers[t].inbox.append([s, from, data, mode, channel])
	return OK


func connect_pair(server: int, client: int) -> void:
	var s = peers[server]
	var c = peers[client]
	s.links[client] = true
	c.links[server] = true
	c.status = MultiplayerPeer.CONNECTION_CONNECTED
	c.events.append(["connected", server])
	s.events.append(["connected", client])


func disconnect_pair(a: int, b: int) -> void:
	for pair in [[a, b], [b, a]]:
		var p = peers[pair[0]]
		if p.links.erase(pair[1]):
			if p.uid == 1:
				p.events.append(["disconnected", pair[1]])
			else:  # a client that lost the server is disconnected: SceneMultiplayer sees the status
				p.status = MultiplayerPeer.CONNECTION_DISCONNECTED


func pending() -> int:
	var n := 0
	for id in peers:
		if id != sink_id:  # the sink never polls
			n += peers[id].inbox.size() + peers[id].events.size()
	return n
