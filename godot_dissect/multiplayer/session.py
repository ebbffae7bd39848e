"""One conversation's multiplayer state: transport headers, path caches per sending peer, spawned
nodes, method names.

    s = MultiplayerSession(4, "websocket")
    for m in s.decode(payload, "c2s"): ...

The engine's caches are per sender: a SIMPLIFY_PATH announces "my cache id N is node P", and later
packets from that sender name the node by N. Here the sender is the peer id when the transport says
it (Godot 3 headers, a relay's source), else the direction of the conversation (a Godot 4 client
talks to the server, peer 1).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ..spec.multiplayer import (
    ENET3_PEER_HEADER,
    ENET3_SYSMSG,
    ENET_CHANNELS,
    MAX_CACHE_ENTRIES,
    MAX_CACHE_SENDERS,
    MD5_HEX_SIZE,
    SYNC_ID,
    SYNC_PATH_CACHE,
    WS3_HEADER,
    WS3_SYS,
    WS3_TYPES,
    WS4_MIN_PEER_ID,
    WS4_PEER_ID,
)
from . import godot3, godot4
from .layout import LayoutError, Scope, check_size, read_items
from .message import MpMessage
from .rpcnames import UNVERIFIED, VERIFIED, RpcNames

#: the cache key of a Godot 4 conversation's client side
CLIENT = "client"
__all__ = ["CLIENT", "MAX_CACHE_ENTRIES", "MAX_CACHE_SENDERS", "MultiplayerSession"]


class _Cache(OrderedDict):
    """sender -> (key -> value), the least recently announcing sender first; ``size``: entries over all senders
    (at most MAX_CACHE_ENTRIES)."""

    size = 0


@dataclass
class _Spawned:
    name: str
    spawner: str | None


@dataclass
class MultiplayerSession:
    major: int
    transport: str  # "enet" | "websocket"
    dialect: str | None = None
    names: RpcNames | None = None
    #: Godot 3 ENet header form ("3.2+" / "3.0-3.1"); None: decided from the first data packet
    enet3_header: str | None = None
    #: Godot 4 CONFIRM_PATH form ("id" 4.3+ / "path" 4.0-4.2); None: by packet size
    confirm_form: str | None = None
    client_id: int | None = None  # the client's peer id, when the transport told it
    #: "c2s" is surely the client's side (WebSocket: it sent the HTTP upgrade; ENet: the CONNECT was
    #: seen); otherwise rules about who may send what are not applied
    direction_known: bool = True
    # per sender, least recently announcing first (MAX_CACHE_SENDERS, MAX_CACHE_ENTRIES each)
    paths: _Cache = field(default_factory=_Cache)  # sender -> cache id -> path
    md5s: _Cache = field(default_factory=_Cache)  # sender -> cache id -> md5 (4.x)
    #: sender -> path -> md5 of its latest announcement (a 4.x REMOTE_CALL naming its node by path)
    path_md5s: _Cache = field(default_factory=_Cache)
    received: set[tuple[Any, Any, int]] = field(default_factory=set)  # (sender, receiver, id) seen (4.x)
    spawned: _Cache = field(default_factory=_Cache)  # sender -> net id -> node
    synchronizers: _Cache = field(default_factory=_Cache)  # sender -> sync net id -> node
    ws_first_s2c: bool = True

    def __post_init__(self) -> None:
        if self.dialect is None:
            self.dialect = "godot3" if self.major == 3 else "godot4"

    # -- entry point ---------------------------------------------------------------------------
    def decode(self, payload: bytes, direction: str, channel: int | None = None) -> list[MpMessage]:
        """The messages of one transport payload (a WebSocket message, a reassembled ENet packet)."""
        payload = bytes(payload)
        if self.major == 3:
            msgs = self._enet3(payload, direction, channel) if self.transport == "enet" else \
                self._ws3(payload, direction)
        else:
            msgs = self._godot4(payload, direction, channel)
        if channel is not None and self.transport == "enet":
            for m in msgs:
                m.fields.setdefault("channel_name", ENET_CHANNELS[self.major].name(channel))
        for m in msgs:
            self._route(m, direction)
        return msgs

    # -- who sends to whom -------------------------------------------------------------------------
    def _route(self, msg: MpMessage, direction: str) -> None:
        """``sender``, ``receiver``, ``relayed`` (and ``transfer`` over WebSocket) of one packet.

        Every Godot multiplayer topology here is a star: each hop is between the server (peer 1)
        and one client. A client's packet for another client travels client -> server -> client;
        its two legs both say the original sender and the final receiver, and ``relayed``. What
        the server does with a client's packet follows the engine (3.x
        ``NetworkedMultiplayerENet::poll``/``WebSocketMultiplayerPeer``, 4.x
        ``SceneMultiplayer::_process_sys`` RELAY): target 1 or 0 or -N (N != 1): the server
        executes it (receiver 1; the copies it forwards to the other clients are separate s2c
        records); target N > 1: forwarded only (receiver N); target -1: forwarded to every other
        client, nobody in particular (receiver None).
        """
        client = self.client_id
        hop_src, hop_dst = (1, client) if direction == "s2c" else (client, 1)
        shown = msg.inner if msg.inner is not None else msg
        if self.transport == "websocket":
            msg.transfer = "reliable"  # over TCP every transfer mode arrives, in order
        if shown is not msg and shown.sender is not None:
            msg.sender = shown.sender  # a relay: the packet inside is the original sender's
        elif msg.sender is None:
            msg.sender = hop_src
        if direction == "s2c":
            msg.receiver = hop_dst
            msg.relayed = msg.sender != 1
            return
        target = _target(msg)
        if target is None or target == 1 or target == 0 or (target < 0 and target != -1):
            msg.receiver, msg.relayed = 1, False
        else:
            msg.receiver, msg.relayed = (target if target > 1 else None), True

    # -- transports ------------------------------------------------------------------------------
    def _enet3(self, payload: bytes, direction: str, channel: int | None) -> list[MpMessage]:
        if channel == 0:  # SYSCH_CONFIG: server -> client peer announcements
            scope = Scope()
            msg = MpMessage(kind="peer", command="SYSMSG", raw=payload, sender=1)
            try:
                check_size(ENET3_SYSMSG, len(payload), 0, "channel 0 system message")
                read_items(ENET3_SYSMSG.items, payload, 0, len(payload), scope)
            except LayoutError as e:
                return [msg.fail(e.offset, e.reason)]
            names = ENET3_SYSMSG.items[0].values or {}  # type: ignore[union-attr]
            kind = names.get(scope["sysmsg"], str(scope["sysmsg"]))
            msg.command, msg.peer = kind, scope["peer"]  # the engine's SYSMSG_ADD_PEER / SYSMSG_REMOVE_PEER
            msg.fields["sysmsg"] = kind
            if direction == "c2s" and self.direction_known:  # "Only server can send config messages"
                msg.fail(0, f"{kind} from a client on channel 0: the server drops it")
            return [msg]
        form = self._enet3_form(payload)
        header = _read_header(form, payload, "ENet peer header", "ENET_PEER_HEADER")
        if isinstance(header, MpMessage):
            return [header]
        scope, end = header
        msg = godot3.decode_packet(payload[end:], self.dialect, allow_objects=True)  # type: ignore[arg-type]
        _shift(msg, end)
        msg.fields.update(src=scope["src"], dst=scope["dst"], header=form.name)
        msg.sender = scope["src"]
        if direction == "c2s" and self.client_id is None:  # no CONNECT in the capture: the header says it
            self.client_id = scope["src"]
        self._resolve3(msg, scope["src"], scope["dst"])
        return [msg]

    def _enet3_form(self, payload: bytes) -> Any:
        if self.enet3_header is None:
            # 3.0/3.1 put a small flags u32 where 3.2+ has the command byte and the target's low bytes
            old = len(payload) >= 13 and payload[8] <= 2 and payload[9:12] == b"\0\0\0"
            self.enet3_header = "3.0-3.1" if old else "3.2+"
        return next(f for f in ENET3_PEER_HEADER if f.name == self.enet3_header)

    def _ws3(self, payload: bytes, direction: str) -> list[MpMessage]:
        header = _read_header(WS3_HEADER, payload, "WebSocket multiplayer header", "WS_HEADER")
        if isinstance(header, MpMessage):
            return [header]
        scope, end = header
        kind = WS3_TYPES.get(scope["type"])
        head = {"ws_type": kind or scope["type"], "from": scope["from"], "to": scope["to"]}
        if scope["type"] != 0:
            msg = MpMessage(kind="peer", command=kind or f"SYS_{scope['type']}", raw=payload[end:], sender=1)
            msg.fields.update(head)
            if kind is None:
                return [msg.fail(0, f"unknown WebSocket multiplayer type {scope['type']}")]
            if direction == "c2s":  # "Only server sends sys messages"
                return [msg.fail(0, f"{kind} from a client: the server rejects it")]
            try:
                check_size(WS3_SYS, len(payload) - end, end, kind)
                read_items(WS3_SYS.items, payload, end, len(payload), scope)
            except LayoutError as e:
                return [msg.fail(e.offset, e.reason)]
            msg.peer = scope["peer"]
            if kind == "SYS_ID":
                self.client_id = msg.peer
            return [msg]
        msg = godot3.decode_packet(payload[end:], self.dialect, allow_objects=True)  # type: ignore[arg-type]
        _shift(msg, end)
        msg.fields.update(head)
        msg.sender = scope["from"]
        self._resolve3(msg, scope["from"], scope["to"])
        return [msg]

    def _godot4(self, payload: bytes, direction: str, channel: int | None) -> list[MpMessage]:
        if self.transport == "websocket" and direction == "s2c" and self.ws_first_s2c:
            self.ws_first_s2c = False
            if len(payload) == WS4_PEER_ID.exact_size:
                scope = Scope()
                read_items(WS4_PEER_ID.items, payload, 0, len(payload), scope)
                msg = MpMessage(kind="peer", command="PEER_ID", raw=payload, peer=scope["peer"], sender=1)
                if scope["peer"] < WS4_MIN_PEER_ID:
                    return [msg.fail(0, f"peer id {scope['peer']} is below {WS4_MIN_PEER_ID}: the client closes")]
                self.client_id = scope["peer"]
                return [msg]
        sender = self._sender4(direction)
        receiver = self._sender4("s2c" if direction == "c2s" else "c2s")
        msg = godot4.decode_packet(payload, self.dialect, allow_objects=True,  # type: ignore[arg-type]
                                   confirm_form=self.confirm_form)
        msg.sender = self._peer_id(sender)
        if msg.fields.get("sys") in ("ADD_PEER", "DEL_PEER") and direction == "c2s" and self.direction_known \
                and not msg.error:
            msg.fail(1, f"SYS {msg.fields['sys']} from a client: only the server announces peers")
        self._resolve4(msg, sender, receiver)
        if msg.inner is not None:
            inner_sender: Any = msg.peer if direction == "s2c" else sender
            inner_receiver: Any = receiver if direction == "s2c" else msg.peer
            msg.inner.sender = self._peer_id(inner_sender)
            msg.fields["relay"] = ("from" if direction == "s2c" else "to", msg.peer)
            self._resolve4(msg.inner, inner_sender, inner_receiver)
        return [msg]

    def _sender4(self, direction: str) -> Any:
        """Cache key of a side: the server is peer 1; the client is "client" (its id may be learnt
        only later, and the key must not change)."""
        return 1 if direction == "s2c" else CLIENT

    def _peer_id(self, key: Any) -> int | None:
        return self.client_id if key == CLIENT else key

    # -- caches ----------------------------------------------------------------------------------
    def _remember(self, table: _Cache, sender: Any, key: Any, value: Any) -> None:
        # an OrderedDict: dropping the oldest of a plain dict again and again scans its deleted
        # slots each time (seconds for one SPAWN with 150000 sync ids)
        t = table.get(sender)
        if t is None:
            if len(table) >= MAX_CACHE_SENDERS:  # forged sender ids: forget the least recently announcing
                table.size -= len(table.popitem(last=False)[1])
            t = table[sender] = OrderedDict()
        else:
            table.move_to_end(sender)
        if key not in t:
            if table.size >= MAX_CACHE_ENTRIES:  # over all senders: the least recently announcing one's oldest
                oldest = next(iter(table.values()))
                oldest.popitem(last=False)
                if not oldest and oldest is not t:
                    table.popitem(last=False)
                table.size -= 1
            table.size += 1
        t[key] = value

    def _resolve3(self, msg: MpMessage, sender: Any, receiver: Any) -> None:
        if msg.command == "SIMPLIFY_PATH" and msg.node is not None and msg.node_id is not None:
            self._remember(self.paths, sender, msg.node_id, msg.node)
        elif msg.command in ("REMOTE_CALL", "REMOTE_SET") and msg.node is None and msg.node_id is not None:
            msg.node = self.paths.get(sender, {}).get(msg.node_id)
            if msg.node is None:
                msg.fields["unresolved"] = f"path id {msg.node_id} of peer {sender} not announced in the capture"

    def _resolve4(self, msg: MpMessage, sender: Any, receiver: Any) -> None:
        c = msg.command
        if c == "SIMPLIFY_PATH" and msg.node is not None and msg.node_id is not None and not msg.error:
            if (sender, receiver, msg.node_id) in self.received:
                msg.fail(1 + MD5_HEX_SIZE, f"duplicate remote cache id {msg.node_id} for peer {sender}")
            self.received.add((sender, receiver, msg.node_id))
            if len(self.received) > MAX_CACHE_ENTRIES:
                self.received.clear()
            self._remember(self.paths, sender, msg.node_id, msg.node)
            self._remember(self.md5s, sender, msg.node_id, msg.fields.get("md5"))
            self._remember(self.path_md5s, sender, msg.node, msg.fields.get("md5"))
            if self.names is not None:
                t, status = self.names.table(msg.node, msg.fields.get("md5"))
                if t is not None and status == VERIFIED:
                    msg.fields["rpc_methods"] = [t.ids[i] for i in sorted(t.ids)]
                    msg.fields["rpc_names_source"] = t.source
                elif status:
                    msg.fields["rpc_names"] = status
        elif c == "CONFIRM_PATH":
            if msg.node_id is not None and msg.node is None:  # 4.3+: the receiver's own cache id
                msg.node = self.paths.get(receiver, {}).get(msg.node_id)
            if self.confirm_form is None and "form" in msg.fields and not msg.error:
                self.confirm_form = msg.fields["form"]
        elif c == "REMOTE_CALL":
            md5 = None
            if msg.node is None and msg.node_id is not None:
                msg.node = self.paths.get(sender, {}).get(msg.node_id)
                md5 = self.md5s.get(sender, {}).get(msg.node_id)
                if msg.node is None:
                    msg.fields["unresolved"] = f"cache id {msg.node_id} of peer {sender} not announced in the capture"
            elif msg.node is not None:  # an inline path (was a scan of the sender's cache per call)
                md5 = self.path_md5s.get(sender, {}).get(msg.node)
            if self.names is not None and msg.method_id is not None:
                r = self.names.resolve(msg.node, msg.method_id, md5)
                if r.name is not None:
                    msg.method = r.name
                    msg.fields["method_verified"] = r.status == VERIFIED
                if r.status and r.status not in (VERIFIED, UNVERIFIED):
                    msg.fields["method_names"] = r.status
        elif c == "SPAWN":
            spawner = self.paths.get(sender, {}).get(msg.node_id) if msg.node_id is not None else None
            msg.node = spawner
            name = msg.fields.get("name")
            # a SPAWN the engine refuses (a bad name, say) spawns nothing: it must not rename a spawned node
            if name is not None and "net_id" in msg.fields and not msg.error:
                self._remember(self.spawned, sender, msg.fields["net_id"], _Spawned(name, spawner))
                for sid in msg.fields.get("sync_ids", []):
                    self._remember(self.synchronizers, sender, sid, name)
        elif c == "DESPAWN":
            s = self.spawned.get(sender, {}).get(msg.fields.get("net_id", -1))
            if s is not None:
                msg.node = s.spawner
                msg.fields["name"] = s.name
        elif c == "SYNC":
            for e in msg.fields.get("entries", []):
                nid = e["net_id"]
                if SYNC_PATH_CACHE.get(nid):  # the synchronizer's path cache id
                    e["node"] = self.paths.get(sender, {}).get(SYNC_ID.get(nid))
                else:  # announced by a SPAWN: the spawned node it belongs to
                    e["spawned"] = self.synchronizers.get(sender, {}).get(nid)


def _target(msg: MpMessage) -> int | None:
    """The peer a client addressed a packet to: the Godot 3 header's target, or a Godot 4 relay's."""
    f = msg.fields
    if msg.inner is not None:
        way, peer = f.get("relay", ("to", msg.peer))
        return peer if way == "to" else None
    for key in ("dst", "to"):  # 3.x ENet peer header / WebSocket header
        if isinstance(f.get(key), int):
            return f[key]
    return None


def _shift(msg: MpMessage, by: int) -> None:
    """Offsets of a packet decoded after a transport header, made relative to the payload."""
    if msg.error_offset is not None:
        msg.error_offset += by
        msg.error = f"offset {msg.error_offset}: " + msg.error.split(": ", 1)[-1]  # type: ignore[union-attr]


def _read_header(form: Any, payload: bytes, what: str, command: str) -> tuple[Scope, int] | MpMessage:
    """A transport's peer header read into a scope (and where it ends), or the error message for the packet."""
    scope = Scope()
    try:
        check_size(form, len(payload), 0, what)
        return scope, read_items(form.items, payload, 0, len(payload), scope)
    except LayoutError as e:
        return MpMessage(kind="error", command=command, raw=payload).fail(e.offset, e.reason)
