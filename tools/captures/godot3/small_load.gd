extends SceneTree
# A third shape for benchmarks/bench_lua.py: 30,000 small game-state datagrams (an Array of an int, a
# Vector3 and a Quat; a Dictionary of three keys; a bare int, in turn) with PacketPeerUDP.put_var to
# 127.0.0.1:47100. Capture it with `dumpcap -i lo -f "udp port 47100" -w small.pcapng` running, then
# `godot3-server -s tools/captures/godot3/small_load.gd`.


func _init():
	var udp = PacketPeerUDP.new()
	udp.listen(47101, "127.0.0.1")
	udp.set_dest_address("127.0.0.1", 47100)
	for i in range(30000):
		var kind = i % 3
		if kind == 0:
			udp.put_var([i, Vector3(i * 0.1, 0.5, -i * 0.05), Quat(0, sin(i * 0.01), 0, cos(i * 0.01))])
		elif kind == 1:
			udp.put_var({"id": i % 8, "p": Vector2(i, -i), "hp": 100 - i % 100})
		else:
			udp.put_var(i)
		if i % 20 == 19:
			OS.delay_msec(1)  # keeps the capture ahead
	quit()
