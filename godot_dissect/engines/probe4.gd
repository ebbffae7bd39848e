extends Node
# godot-dissect oracle driver for Godot 4.x: the script of the main scene (the web template cannot
# run `--script`), so the work happens in _ready() and ends with get_tree().quit(0).
#
# Reads res://cases.bin (written by godot_dissect/engines/protocol.py) and reports every case as one
# tab-separated line on stderr, starting with "@@GDX:".  Everything goes to stderr so that our lines
# stay in order with the engine's own error messages, from which the decoder's error code is read
# (PacketPeer.get_packet_error() does not report decode errors).  Binary fields are hex.
#
#   BEGIN <version>
#   e <i>                      start of encode case i (engine messages until its E line belong to it)
#   E <i> ok <typeof> <var_to_bytes hex> <var_to_bytes_with_objects hex> <var_to_str utf-8 hex>
#   E <i> compile|runtime
#   d <i>                      start of decode case i
#   D <i> 1 <typeof> <bytes used> <var_to_str utf-8 hex> <var_to_bytes(result) hex>
#   D <i> 0                    rejected
#   END

const TAG := "@@GDX:"
const CASES := "res://cases.bin"


func _ready() -> void:
	_run()
	get_tree().quit(0)


func _out(line: String) -> void:
	printerr(TAG + line)


func _version() -> String:
	var vi := Engine.get_version_info()
	var s := "%d.%d" % [vi["major"], vi["minor"]]
	if vi["patch"]:
		s += ".%d" % vi["patch"]
	s += "." + str(vi["status"]) + "." + str(vi["build"])
	if vi.has("hash") and vi["hash"] != "" and vi["hash"] != "unknown":
		s += "." + str(vi["hash"]).substr(0, 9)
	return s


func _read_str(f: FileAccess) -> String:
	var n := f.get_32()
	return f.get_buffer(n).get_string_from_utf8()


func _compile(src: String) -> Object:
	var s := GDScript.new()
	s.source_code = src
	if s.reload() != OK:
		return null
	return s.new()


func _encode_line(obj: Object, idx: int) -> String:
	# Runs in its own function so the value is freed (and any crash while freeing it happens)
	# before the result line is printed.
	var r: Variant = obj.call("c%d" % idx)
	if typeof(r) != TYPE_ARRAY:
		return "E\t%d\truntime" % idx
	var v: Variant = r[0]
	return "E\t%d\tok\t%d\t%s\t%s\t%s" % [
		idx, typeof(v), var_to_bytes(v).hex_encode(), var_to_bytes_with_objects(v).hex_encode(),
		var_to_str(v).to_utf8_buffer().hex_encode()]


func _decode_line(b: PackedByteArray, allow_objects: bool, idx: int) -> String:
	# bytes_to_var() returns null on error, like a decoded null; decode_var_size() tells them apart
	# (0 on error, the bytes consumed otherwise; it needs at least 4 bytes, fewer are always invalid).
	# The value is decoded first so that the decoder's own error message comes first.
	var v: Variant = bytes_to_var_with_objects(b) if allow_objects else bytes_to_var(b)
	var used := b.decode_var_size(0, allow_objects) if b.size() >= 4 else 0
	if used <= 0:
		return "D\t%d\t0" % idx
	return "D\t%d\t1\t%d\t%d\t%s\t%s" % [
		idx, typeof(v), used, var_to_str(v).to_utf8_buffer().hex_encode(), var_to_bytes(v).hex_encode()]


func _run() -> void:
	_out("BEGIN\t" + _version())
	var f := FileAccess.open(CASES, FileAccess.READ)
	if f == null:
		_out("FATAL\tcannot open " + CASES)
		return
	var n_enc := f.get_32()
	var n_dec := f.get_32()
	var batch: Object = null
	var batch_src := _read_str(f)
	if n_enc > 0:
		batch = _compile(batch_src)
	for _k in range(n_enc):
		var idx := f.get_32()
		var src := _read_str(f)
		_out("e\t%d" % idx)
		var obj := batch
		if obj == null:
			# The batch did not compile: compile this case alone so one bad case cannot sink the rest.
			obj = _compile(src)
		if obj == null:
			_out("E\t%d\tcompile" % idx)
		else:
			_out(_encode_line(obj, idx))
	for _k in range(n_dec):
		var idx := f.get_32()
		var allow_objects := f.get_8() != 0
		var b := f.get_buffer(f.get_32())
		_out("d\t%d" % idx)
		_out(_decode_line(b, allow_objects, idx))
	_out("END")
