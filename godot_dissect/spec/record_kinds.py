"""The kinds of multiplayer records (``records.MULTIPLAYER_KINDS``), on their own: the reader and the
CLI need the names at start-up, before (and without) the multiplayer protocol tables of
``spec.multiplayer``, which re-exports them."""

from __future__ import annotations

from types import MappingProxyType

#: what the record kinds mean (docs, CLI help)
RECORD_KINDS = MappingProxyType({
    "rpc": "a remote call: node, method, arguments",
    "rset": "a remote property set (Godot 3): node, property, value",
    "simplify_path": "the sender announces a node path cache id",
    "confirm_path": "the receiver confirms a path cache id",
    "spawn": "a node spawned by a MultiplayerSpawner",
    "despawn": "a spawned node removed",
    "sync": "MultiplayerSynchronizer state",
    "sys": "SceneMultiplayer system message (auth, peers, relay)",
    "raw": "send_bytes() data",
    "peer": "a transport peer message (ids joining/leaving, your id)",
    "enet": "an ENet control command (connect, disconnect, ...)",
})
