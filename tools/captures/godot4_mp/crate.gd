extends Node2D
# Made by main.gd's spawn_function for MultiplayerSpawner.spawn(data) (custom spawn, scene id 0xFF).

var kind := ""
var weight := 0
