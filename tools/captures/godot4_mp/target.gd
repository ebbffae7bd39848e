extends Node
# Game/Mid, Game/Far and Game/Burner: one RPC each.  The server's path-cache ids of Mid and Far are
# pushed past 255 and 65535 (main.gd, "burn"), so calls to them carry 16- and 32-bit node ids.

@onready var main: Node = get_node("/root/Main")


@rpc("any_peer", "call_remote", "reliable")
func hit(a) -> void:
	main.got(self, "hit", [a])
