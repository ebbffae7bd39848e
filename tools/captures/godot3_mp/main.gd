extends Node
# /root/Main on every peer.  Each RPC prints what it received (report.gd RECV/RARG): the sender id,
# this node's path, the method and every argument as typeof/var2str/var2bytes.  One method per RPC
# keyword so the capture shows each of them.

const R = preload("res://report.gd")


remote func chat(text, color):
	R.recv(self, "rpc", "chat", [text, color])


remote func ping():
	R.recv(self, "rpc", "ping", [])


remotesync func announce(text):
	R.recv(self, "rpc", "announce", [text])


master func request_spawn(what, where):
	R.recv(self, "rpc", "request_spawn", [what, where])


puppet func spawned(what, owner, where):
	R.recv(self, "rpc", "spawned", [what, owner, where])
	get_node("World/Players/" + what).set_network_master(owner)


puppetsync func tick(n):
	R.recv(self, "rpc", "tick", [n])


remote func all_types(i, i64, f, f64, s, v3, col, dict, arr, pints, pstrs, np, nothing):
	R.recv(self, "rpc", "all_types", [i, i64, f, f64, s, v3, col, dict, arr, pints, pstrs, np, nothing])


remote func more_types(preals, pv2, pv3, pcols, xf, xf2d, rect, quat, basis, aabb, plane, flag):
	R.recv(self, "rpc", "more_types", [preals, pv2, pv3, pcols, xf, xf2d, rect, quat, basis, aabb, plane, flag])


remote func blob(data):
	R.recv(self, "rpc", "blob", [data])


remote func state(world):
	R.recv(self, "rpc", "state", [world])
