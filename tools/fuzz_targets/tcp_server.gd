extends SceneTree
# A game server as people write them: a TCP_Server on 127.0.0.1:PORT whose connections are read with
# StreamPeerTCP.get_var() (u32 LE length + Variant, as StreamPeer.put_var writes).  A String
# "godot-dissect-probe" is the known-good probe: the server answers it with put_var(["pong", n]).
# Everything else is decoded and dropped.  Settings (args.gd): --port (4300), --host (127.0.0.1),
# --allow-objects (0), --lifetime seconds (300; the server quits by itself after that), --log-values (0;
# 1: print every value received with var2str, as a server logging its traffic does).

const Args = preload("res://args.gd")
const PROBE = "godot-dissect-probe"


func _init():
	_run()
	quit()


func _run():
	var port = int(Args.value("port", "4300"))
	var host = Args.value("host", "127.0.0.1")
	var allow_objects = Args.value("allow-objects", "0") == "1"
	var lifetime = float(Args.value("lifetime", "300"))
	var log_values = Args.value("log-values", "0") == "1"
	var srv = TCP_Server.new()
	if srv.listen(port, host) != OK:
		printerr("FATAL listen %s:%d" % [host, port])
		return
	print("READY tcp %s:%d" % [host, port])
	var deadline = OS.get_ticks_msec() + int(lifetime * 1000)
	var conns = []
	var received = 0
	var probes = 0
	while OS.get_ticks_msec() < deadline:
		while srv.is_connection_available():
			conns.append(srv.take_connection())
		var busy = false
		for c in conns.duplicate():
			if c.get_status() != StreamPeerTCP.STATUS_CONNECTED:
				conns.erase(c)
				continue
			if c.get_available_bytes() == 0:
				continue
			busy = true
			var v = c.get_var(allow_objects)  # blocks until the whole value is there
			received += 1
			if log_values:
				print(var2str(v))
			if typeof(v) == TYPE_STRING and v == PROBE:
				probes += 1
				c.put_var(["pong", probes])
		if not busy:
			OS.delay_msec(1)
	srv.stop()
	print("DONE received %d probes %d" % [received, probes])
