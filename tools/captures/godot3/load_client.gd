extends SceneTree
# --load: $GDX_LOAD_COUNT game-state datagrams with PacketPeerUDP.put_var (then "__end__") and one
# fifth as many StreamPeerTCP.put_var messages on one connection (then "__end__"), interleaved.

const R = preload("res://report.gd")


func _init():
	_run()
	quit()


func state(i):
	var players = []
	for p in range(4):
		players.append({"id": 1 + p * 7919, "pos": Vector3(i * 0.1 + p, 0.5, -i * 0.05),
			"rot": Quat(0, sin(i * 0.01), 0, cos(i * 0.01)), "vel": Vector2(p, -p), "hp": 100 - (i + p) % 100,
			"alive": (i + p) % 17 != 0})
	return {"tick": i, "t": i / 60.0, "players": players, "events": ["hit", p_id(i)] if i % 10 == 0 else []}


func p_id(i):
	return 1 + (i % 4) * 7919


func _run():
	var n = int(OS.get_environment("GDX_LOAD_COUNT"))
	var uport = int(OS.get_environment("GDX_UDP_SERVER_PORT"))
	var cport = int(OS.get_environment("GDX_UDP_CLIENT_PORT"))
	var tport = int(OS.get_environment("GDX_TCP_PORT"))
	var udp = PacketPeerUDP.new()
	if udp.listen(cport, "127.0.0.1") != OK:
		R.out("FATAL\tlisten")
		return
	udp.set_dest_address("127.0.0.1", uport)
	var tcp = StreamPeerTCP.new()
	tcp.connect_to_host("127.0.0.1", tport)
	var deadline = OS.get_ticks_msec() + 5000
	while tcp.get_status() == StreamPeerTCP.STATUS_CONNECTING and OS.get_ticks_msec() < deadline:
		OS.delay_msec(1)
	if tcp.get_status() != StreamPeerTCP.STATUS_CONNECTED:
		R.out("FATAL\tconnect")
		return
	var nu = 0
	var nt = 0
	for i in range(n):
		var s = state(i)
		udp.put_var(s)
		nu += 1
		if i % 5 == 0:
			tcp.put_var(s)
			nt += 1
		if i % 20 == 19:
			OS.delay_msec(1)  # keeps the receiver (and tshark) ahead
	udp.put_var("__end__")
	nu += 1
	tcp.put_var("__end__")
	nt += 1
	R.out("COUNT\tudp\t%d" % nu)
	R.out("COUNT\ttcp\t%d" % nt)
	OS.delay_msec(500)
	tcp.disconnect_from_host()
	udp.close()
	R.out("DONE")
