extends RefCounted
# How the Godot 4 capture scripts print what they send and receive: one line per event through
# print() (the page forwards the engine's stdout), tab-separated, starting with "@@CAP".  var_to_str
# output can span lines, so text fields are hex of the UTF-8 bytes.  Values whose var_to_bytes is
# larger than BIG bytes are printed as sizes + SHA-256 digests computed by the engine.
#
#   SENT <index> var <label hex> <fields>          before WebSocketPeer.put_var(v)
#   SENT <index> text <label hex> <text hex>       before WebSocketPeer.send_text(s)
#   RECV <index> binary <size> <sha256> <packet hex or -> <decode_var_size> <fields>
#   RECV <index> text <size> <sha256> <packet hex or -> <text hex>
#   <fields> = <typeof> <type_string> full <var_to_str hex> <var_to_bytes hex> <rt typeof> <rt type_string> <rt var_to_str hex> <object id or ->
#            | <typeof> <type_string> big <var_to_bytes size> <sha256> <var_to_str size> <var_to_str sha256> <var_to_str head hex> <rt typeof> <rt type_string> <object id or ->
#   (rt = bytes_to_var(var_to_bytes(v)): what a Godot receiver of these bytes gets)
#   INFO <text hex> / READY / DONE ... / FATAL ...

const TAG := "@@CAP"
const BIG := 4096


static func out(line: String) -> void:
	print(TAG + "\t" + line)


static func hx(s: String) -> String:
	return s.to_utf8_buffer().hex_encode()


static func sha256(b: PackedByteArray) -> String:
	var ctx := HashingContext.new()
	ctx.start(HashingContext.HASH_SHA256)
	if b.size() > 0:
		ctx.update(b)
	return ctx.finish().hex_encode()


static func object_id(v: Variant) -> String:
	if typeof(v) != TYPE_OBJECT or not is_instance_valid(v):
		return "-"
	if v is EncodedObjectAsID:
		return str(v.get_object_id())
	return str(v.get_instance_id())


static func fields(v: Variant) -> String:
	var b := var_to_bytes(v)
	var s := var_to_str(v)
	var rt: Variant = bytes_to_var(b)
	var head := "%d\t%s" % [typeof(v), type_string(typeof(v))]
	if b.size() <= BIG:
		return "%s\tfull\t%s\t%s\t%d\t%s\t%s\t%s" % [head, hx(s), b.hex_encode(), typeof(rt), type_string(typeof(rt)),
			hx(var_to_str(rt)), object_id(v)]
	var su := s.to_utf8_buffer()
	return "%s\tbig\t%d\t%s\t%d\t%s\t%s\t%d\t%s\t%s" % [head, b.size(), sha256(b), su.size(), sha256(su),
		hx(s.substr(0, 200)), typeof(rt), type_string(typeof(rt)), object_id(v)]


static func sent_var(index: int, label: String, v: Variant) -> void:
	out("SENT\t%d\tvar\t%s\t%s" % [index, hx(label), fields(v)])


static func sent_text(index: int, label: String, s: String) -> void:
	out("SENT\t%d\ttext\t%s\t%s" % [index, hx(label), hx(s)])


static func _pkt(pkt: PackedByteArray) -> String:
	return "%d\t%s\t%s" % [pkt.size(), sha256(pkt), pkt.hex_encode() if pkt.size() <= BIG else "-"]


static func recv_binary(index: int, pkt: PackedByteArray) -> Variant:
	var v: Variant = bytes_to_var(pkt)
	var used := pkt.decode_var_size(0) if pkt.size() >= 4 else 0
	out("RECV\t%d\tbinary\t%s\t%d\t%s" % [index, _pkt(pkt), used, fields(v)])
	return v


static func recv_text(index: int, pkt: PackedByteArray) -> String:
	var s := pkt.get_string_from_utf8()
	out("RECV\t%d\ttext\t%s\t%s" % [index, _pkt(pkt), hx(s)])
	return s
