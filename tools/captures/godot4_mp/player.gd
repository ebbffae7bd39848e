extends Node2D
# res://player.tscn, spawned from the spawner's scene list (scene id 0).

var hp := 100
var nick := ""
