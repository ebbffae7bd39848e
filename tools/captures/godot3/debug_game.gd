extends Node2D
# godot3-debugger: the game run with `--remote-debug 127.0.0.1:PORT` against the stand-in editor
# (tools/captures/debug_editor.py).  Everything it print()s reaches the editor as "output"
# messages and is also on stdout, where make_captures.py reads it back for the golden.
# The editor finds the ids it inspects in the "inspect_id=" / "player_id=" lines, and sets a
# breakpoint on the line that ends with the BREAKPOINT-HERE comment (in checkpoint()).
# The game quits by itself after QUIT_AFTER seconds.

const QUIT_AFTER = 5.0

var elapsed = 0.0
var next_print = 0.5
var checked = false
var score = {"red": 3, "blue": 5}
var names = PoolStringArray(["goblin", "orc"])
var timeouts = 0


func _ready():
	Engine.target_fps = 30
	$Timer.connect("timeout", self, "_on_timer")
	print("debug_game ready")
	print("inspect_id=%d" % get_instance_id())
	print("player_id=%d" % $Player.get_instance_id())
	print("unicode: h\u00e9llo \u2713 \u65e5\u672c")
	push_warning("debug_game warning")
	push_error("debug_game error")


func _on_timer():
	timeouts += 1


func checkpoint(stage):
	var local_value = stage * 2  # BREAKPOINT-HERE
	var local_vec = Vector2(stage, -stage)
	return local_value + int(local_vec.x)


func _process(delta):
	elapsed += delta
	if elapsed >= next_print:
		next_print += 0.5
		print("tick %d player=%s timeouts=%d" % [int(next_print * 2) - 1, str($Player.position), timeouts])
	if not checked and elapsed >= 2.0:
		checked = true
		print("checkpoint returned %d" % checkpoint(21))
	if elapsed >= QUIT_AFTER:
		print("debug_game quitting")
		set_process(false)
		get_tree().quit()
