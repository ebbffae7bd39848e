extends Node
# godot4-websocket-put-var, the Godot side: a WebSocketPeer client (the web export in headless
# Chromium, so the socket is the browser's WebSocket) that connects to our Python server on
# ws://127.0.0.1:PORT and, polling in _process():
#   1. put_var()s every value of values.gd, one per frame (printing each first, see report.gd);
#   2. a 100000-byte PackedByteArray and a 1500-element Array (each spans several TCP segments);
#   3. a burst of 40 small Dictionaries in one frame;
#   4. two send_text() messages, then put_var("__end__");
#   5. prints every message the server sends back (get_packet + bytes_to_var) until "__bye__",
#      then close(1000) and quit.  The script gives up after DEADLINE_MS (FATAL line, exit 1).

const R = preload("res://report.gd")
const V = preload("res://values.gd")
const DEADLINE_MS := 40000

var ws := WebSocketPeer.new()
var steps: Array = []  # each step: Array of [kind, label, value] sent in the same frame
var keep: Array = []
var sent := 0
var received := 0
var phase := "connecting"
var started_ms := 0
var closing_ms := 0


func _ready() -> void:
	started_ms = Time.get_ticks_msec()
	var cfg: Dictionary = JSON.parse_string(FileAccess.get_file_as_string("res://config.json"))
	var url := "ws://127.0.0.1:%d" % int(cfg["port"])
	# The web peer refuses to queue more than outbound_buffer_size bytes (default 64 KiB) and keeps at
	# most inbound_buffer_size bytes of unread messages: make room for the 100 KB values.
	ws.outbound_buffer_size = 1 << 21
	ws.inbound_buffer_size = 1 << 21
	var vi := Engine.get_version_info()
	R.out("INFO\t" + R.hx("engine %s" % vi["string"]))
	var err := ws.connect_to_url(url)
	if err != OK:
		_fatal("connect_to_url %s: %d" % [url, err])
		return
	for item in V.all_types(keep, self):
		steps.append([["var", item[0], item[1]]])
	steps.append([["var", "packed_byte_array_100000", V.big_byte_array(100000)]])
	steps.append([["var", "array_1500_mixed", V.big_array(1500)]])
	var burst := []
	for i in range(40):
		burst.append(["var", "burst_%d" % i, {"seq": i, "pos": Vector2(i, -i), "on": i % 2 == 0}])
	steps.append(burst)
	steps.append([["text", "text_hello", "hello from Godot 4.6 \u2713"]])
	steps.append([["text", "text_json", "{\"cmd\": \"chat\", \"msg\": \"gg\", \"n\": [1, 2, 3]}"]])
	steps.append([["var", "end", "__end__"]])


func _fatal(msg: String) -> void:
	R.out("FATAL\t" + R.hx(msg))
	phase = "done"
	_cleanup()
	get_tree().quit(1)


func _drain() -> void:
	while ws.get_available_packet_count() > 0:
		var pkt := ws.get_packet()
		if ws.was_string_packet():
			R.recv_text(received, pkt)
		else:
			var v: Variant = R.recv_binary(received, pkt)
			if typeof(v) == TYPE_STRING and v == "__bye__":
				phase = "got_bye"
		received += 1


func _send_step(step: Array) -> void:
	for item in step:
		var err := OK
		if item[0] == "var":
			R.sent_var(sent, item[1], item[2])
			err = ws.put_var(item[2])
		else:
			R.sent_text(sent, item[1], item[2])
			err = ws.send_text(item[2])
		if err != OK:
			_fatal("send %s: error %d" % [item[1], err])
			return
		sent += 1


func _process(_delta: float) -> void:
	if phase == "done":
		return
	if Time.get_ticks_msec() - started_ms > DEADLINE_MS:
		_fatal("deadline in phase %s (sent %d, received %d, state %d)" % [phase, sent, received, ws.get_ready_state()])
		return
	ws.poll()
	var state := ws.get_ready_state()
	if state == WebSocketPeer.STATE_OPEN:
		_drain()
	match phase:
		"connecting":
			if state == WebSocketPeer.STATE_OPEN:
				R.out("READY")
				phase = "sending"
			elif state == WebSocketPeer.STATE_CLOSED:
				_fatal("could not connect: close code %d" % ws.get_close_code())
		"sending":
			if steps.is_empty():
				phase = "waiting"
			else:
				_send_step(steps.pop_front())
		"got_bye":
			ws.close(1000, "done")
			phase = "closing"
			closing_ms = Time.get_ticks_msec()
		"closing":
			if state == WebSocketPeer.STATE_CLOSED:
				R.out("DONE\t%d\t%s\t%d\t%d" % [ws.get_close_code(), R.hx(ws.get_close_reason()), sent, received])
				phase = "done"
				_cleanup()
				get_tree().quit(0)
	if phase == "waiting" and state != WebSocketPeer.STATE_OPEN:
		_fatal("connection closed before __bye__ (code %d)" % ws.get_close_code())


func _cleanup() -> void:
	for o in keep:
		if typeof(o) == TYPE_RID:
			PhysicsServer2D.free_rid(o)
		elif o is Node:
			o.free()
	keep.clear()
