extends Reference
# How the capture scripts print what they send and receive.  One line per event on stderr (unbuffered,
# so nothing is lost if a process is killed), tab-separated, starting with "@@CAP".  var2str output
# can span lines, so text fields are hex of the UTF-8 bytes.  Values whose var2bytes is larger than
# BIG bytes are printed as sizes + SHA-256 digests (computed by the engine) to keep goldens small.
#
#   RECV <transport> <src ip> <src port> <dst ip> <dst port> <index> <msec> <typeof> <fields>
#   SENT <transport> <index> <label hex> <typeof> <fields>
#   INFO <text hex>
#   <fields> = full <var2str hex> <var2bytes hex> <object id or ->
#            | big <var2bytes size> <var2bytes sha256> <var2str size> <var2str sha256> <var2str head hex> <object id or ->

const TAG = "@@CAP"
const BIG = 4096


static func out(line):
	printerr(TAG + "\t" + line)


static func info(text):
	out("INFO\t" + text.to_utf8().hex_encode())


static func fields(v):
	var b = var2bytes(v)
	var s = var2str(v)
	var oid = "-"
	if typeof(v) == TYPE_OBJECT and v != null:
		if v is EncodedObjectAsID:
			oid = str(v.get_object_id())
		else:
			oid = str(v.get_instance_id())
	if b.size() <= BIG:
		return "%d\tfull\t%s\t%s\t%s" % [typeof(v), s.to_utf8().hex_encode(), b.hex_encode(), oid]
	var su = s.to_utf8()
	var ctx = HashingContext.new()
	ctx.start(HashingContext.HASH_SHA256)
	ctx.update(b)
	return "%d\tbig\t%d\t%s\t%d\t%s\t%s\t%s" % [typeof(v), b.size(), ctx.finish().hex_encode(), su.size(),
		s.sha256_text(), s.substr(0, 200).to_utf8().hex_encode(), oid]


static func recv(transport, src_ip, src_port, dst_ip, dst_port, index, v):
	out("RECV\t%s\t%s\t%d\t%s\t%d\t%d\t%d\t%s" % [transport, src_ip, src_port, dst_ip, dst_port, index,
		OS.get_system_time_msecs(), fields(v)])


static func sent(transport, index, label, v):
	out("SENT\t%s\t%d\t%s\t%s" % [transport, index, label.to_utf8().hex_encode(), fields(v)])
