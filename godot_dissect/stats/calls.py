"""The ``rpc`` and ``sync`` tables: multiplayer calls and replication per peer pair and node.

``rpc`` — one row per (sender, receiver, node, kind, name, transfer, channel, relayed), from the
records of kind ``rpc`` (RPCs) and ``rset`` (Godot 3 remote property sets):

- ``sender``/``receiver``: peer ids (``Record.sender``/``receiver``). A call relayed by the server
  keeps its original sender and its final receiver (see ``multiplayer.session``), so its two legs
  share one row.
- ``count``: calls delivered, i.e. records whose hop ends at the receiver: a server-to-client
  record, or a client-to-server record the server executes itself (receiver 1). The first leg of
  a relayed call (client -> server, receiver another client) is not counted again: a relayed call
  counts once per final receiver. A broadcast counts once per peer that receives it.
- ``app_bytes``: sum of ``Record.app_bytes`` of the counted records (the packet as the receiving
  MultiplayerAPI/SceneMultiplayer gets it from its MultiplayerPeer: command byte, ids, arguments;
  a Godot 3 ENet/WebSocket peer header is not part of it, a Godot 4 SYS RELAY wrapper is).
- ``wire_bytes``: sum of ``Record.wire_bytes`` of every leg (the first leg of a relayed call too),
  i.e. the share of the captured frames that carried the call.
- ``first``/``last``: capture times (seconds since the epoch) of the first and last counted record.
- ``name``: the method or property; a Godot 4 method id without a known name is ``#ID``.
- ``transfer``: ``Record.transfer``; ``channel``: the ENet channel (empty over WebSocket).

``sync`` — Godot 4 replication, one row per (sender, receiver, object), from records of kind
``sync`` (an entry per synchronizer in the packet), ``spawn`` and ``despawn``. ``object`` is the
synchronizer's node path, else the node a SPAWN created, else ``net#ID``. ``syncs``/``sync_bytes``
and ``deltas``/``delta_bytes`` count SYNC entries and their state bytes (the entry's size field),
full and delta apart (the editor's profiler drops deltas); ``spawns``/``despawns`` count packets,
``app_bytes``/``wire_bytes`` are the packets' sizes (a SYNC packet's split over its entries by
state size). Rows are counted at delivery like ``rpc``.
"""

from __future__ import annotations

from typing import Any

from ..records import Record, app_size
from ..spec.stats import MAX_ROWS
from .rows import OTHER, Rows

RPC_COLUMNS = (("sender", None), ("receiver", None), ("node", None), ("kind", None), ("name", None),
               ("transfer", None), ("channel", None), ("relayed", None), ("count", None),
               ("app_bytes", "bytes"), ("wire_bytes", "bytes"), ("first", "time"), ("last", "time"))
SYNC_COLUMNS = (("sender", None), ("receiver", None), ("object", None), ("syncs", None), ("sync_bytes", "bytes"),
                ("deltas", None), ("delta_bytes", "bytes"), ("spawns", None), ("despawns", None),
                ("app_bytes", "bytes"), ("wire_bytes", "bytes"), ("first", "time"), ("last", "time"))


def delivered(rec: Record) -> bool:
    """The record's hop ends at its receiver (see the module docstring)."""
    return rec.direction != "c2s" or rec.receiver == 1


def method_name(rec: Record) -> str:
    if rec.method is not None:
        return rec.method
    return f"#{rec.method_id}" if rec.method_id is not None else "?"


class RpcTable:
    columns = RPC_COLUMNS

    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        self.rows = Rows(lambda: [0, 0, 0.0, None, None], (None, None, OTHER, "", "", None, None, None), max_rows)

    def add(self, rec: Record) -> None:
        key = (rec.sender, rec.receiver, rec.node or "", rec.kind, method_name(rec), rec.transfer, rec.channel,
               rec.relayed)
        row = self.rows.get(key)
        row[2] += rec.wire_bytes
        if delivered(rec):
            row[0] += 1
            row[1] += app_size(rec)
            if row[3] is None:
                row[3] = rec.time
            row[4] = rec.time

    def records(self) -> list[tuple]:
        return [(*k, *v) for k, v in self.rows.items()]


class SyncTable:
    columns = SYNC_COLUMNS

    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        # syncs, sync_bytes, deltas, delta_bytes, spawns, despawns, app, wire, first, last
        self.rows = Rows(lambda: [0, 0, 0, 0, 0, 0, 0, 0.0, None, None], (None, None, OTHER), max_rows)

    def add(self, rec: Record) -> None:
        f = rec.fields or {}
        count = delivered(rec)
        if rec.kind == "sync":
            entries = f.get("entries") or []
            total = sum(e.get("size", 0) for e in entries) or 1
            delta = bool(f.get("delta"))
            for e in entries:
                obj = e.get("node") or e.get("spawned") or f"net#{e.get('net_id')}"
                share = (e.get("size", 0) or (total if len(entries) == 1 else 0)) / total
                row = self._row(rec, obj, count)
                row[7] += rec.wire_bytes * share
                if count:
                    row[2 if delta else 0] += 1
                    row[3 if delta else 1] += e.get("size", 0)
                    row[6] += round(app_size(rec) * share)
            return
        obj = f.get("name") or rec.node or f"net#{f.get('net_id')}"
        row = self._row(rec, obj, count)
        row[7] += rec.wire_bytes
        if count:
            row[4 if rec.kind == "spawn" else 5] += 1
            row[6] += app_size(rec)

    def _row(self, rec: Record, obj: str, count: bool) -> list[Any]:
        row = self.rows.get((rec.sender, rec.receiver, obj))
        if count:
            if row[8] is None:
                row[8] = rec.time
            row[9] = rec.time
        return row

    def records(self) -> list[tuple]:
        return [(*k, *v) for k, v in self.rows.items()]
