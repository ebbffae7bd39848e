extends Node
# /root/Main/World/Players/Host (network master: the server) and .../Guest (master: client "a").
# RPCs and rset-able properties; every setter prints what it received (report.gd), so rset() shows
# up in the engine's own output.

const R = preload("res://report.gd")

puppet var hp = 100 setget set_hp
puppet var pos = Vector3() setget set_pos
master var aim = Vector2() setget set_aim
remote var label = "" setget set_label
remotesync var score = 0 setget set_score


puppet func move(where, tick):
	R.recv(self, "rpc", "move", [where, tick])


func set_hp(v):
	hp = v
	R.recv(self, "rset", "hp", [v])


func set_pos(v):
	pos = v
	R.recv(self, "rset", "pos", [v])


func set_aim(v):
	aim = v
	R.recv(self, "rset", "aim", [v])


func set_label(v):
	label = v
	R.recv(self, "rset", "label", [v])


func set_score(v):
	score = v
	R.recv(self, "rset", "score", [v])
