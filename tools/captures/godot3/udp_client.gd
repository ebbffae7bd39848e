extends SceneTree
# godot3-udp-all-types, client side: PacketPeerUDP bound to 127.0.0.1:$GDX_UDP_CLIENT_PORT (so the
# flow's ports are fixed), put_var() every value of values.gd to the server, one datagram each, then
# "__end__"; print the replies the server sends back.

const R = preload("res://report.gd")
const V = preload("res://values.gd")


func _init():
	_run()
	quit()


func _drain(udp, cport, state):
	while udp.get_available_packet_count() > 0:
		var v = udp.get_var()
		R.recv("udp-reply", udp.get_packet_ip(), udp.get_packet_port(), "127.0.0.1", cport, state[0], v)
		state[0] += 1


func _run():
	var sport = int(OS.get_environment("GDX_UDP_SERVER_PORT"))
	var cport = int(OS.get_environment("GDX_UDP_CLIENT_PORT"))
	var udp = PacketPeerUDP.new()
	if udp.listen(cport, "127.0.0.1") != OK:
		R.out("FATAL\tlisten")
		return
	udp.set_dest_address("127.0.0.1", sport)
	var keep = []
	var values = V.all_types(keep)
	values.append(["end", "__end__"])
	var state = [0]
	for i in range(values.size()):
		R.sent("udp", i, values[i][0], values[i][1])
		var err = udp.put_var(values[i][1])
		if err != OK:
			R.out("FATAL\tput_var %d" % err)
		OS.delay_msec(3)  # pacing: the receiver's ring buffer is 64 KiB, nothing may be dropped
		_drain(udp, cport, state)
	var deadline = OS.get_ticks_msec() + 5000
	while state[0] < 2 and OS.get_ticks_msec() < deadline:
		OS.delay_msec(2)
		_drain(udp, cport, state)
	udp.close()
	for o in keep:
		if o is Node:
			o.free()
		elif typeof(o) == TYPE_RID:
			Physics2DServer.free_rid(o)
	R.out("DONE")
