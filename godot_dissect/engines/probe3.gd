extends SceneTree
# godot-dissect oracle driver for Godot 3.x, run as `godot3-server --path DIR -s res://probe.gd`.
#
# Reads res://cases.bin (written by godot_dissect/engines/protocol.py) and reports every case as one
# tab-separated line on stderr, starting with "@@GDX:".  Everything goes to stderr because stderr is
# unbuffered (a crash loses nothing) and keeps our lines in order with the engine's own error
# messages, from which the decoder's error code is read.  Binary fields are hex.
#
#   BEGIN <version>
#   e <i>                      start of encode case i (engine messages until its E line belong to it)
#   E <i> ok <typeof> <var2bytes hex> <var2bytes(v, true) hex> <var2str utf-8 hex>
#   E <i> compile|runtime
#   d <i>                      start of decode case i
#   D <i> 1 <typeof> - <var2str utf-8 hex> <var2bytes(result) hex>
#   D <i> 0                    rejected
#   END

const TAG = "@@GDX:"
const CASES = "res://cases.bin"


func _init():
	_run()
	quit()


func _out(line):
	printerr(TAG + line)


func _version():
	var vi = Engine.get_version_info()
	var s = "%d.%d" % [vi["major"], vi["minor"]]
	if vi["patch"]:
		s += ".%d" % vi["patch"]
	s += "." + str(vi["status"]) + "." + str(vi["build"])
	if vi.has("hash") and vi["hash"] != "" and vi["hash"] != "unknown":
		s += "." + str(vi["hash"]).substr(0, 9)
	return s


func _read_str(f):
	var n = f.get_32()
	return f.get_buffer(n).get_string_from_utf8()


func _compile(src):
	var s = GDScript.new()
	s.source_code = src
	if s.reload() != OK:
		return null
	return s.new()


func _encode_line(obj, idx):
	# Runs in its own function so the value is freed (and any crash while freeing it happens)
	# before the result line is printed.
	var r = obj.call("c%d" % idx)
	if typeof(r) != TYPE_ARRAY:
		return "E\t%d\truntime" % idx
	var v = r[0]
	return "E\t%d\tok\t%d\t%s\t%s\t%s" % [
		idx, typeof(v), var2bytes(v).hex_encode(), var2bytes(v, true).hex_encode(),
		var2str(v).to_utf8().hex_encode()]


func _try_decode(b, allow_objects):
	# bytes2var raises a script error on bad input; that aborts this function, which then returns
	# null instead of an Array: this is how a rejection is told apart from a decoded null.
	return [bytes2var(b, allow_objects)]


func _decode_line(b, allow_objects, idx):
	var r = _try_decode(b, allow_objects)
	if typeof(r) != TYPE_ARRAY:
		return "D\t%d\t0" % idx
	var v = r[0]
	return "D\t%d\t1\t%d\t-\t%s\t%s" % [
		idx, typeof(v), var2str(v).to_utf8().hex_encode(), var2bytes(v).hex_encode()]


func _run():
	_out("BEGIN\t" + _version())
	var f = File.new()
	if f.open(CASES, File.READ) != OK:
		_out("FATAL\tcannot open " + CASES)
		return
	var n_enc = f.get_32()
	var n_dec = f.get_32()
	var batch = null
	var batch_src = _read_str(f)
	if n_enc > 0:
		batch = _compile(batch_src)
	for _k in range(n_enc):
		var idx = f.get_32()
		var src = _read_str(f)
		_out("e\t%d" % idx)
		var obj = batch
		if obj == null:
			# The batch did not compile: compile this case alone so one bad case cannot sink the rest.
			obj = _compile(src)
		if obj == null:
			_out("E\t%d\tcompile" % idx)
		else:
			_out(_encode_line(obj, idx))
	for _k in range(n_dec):
		var idx = f.get_32()
		var allow_objects = f.get_8() != 0
		var b = f.get_buffer(f.get_32())
		_out("d\t%d" % idx)
		_out(_decode_line(b, allow_objects, idx))
	_out("END")
