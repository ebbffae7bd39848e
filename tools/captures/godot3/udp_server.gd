extends SceneTree
# godot3-udp-all-types, server side: PacketPeerUDP.listen on 127.0.0.1:$GDX_UDP_SERVER_PORT,
# get_var() every datagram and print it; reply twice (after the first datagram and after "__end__").

const R = preload("res://report.gd")


func _init():
	_run()
	quit()


func _run():
	var port = int(OS.get_environment("GDX_UDP_SERVER_PORT"))
	var udp = PacketPeerUDP.new()
	if udp.listen(port, "127.0.0.1") != OK:
		R.out("FATAL\tlisten")
		return
	R.out("READY")
	var deadline = OS.get_ticks_msec() + 20000
	var n = 0
	var replies = 0
	while OS.get_ticks_msec() < deadline:
		if udp.get_available_packet_count() == 0:
			OS.delay_msec(1)
			continue
		var v = udp.get_var()
		var ip = udp.get_packet_ip()
		var p = udp.get_packet_port()
		R.recv("udp", ip, p, "127.0.0.1", port, n, v)
		n += 1
		var end = typeof(v) == TYPE_STRING and v == "__end__"
		if n == 1 or end:
			var reply
			if replies == 0:
				reply = {"reply": 0, "msg": "welcome", "server_tick": 5000, "spawn": Vector3(0, 1.5, -4)}
			else:
				reply = ["bye", n, PoolIntArray([n, -n]), {"ok": true}]
			udp.set_dest_address(ip, p)
			R.sent("udp-reply", replies, "reply_%d" % replies, reply)
			udp.put_var(reply)
			replies += 1
		if end:
			break
	udp.close()
	R.out("DONE")
