extends Reference
# How the multiplayer capture scripts print what they send and what they receive.  One line per event
# on stderr (unbuffered), tab-separated, starting with "@@CAP"; text fields are hex of their UTF-8
# bytes because var2str output can span lines.  A value is printed as <fields> (Base.fields):
#
#   <fields> = <typeof> full <var2str hex> <var2bytes hex> <object id or ->
#            | <typeof> big <var2bytes size> <var2bytes sha256> <var2str size> <var2str sha256> <var2str head hex> <object id or ->
#
#   ME     <role> <unique id>                                   after the peer is connected
#   PEER   connected|disconnected <id> <msec> <port>            network_peer_(dis)connected signals; the
#                                                               server also prints the client's port
#   SEND   <n> rpc|rset <node path hex> <method/property> <target> <unreliable 0|1> <channel> <argc> <msec>
#   SEND   <n> raw <bytes hex> - <target> <transfer mode> <channel> 1 <msec>
#   SARG   <n> <i> <fields>                                     argument i of SEND n
#   STEXT  <n> <i> <var2str hex>                                the whole text of a "big" argument
#   RECV   <n> rpc|rset <sender id> <node path hex> <node path from the multiplayer root hex> <name> <argc> <msec>
#   RECV   <n> raw <sender id> <bytes hex> - - 1 <msec>
#   RARG   <n> <i> <fields>                                     argument i of RECV n
#   RTEXT  <n> <i> <var2str hex>
#   INFO   <text hex>
#   READY (server listening) / CONNECTED (client has its id) / START <id a> <id b> (plan begins) / CLOSE <msec>
#   DONE / FATAL <reason>

# The line format, BIG and the value <fields> are tools/captures/godot3/report.gd's: the driver copies
# that file into this project as capture_report.gd, so both capture projects print values alike.
const Base = preload("res://capture_report.gd")
const BIG = Base.BIG


static func out(line):
	Base.out(line)


static func info(text):
	Base.info(text)


static func fields(v):
	return Base.fields(v)


static func hexs(s):
	return str(s).to_utf8().hex_encode()


static func args_out(head, n, args):
	for i in range(args.size()):
		out("%sARG\t%d\t%d\t%s" % [head, n, i, fields(args[i])])
		if var2bytes(args[i]).size() > BIG:
			out("%sTEXT\t%d\t%d\t%s" % [head, n, i, hexs(var2str(args[i]))])


static func send(n, kind, node_path, name, target, mode, channel, args):
	out("SEND\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d" % [n, kind, hexs(node_path), name, target, mode, channel,
		args.size(), OS.get_system_time_msecs()])
	args_out("S", n, args)


static func send_raw(n, data, target, mode, channel):
	out("SEND\t%d\traw\t%s\t-\t%d\t%d\t%d\t1\t%d" % [n, data.hex_encode(), target, mode, channel,
		OS.get_system_time_msecs()])
	args_out("S", n, [data])


# Called by the receiving node itself (inside the RPC method or the rset setter).
static func recv(node, kind, name, args):
	var tree = node.get_tree()
	var st = tree.get_meta("gdx_recv_count")
	tree.set_meta("gdx_recv_count", st + 1)
	var rel = tree.root.get_path_to(node)
	out("RECV\t%d\t%s\t%d\t%s\t%s\t%s\t%d\t%d" % [st, kind, tree.get_rpc_sender_id(), hexs(node.get_path()),
		hexs(rel), name, args.size(), OS.get_system_time_msecs()])
	args_out("R", st, args)


static func recv_raw(tree, sender, packet):
	var st = tree.get_meta("gdx_recv_count")
	tree.set_meta("gdx_recv_count", st + 1)
	out("RECV\t%d\traw\t%d\t%s\t-\t-\t1\t%d" % [st, sender, packet.hex_encode(), OS.get_system_time_msecs()])
	args_out("R", st, [packet])
