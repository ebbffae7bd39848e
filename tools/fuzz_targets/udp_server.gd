extends SceneTree
# A game server as people write them: PacketPeerUDP bound to 127.0.0.1:PORT, every datagram read with
# get_var().  A String "godot-dissect-probe" is the known-good probe: the server answers the sender
# with put_var(["pong", n]).  Settings (args.gd): --port (4301), --host (127.0.0.1),
# --allow-objects (0), --lifetime seconds (300; the server quits by itself after that), --log-values (0;
# 1: print every value received with var2str, as a server logging its traffic does).

const Args = preload("res://args.gd")
const PROBE = "godot-dissect-probe"


func _init():
	_run()
	quit()


func _run():
	var port = int(Args.value("port", "4301"))
	var host = Args.value("host", "127.0.0.1")
	var allow_objects = Args.value("allow-objects", "0") == "1"
	var lifetime = float(Args.value("lifetime", "300"))
	var log_values = Args.value("log-values", "0") == "1"
	var udp = PacketPeerUDP.new()
	if udp.listen(port, host) != OK:
		printerr("FATAL listen %s:%d" % [host, port])
		return
	udp.allow_object_decoding = allow_objects
	print("READY udp %s:%d" % [host, port])
	var deadline = OS.get_ticks_msec() + int(lifetime * 1000)
	var received = 0
	var probes = 0
	while OS.get_ticks_msec() < deadline:
		if udp.get_available_packet_count() == 0:
			OS.delay_msec(1)
			continue
		var v = udp.get_var(allow_objects)
		received += 1
		if log_values:
			print(var2str(v))
		if typeof(v) == TYPE_STRING and v == PROBE:
			probes += 1
			udp.set_dest_address(udp.get_packet_ip(), udp.get_packet_port())
			udp.put_var(["pong", probes])
	udp.close()
	print("DONE received %d probes %d" % [received, probes])
