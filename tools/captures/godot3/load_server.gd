extends SceneTree
# --load: counts what load_client.gd sends (UDP on $GDX_UDP_SERVER_PORT, TCP on $GDX_TCP_PORT) until
# "__end__" arrived on both, then prints "COUNT udp N" and "COUNT tcp M".  Nothing else is printed:
# the load capture has no golden, only counts.

const R = preload("res://report.gd")


func _init():
	_run()
	quit()


func _run():
	var uport = int(OS.get_environment("GDX_UDP_SERVER_PORT"))
	var tport = int(OS.get_environment("GDX_TCP_PORT"))
	var udp = PacketPeerUDP.new()
	if udp.listen(uport, "127.0.0.1", 1 << 22) != OK:
		R.out("FATAL\tlisten udp")
		return
	var srv = TCP_Server.new()
	if srv.listen(tport, "127.0.0.1") != OK:
		R.out("FATAL\tlisten tcp")
		return
	R.out("READY")
	var conn = null
	var nu = 0
	var nt = 0
	var udp_end = false
	var tcp_end = false
	var deadline = OS.get_ticks_msec() + 300000
	while not (udp_end and tcp_end) and OS.get_ticks_msec() < deadline:
		var idle = true
		if conn == null and srv.is_connection_available():
			conn = srv.take_connection()
		while udp.get_available_packet_count() > 0:
			var v = udp.get_var()
			nu += 1
			idle = false
			if typeof(v) == TYPE_STRING and v == "__end__":
				udp_end = true
		if conn != null:
			var k = 0
			while conn.get_available_bytes() > 0 and k < 64:
				var v = conn.get_var()
				nt += 1
				k += 1
				idle = false
				if typeof(v) == TYPE_STRING and v == "__end__":
					tcp_end = true
		if idle:
			OS.delay_msec(1)
	R.out("COUNT\tudp\t%d" % nu)
	R.out("COUNT\ttcp\t%d" % nt)
	if conn != null:
		conn.disconnect_from_host()
	udp.close()
	srv.stop()
	R.out("DONE")
