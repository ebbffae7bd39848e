extends SceneTree
# Engine-side decoding for the debugger golden: reads res://pdus.bin ([u32 count] then per PDU
# [u32 length][bytes]) and decodes every PDU with bytes2var(bytes, false) -- the same
# decode_variant() the Godot 3.2.3 editor and game use on these PDUs -- printing
#   DEC <i> <fields>            (see report.gd)
#   DEC <i> reject              (bytes2var failed)

const R = preload("res://report.gd")


func _init():
	_run()
	quit()


func _try(b):
	return [bytes2var(b, false)]


func _run():
	var f = File.new()
	if f.open("res://pdus.bin", File.READ) != OK:
		R.out("FATAL\tcannot open pdus.bin")
		return
	var n = f.get_32()
	for i in range(n):
		var b = f.get_buffer(f.get_32())
		var r = _try(b)
		if typeof(r) != TYPE_ARRAY:
			R.out("DEC\t%d\treject" % i)
		else:
			R.out("DEC\t%d\t%s" % [i, R.fields(r[0])])
	R.out("DONE")
