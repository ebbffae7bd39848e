extends Node2D
# Game/Lamp: a node present on every peer (not spawned).  Its synchronizer Lamp/Sync therefore has
# no spawn-assigned net id and uses a path-cache id (bit 31 set) in SYNC and delta SYNC packets.

var on := false
var color := Color(1, 1, 1, 1)
