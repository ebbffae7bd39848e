extends SceneTree
# godot3-tcp-stream, server side: TCP_Server on 127.0.0.1:$GDX_TCP_PORT.  The client opens two
# connections in a fixed order: the first ("a") is read with StreamPeerTCP.get_var(), the second ("b")
# through a PacketPeerStream.get_var().  Every value is printed; after "__end__" arrived on both, the
# server answers once on each connection.

const R = preload("res://report.gd")


func _init():
	_run()
	quit()


func _run():
	var port = int(OS.get_environment("GDX_TCP_PORT"))
	var srv = TCP_Server.new()
	if srv.listen(port, "127.0.0.1") != OK:
		R.out("FATAL\tlisten")
		return
	R.out("READY")
	var deadline = OS.get_ticks_msec() + 30000
	var conns = []  # [StreamPeerTCP, PacketPeerStream or null, label, host, port, count, ended]
	while OS.get_ticks_msec() < deadline:
		while srv.is_connection_available() and conns.size() < 2:
			var c = srv.take_connection()
			var pps = null
			var label = "a"
			if conns.size() == 1:
				label = "b"
				pps = PacketPeerStream.new()
				pps.stream_peer = c
			var h = c.get_connected_host()
			var p = c.get_connected_port()
			R.out("CONN\t%s\t%s\t%d\t127.0.0.1\t%d" % [label, h, p, port])
			conns.append([c, pps, label, h, p, 0, false])
		var got = false
		for e in conns:
			var v
			if e[1] == null:
				if e[0].get_available_bytes() == 0:
					continue
				v = e[0].get_var()  # blocks until the whole value is there
			else:
				if e[1].get_available_packet_count() == 0:
					continue
				v = e[1].get_var()
			got = true
			R.recv("tcp-" + e[2], e[3], e[4], "127.0.0.1", port, e[5], v)
			e[5] += 1
			if typeof(v) == TYPE_STRING and v == "__end__":
				e[6] = true
		if conns.size() == 2 and conns[0][6] and conns[1][6]:
			break
		if not got:
			OS.delay_msec(1)
	if conns.size() == 2:
		var ra = ["ack", conns[0][5], conns[1][5], PoolByteArray([0xde, 0xad, 0xbe, 0xef])]
		R.sent("tcp-a-reply", 0, "reply_a", ra)
		conns[0][0].put_var(ra)
		var rb = {"ack": "b", "count": conns[1][5], "pos": Vector2(3, 4)}
		R.sent("tcp-b-reply", 0, "reply_b", rb)
		conns[1][1].put_var(rb)
	# Let the client read the replies and close first.
	var until = OS.get_ticks_msec() + 3000
	while OS.get_ticks_msec() < until:
		var open = 0
		for e in conns:
			if e[0].get_status() == StreamPeerTCP.STATUS_CONNECTED:
				open += 1
		if open == 0:
			break
		OS.delay_msec(5)
	for e in conns:
		e[0].disconnect_from_host()
	srv.stop()
	R.out("DONE")
