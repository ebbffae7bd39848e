extends SceneTree
# godot3-tcp-stream, client side.  Connection "a": StreamPeerTCP.put_var(); connection "b":
# PacketPeerStream.put_var() over a second StreamPeerTCP.  TCP_NODELAY is left alone (Godot 3.2.3
# default: off), so segmenting is what the engine really does.

const R = preload("res://report.gd")
const V = preload("res://values.gd")


func _init():
	_run()
	quit()


func _connect(port):
	var c = StreamPeerTCP.new()
	if c.connect_to_host("127.0.0.1", port) != OK:
		return null
	var deadline = OS.get_ticks_msec() + 5000
	while c.get_status() == StreamPeerTCP.STATUS_CONNECTING and OS.get_ticks_msec() < deadline:
		OS.delay_msec(1)
	if c.get_status() != StreamPeerTCP.STATUS_CONNECTED:
		return null
	return c


func _send_a(a, st, label, v, pause):
	R.sent("tcp-a", st[0], label, v)
	a.put_var(v)  # StreamPeer.put_var returns nothing in 3.2.3
	st[0] += 1
	if pause > 0:
		OS.delay_msec(pause)


func _send_b(b, st, label, v, pause):
	R.sent("tcp-b", st[1], label, v)
	if b.put_var(v) != OK:
		R.out("FATAL\tput_var b %d" % st[1])
	st[1] += 1
	if pause > 0:
		OS.delay_msec(pause)


func _run():
	var port = int(OS.get_environment("GDX_TCP_PORT"))
	var a = _connect(port)
	if a == null:
		R.out("FATAL\tconnect a")
		return
	OS.delay_msec(50)  # so the server accepts "a" first
	var bs = _connect(port)
	if bs == null:
		R.out("FATAL\tconnect b")
		return
	var b = PacketPeerStream.new()
	b.stream_peer = bs
	var st = [0, 0]
	var keep = []
	_send_a(a, st, "hello_a", "hello via StreamPeerTCP.put_var", 20)
	_send_b(b, st, "hello_b", "hello via PacketPeerStream.put_var", 20)
	# Every type, paced: each put_var is its own pair of segments.
	for e in V.all_types(keep):
		_send_a(a, st, e[0], e[1], 3)
	# "b": paced messages first (the receiver leaves TCP quick-ACK mode), then a burst with no
	# pauses, which Nagle coalesces: several small messages per segment.
	for i in range(20):
		_send_b(b, st, "paced_b_%d" % i, [i, "p%d" % i], 3)
	for i in range(40):
		_send_b(b, st, "burst_b_%d" % i, {"tick": 2000 + i, "pos": Vector2(i, -i), "in": i % 3}, 0)
	OS.delay_msec(20)
	# Large values on "a": ~100 KB PoolByteArray and a big Array, spanning several segments.
	var big = PoolByteArray()
	big.resize(100000)
	for i in range(big.size()):
		big[i] = (i * 7 + 3) % 256
	_send_a(a, st, "big_pool_byte_array_100000", big, 20)
	var arr = []
	for i in range(1500):
		arr.append([i, Vector2(i * 0.5, -i), "e%d" % i])
	_send_a(a, st, "big_array_1500", arr, 20)
	# A burst on "a": small ints and strings back to back.
	for i in range(40):
		if i % 2 == 0:
			_send_a(a, st, "burst_a_%d" % i, i * 1000, 0)
		else:
			_send_a(a, st, "burst_a_%d" % i, "s%d" % i, 0)
	OS.delay_msec(20)
	for i in range(3):
		_send_b(b, st, "state_b_%d" % i, V.game_state(i), 5)
	_send_a(a, st, "end_a", "__end__", 0)
	_send_b(b, st, "end_b", "__end__", 0)
	# Wait for one reply on each connection.
	var ra = 0
	var rb = 0
	var deadline = OS.get_ticks_msec() + 5000
	while (ra == 0 or rb == 0) and OS.get_ticks_msec() < deadline:
		if ra == 0 and a.get_available_bytes() > 0:
			R.recv("tcp-a-reply", "127.0.0.1", port, "127.0.0.1", -1, ra, a.get_var())
			ra += 1
		if rb == 0 and b.get_available_packet_count() > 0:
			R.recv("tcp-b-reply", "127.0.0.1", port, "127.0.0.1", -1, rb, b.get_var())
			rb += 1
		OS.delay_msec(1)
	a.disconnect_from_host()
	bs.disconnect_from_host()
	for o in keep:
		if o is Node:
			o.free()
		elif typeof(o) == TYPE_RID:
			Physics2DServer.free_rid(o)
	R.out("DONE")
