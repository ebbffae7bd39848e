"""Godot's high-level multiplayer protocols (3.x MultiplayerAPI, 4.x SceneMultiplayer) on top of
ENet and WebSocket, from the layouts in ``godot_dissect.spec.multiplayer``."""

from .compressed import decode_compressed, encode_compressed
from .message import MpMessage
from .rpcnames import RpcNames, rpc_md5
from .session import MultiplayerSession

__all__ = ["MpMessage", "MultiplayerSession", "RpcNames", "decode_compressed", "encode_compressed", "rpc_md5"]
