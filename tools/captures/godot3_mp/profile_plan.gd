extends Reference
# The plan of captures/profile/godot3-enet-profile (tools/captures/make_profile_capture.py): the kind of
# steady traffic a small game makes, for the network profiler's tables.  REPEAT rounds of one step per
# actor in turn (server, a, b), plus one 3000-byte call (ENet fragments); every call is one the
# receivers accept (remote/puppet/master keywords as in main.gd and player.gd), so each one printed as
# made is printed as executed by its receivers.

const Plan = preload("res://plan.gd")
const REPEAT = 6


static func steps():
	var main = "Main"
	var host = "Main/World/Players/Host"
	var guest = "Main/World/Players/Guest"
	var out = []
	for i in range(REPEAT):
		out += [
			Plan.rpc("s", main, 0, "tick", [i], true),
			Plan.rpc("a", guest, 0, "move", [Vector3(i, 0, -i), i], true),
			Plan.rpc("b", main, "s", "chat", ["b says %d" % i, Color(0, 0, 1)]),
			Plan.rset("s", host, 0, "pos", Vector3(i, 1, 0), true),
			Plan.rpc("a", main, "b", "chat", ["a to b %d" % i, Color(1, 0, 0)]),
			Plan.rset("b", host, 0, "label", "label %d" % i),
			Plan.rset("s", host, "a", "hp", 100 - i),
			Plan.rpc("a", main, 0, "announce", ["round %d" % i]),
			Plan.rpc("b", main, "a", "ping", [], true),
		]
		if i == REPEAT / 2:
			out.append(Plan.rpc("s", main, "b", "blob", [Plan.bytes_pattern(3000, 7, 1)]))
	out += [{"actor": "b", "op": "close"}, {"actor": "a", "op": "close"}]
	return out
