"""One golden line per engine-made SceneMultiplayer packet, from what the engine printed.

The values (method names, arguments, spawned names and properties, synced values, raw bytes, peers)
come from the prints of the SceneMultiplayer that received the packet, tagged by wire.gd with the
packet it was processing.  Protocol fields (ids, sizes, flags) are read from the packet by
wire_view.py and each one is checked against those prints before the line is written.
"""

from __future__ import annotations

import hashlib
from typing import Any

from common import CaptureError
from engine_log import Event, Log, Packet
from make_godot4_captures import arg_records, call_text, unhex, wire_bytes
from wire_view import view

from godot_dissect import encode

SOURCE = "engine (SceneMultiplayer over a recording MultiplayerPeerExtension)"


def prop_records(values: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"path": v["path"], **arg_records([v])[0]} for v in values]


def _same_packed_bytes(arg: dict[str, Any], data: bytes) -> bool:
    """Is ``arg`` (printed by the receiver) the PackedByteArray ``data``?  Compared through its
    var_to_bytes (made here by godot_dissect.encode: a codec bug fails the check, it cannot pass
    a wrong golden); big ones were printed as size + SHA-256."""
    if arg.get("type_name") != "PackedByteArray":
        return False
    vb = encode(data, "godot4")
    if "hex" in arg:
        return bytes.fromhex(arg["hex"]) == vb
    return arg["size"] == len(vb) and arg["hex_sha256"] == hashlib.sha256(vb).hexdigest()


def _props_text(props: list[dict[str, Any]]) -> str:
    return ", ".join(f"{p['path'][2:] if p['path'].startswith('.:') else p['path']}={p['text']}" for p in props)


class GoldenBuilder:
    def __init__(self, log: Log, names: dict[int, str]) -> None:
        self.log = log
        self.names = names  # peer id -> "server", "client A", ...
        self.children: dict[int, list[Packet]] = {}
        for q in log.packets:
            self.children.setdefault(q.cause, []).append(q)
        self.paths: dict[tuple[int, int, int], str] = {}  # (sender, receiver, cache id) -> path, from SIMPLIFY_PATH
        self.simplified_at: dict[tuple[int, int, int], int] = {}  # same key -> seq of that SIMPLIFY_PATH

    # ---- the packet as a whole

    def record(self, p: Packet) -> dict[str, Any]:
        v = view(p.data)
        rec: dict[str, Any] = {"command": v["command"], "from_peer": p.src, "to_peer": p.dst,
                               "channel": p.channel, "transfer_mode": p.transfer_mode, "label": p.step,
                               "api": f"SceneMultiplayer ({self.names[p.src]}) -> recording MultiplayerPeerExtension "
                                      f"-> SceneMultiplayer ({self.names[p.dst]})"}
        rec.update(wire_bytes(p.data))
        try:
            if v["command"] == "SYS" and v["sys"] == "RELAY":
                rec.update(self._relay(p, v))
            else:
                rec.update(self._content(v, p, p.src, p.dst, [p.seq]))
        except (KeyError, IndexError, ValueError) as e:
            raise CaptureError(f"packet {p.seq} ({v['command']}, {p.data.hex()[:80]}): {e!r}") from None
        except CaptureError as e:
            raise CaptureError(f"packet {p.seq} ({v['command']}, {p.data.hex()[:80]}): {e}") from None
        return rec

    def _relay(self, p: Packet, v: dict[str, Any]) -> dict[str, Any]:
        inner = v["inner"]
        if p.src == 1:  # server -> client: peer = the original sender; the client runs it
            src, dst, seqs = v["peer"], p.dst, [p.seq]
            prefix = f"RELAY from {v['peer']}: "
            where = f"{self.names[p.dst]}'s prints"
        else:  # client -> server: peer = the destination; the server forwards it, the destination runs it
            src, dst = p.src, v["peer"]
            fwd = [q for q in self.children.get(p.seq, []) if q.src == 1]
            if dst > 0 and [q.dst for q in fwd] != [dst]:
                raise CaptureError(f"relay to {dst} forwarded to {[q.dst for q in fwd]}")
            seqs = [p.seq] + [q.seq for q in fwd]
            prefix = f"RELAY to {v['peer']}: "
            where = "the final receiver's prints (the packet the server forwarded: seq " \
                    + ", ".join(str(q.seq) for q in fwd) + ")"
        out: dict[str, Any] = {"sys": "RELAY", "relay_peer": v["peer"], "inner_command": inner["command"]}
        body = self._content(inner, p, src, dst, seqs)
        body["text"] = prefix + body["text"]
        body["golden_source"] = body["golden_source"] + f" [relayed; {where}]"
        out.update(body)
        return out

    # ---- what the packet says, per command

    def _content(self, v: dict[str, Any], p: Packet, src: int, dst: int, seqs: list[int]) -> dict[str, Any]:
        events = [e for s in seqs for e in self.log.events(s)]
        return getattr(self, "_" + v["command"].lower())(v, p, src, dst, events)

    def _remote_call(self, v: dict[str, Any], p: Packet, src: int, dst: int, events: list[Event]) -> dict[str, Any]:
        gots = [e for e in events if e.kind == "GOT"]
        if len(gots) != 1:
            raise CaptureError(f"{len(gots)} receivers printed this call")
        g = gots[0]
        sender, path, method = int(g.f[0]), g.f[1], g.f[2]
        if sender != src:
            raise CaptureError(f"remote sender {sender}, the packet came from {src}")
        out: dict[str, Any] = {"text": call_text(method, g.values), "method": method, "method_id": v["method_id"],
                               "node_path": path}
        if "node_path" in v:
            if v["node_path"] != path:
                raise CaptureError(f"path {v['node_path']!r} in the packet, {path!r} ran the call")
        else:
            cached = self.paths.get((src, dst, v["node_cache_id"]))
            if cached != path:
                raise CaptureError(f"cache id {v['node_cache_id']} was {cached!r}, {path!r} ran the call")
            out["node_cache_id"] = v["node_cache_id"]
        table = self.log.rpc_tables[path]
        if table.methods.get(v["method_id"]) != method:
            raise CaptureError(f"method id {v['method_id']} is {table.methods.get(v['method_id'])!r} in the "
                               f"engine's table, {method!r} ran")
        args = arg_records(g.values)
        if v["byte_only"]:
            if v["argc"] == 1 and not _same_packed_bytes(g.values[0], bytes.fromhex(v["args_hex"])):
                raise CaptureError("byte-only argument differs from the PackedByteArray the receiver got")
            if v["argc"] == 0 and any(a["type"] != 0 for a in g.values):
                raise CaptureError("no argument on the wire, the receiver got one")
        elif v["argc"] != len(g.values):
            raise CaptureError(f"argc {v['argc']} on the wire, {len(g.values)} arguments ran")
        out.update(node_id_bytes=v["node_id_bytes"], method_id_bytes=v["method_id_bytes"],
                   byte_only=v["byte_only"], argc=v["argc"], args=args, remote_sender_id=sender, receiver=g.uid)
        sent = self._origin(p, "CALL")
        if sent is not None and p.src == src:
            sent_args = arg_records(sent.values)
            if [a.get("text") for a in sent_args] != [a.get("text") for a in args]:
                out["sent_args"] = sent_args  # e.g. an empty PackedByteArray arrives as no argument
        out["golden_source"] = f"{SOURCE}: the receiver's prints inside the called method (remote sender id, " \
                               "node path, method, typeof/type_string/var_to_str/var_to_bytes of each argument); " \
                               "method_id checked against the engine's RPC table"
        return out

    def _simplify_path(self, v: dict[str, Any], p: Packet, src: int, dst: int, events: list[Event]) -> dict[str, Any]:
        table = self.log.rpc_tables[v["node_path"]]
        if v["md5"] != table.md5:
            raise CaptureError(f"md5 {v['md5']} != the engine's md5 {table.md5} of {v['node_path']}'s RPC names")
        key = (src, dst, v["cache_id"])
        self.paths[key] = v["node_path"]
        self.simplified_at[key] = p.seq
        confirm = self._find_confirm(p.seq, dst, src, v["cache_id"])
        return {"text": f"SIMPLIFY_PATH {v['node_path']} cache_id={v['cache_id']}", "md5": v["md5"],
                "cache_id": v["cache_id"], "node_path": v["node_path"],
                "rpc_methods": [table.methods[k] for k in sorted(table.methods)],
                "golden_source": f"{SOURCE}: md5 = the engine's md5_text() of the node's RPC names; the receiver "
                                 f"answered CONFIRM_PATH valid=1 (packet seq {confirm})"}

    def _find_confirm(self, after: int, src: int, dst: int, cache_id: int) -> int:
        for q in self.log.packets[after + 1:]:
            v = view(q.data)
            if v["command"] == "SYS" and v["sys"] == "RELAY":
                qsrc = v["peer"] if q.src == 1 else q.src
                qdst = q.dst if q.src == 1 else v["peer"]
                v = v["inner"]
            else:
                qsrc, qdst = q.src, q.dst
            if v["command"] == "CONFIRM_PATH" and (qsrc, qdst, v["cache_id"]) == (src, dst, cache_id):
                if not v["valid"]:
                    raise CaptureError(f"peer {src} rejected cache id {cache_id} (checksum)")
                return q.seq
        raise CaptureError(f"peer {src} never confirmed cache id {cache_id}")

    def _confirm_path(self, v: dict[str, Any], p: Packet, src: int, dst: int, events: list[Event]) -> dict[str, Any]:
        key = (dst, src, v["cache_id"])
        if key not in self.paths:
            raise CaptureError(f"confirms cache id {v['cache_id']}, which {dst} never sent to {src}")
        return {"text": f"CONFIRM_PATH cache_id={v['cache_id']} valid={v['valid']}", "valid": v["valid"],
                "cache_id": v["cache_id"], "node_path": self.paths[key],
                "golden_source": f"{SOURCE}: the engine's answer to SIMPLIFY_PATH seq {self.simplified_at[key]}"}

    def _raw(self, v: dict[str, Any], p: Packet, src: int, dst: int, events: list[Event]) -> dict[str, Any]:
        got = [e for e in events if e.kind == "RAW_GOT"]
        if [(int(e.f[0]), e.f[1].lower()) for e in got] != [(src, v["data_hex"])]:
            raise CaptureError(f"peer_packet printed {[e.f for e in got]}")
        sent = self._origin(p, "RAW_SENT")
        if sent is not None and p.src == src and sent.f[3].lower() != v["data_hex"]:
            raise CaptureError("send_bytes() printed other bytes")
        return {"text": f"RAW {bytes.fromhex(v['data_hex'])!r}", "data_hex": v["data_hex"],
                "golden_source": f"{SOURCE}: the receiver's peer_packet signal (sender id, bytes)"}

    def _spawn(self, v: dict[str, Any], p: Packet, src: int, dst: int, events: list[Event]) -> dict[str, Any]:
        spawned = [e for e in events if e.kind == "SPAWNED"]
        if len(spawned) != 1:
            raise CaptureError(f"{len(spawned)} spawned signals")
        e = spawned[0]
        spawner, name, scene = e.f[0], e.f[1], unhex(e.f[2])
        if name != v["name"] or self.paths.get((src, dst, v["spawner_cache_id"])) != spawner:
            raise CaptureError(f"spawned {spawner}/{name}, the packet says {v['name']} by cache id "
                               f"{v['spawner_cache_id']}")
        props = prop_records(e.values)
        out: dict[str, Any] = {"scene_id": v["scene_id"], "scene": scene or None, "spawner": spawner,
                               "spawner_cache_id": v["spawner_cache_id"], "net_id": v["net_id"],
                               "sync_ids": v["sync_ids"], "name": name}
        what = scene
        fns = [x for x in events if x.kind == "SPAWN_FN"]
        if v["scene_id"] == 0xFF:
            if len(fns) != 1:
                raise CaptureError("custom spawn without one spawn_function call")
            out["spawn_arg"] = arg_records(fns[0].values)[0]
            what = f"custom {out['spawn_arg'].get('text')}"
        elif fns:
            raise CaptureError("spawn_function ran for a scene spawn")
        out.update(properties=props, text=f"SPAWN {name} ({what}): {_props_text(props)}",
                   golden_source=f"{SOURCE}: the receiver's spawned signal (node name, scene, spawn properties "
                                 "after the spawn state was applied)"
                                 + (" and its spawn_function's argument" if fns else ""))
        return out

    def _despawn(self, v: dict[str, Any], p: Packet, src: int, dst: int, events: list[Event]) -> dict[str, Any]:
        gone = [e for e in events if e.kind == "DESPAWNED"]
        if len(gone) != 1:
            raise CaptureError(f"{len(gone)} despawned signals")
        return {"text": f"DESPAWN {gone[0].f[1]} net_id={v['net_id']}", "net_id": v["net_id"],
                "spawner": gone[0].f[0], "name": gone[0].f[1],
                "golden_source": f"{SOURCE}: the receiver's despawned signal"}

    def _sync(self, v: dict[str, Any], p: Packet, src: int, dst: int, events: list[Event]) -> dict[str, Any]:
        kind = "DELTA" if v["delta"] else "SYNCED"
        synced = [e for e in events if e.kind == kind]
        if len(synced) != len(v["entries"]):
            raise CaptureError(f"{len(v['entries'])} entries, {len(synced)} {kind} prints")
        entries = []
        for ent, e in zip(v["entries"], synced, strict=True):
            path = e.f[0]
            if ent["path_cache"] and self.paths.get((src, dst, ent["net_id"])) != path:
                raise CaptureError(f"path-cache net id {ent['net_id']} is not {path}")
            values = e.values
            if v["delta"]:  # bit i of indexes = the i-th watched property (the DELTA print lists them all)
                values = [x for i, x in enumerate(e.values) if ent["indexes"] >> i & 1]
            r: dict[str, Any] = {"net_id": ent["net_id"], "path_cache": ent["path_cache"]}
            if v["delta"]:
                r["indexes"] = ent["indexes"]
            r.update(synchronizer=path, properties=prop_records(values))
            entries.append(r)
        head = "SYNC delta" if v["delta"] else f"SYNC time={v['time']}"
        text = head + ": " + "; ".join(f"{r['synchronizer']} {_props_text(r['properties'])}" for r in entries)
        out: dict[str, Any] = {"text": text, "delta": v["delta"]}
        if not v["delta"]:
            out["time"] = v["time"]
        out.update(entries=entries,
                   golden_source=f"{SOURCE}: the receiver's {'delta_synchronized' if v['delta'] else 'synchronized'} "
                                 "signal per synchronizer, with the property values it then had")
        return out

    def _sys(self, v: dict[str, Any], p: Packet, src: int, dst: int, events: list[Event]) -> dict[str, Any]:
        name = v["sys"]
        if name == "AUTH":
            data = bytes.fromhex(v["auth_hex"])
            if data:
                got = [e for e in events if e.kind == "AUTH_GOT"]
                if [(int(e.f[0]), e.f[1].lower()) for e in got] != [(src, v["auth_hex"])]:
                    raise CaptureError(f"auth callback printed {[e.f for e in got]}")
                return {"sys": name, "auth_hex": v["auth_hex"], "text": f"SYS AUTH {data!r}",
                        "golden_source": f"{SOURCE}: the receiver's auth_callback (sender id, data)"}
            admitted = [e for e in events if (e.kind == "PEER" and e.f[0] == "connected" and int(e.f[1]) == src)
                        or e.kind == "CONNECTED_TO_SERVER"]
            return {"sys": name, "auth_hex": "", "text": "SYS AUTH complete", "admitted": bool(admitted),
                    "golden_source": f"{SOURCE}: complete_auth()'s notification"
                                     + ("; the receiver admitted the peer on it (peer_connected)" if admitted else "")}
        state = {"ADD_PEER": "connected", "DEL_PEER": "disconnected"}[name]
        seen = [e for e in events if e.kind == "PEER" and e.f[0] == state and int(e.f[1]) == v["peer"]]
        if len(seen) != 1:
            raise CaptureError(f"the receiver did not print peer {state} {v['peer']}")
        return {"sys": name, "peer": v["peer"], "text": f"SYS {name} {v['peer']}",
                "golden_source": f"{SOURCE}: the receiver's peer_{state} signal"}

    def _origin(self, p: Packet, kind: str) -> Event | None:
        if p.cause != -1 or p.origin < 0:
            return None
        e = self.log.origins[p.origin]
        return e if e.kind == kind else None
