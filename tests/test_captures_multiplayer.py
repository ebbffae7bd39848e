"""Every multiplayer capture read by ``read_pcap`` against its golden: what the engines printed
(calls, arguments with typeof / var_to_str / var_to_bytes, peer signals) and the packet bytes.

One comparator for all of them: Godot 3.2.3 over ENet and WebSocket (tools/captures/
make_multiplayer_captures.py) and Godot 4.6 over WebSocket (make_godot4_captures.py). Goldens with
no engine print for a field (path cache packets) carry the bytes, which must match.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from godot_dissect import decode_prefix, encode
from godot_dissect.pcap.reader import read_pcap
from godot_dissect.records import Record
from godot_dissect.spec import get_dialect
from godot_dissect.text import to_text
from godot_dissect.values import NodePath, type_key

from .test_codec_engine import same

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "captures"
MANIFEST = json.loads((CAPTURES / "manifest.json").read_text())
#: captures whose golden lines are multiplayer packets, and the project folder with their scripts
PROJECTS = {"godot4-websocket-multiplayer": ROOT / "tools" / "captures" / "godot4",
            "godot4-enet-multiplayer-assembled": ROOT / "tools" / "captures" / "godot4_mp"}
NAMES = sorted(n for n in MANIFEST if "-multiplayer" in n and (CAPTURES / MANIFEST[n]["pcap"]).exists())
PEER_COMMANDS = {"ADD_PEER", "REMOVE_PEER", "SYS_ID", "SYS_ADD", "SYS_DEL"}


def golden(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (CAPTURES / MANIFEST[name]["golden"]).read_text().splitlines()]


def flow_of(r: Record) -> str:
    return f"{r.transport} {r.src}:{r.sport} -> {r.dst}:{r.dport}"


def _has_node_path(v: Any) -> bool:
    if isinstance(v, NodePath):
        return True
    if isinstance(v, dict):
        return any(_has_node_path(k) or _has_node_path(x) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return any(_has_node_path(x) for x in v)
    return False


def check_value(value: Any, g: dict[str, Any], dialect: str, where: str) -> list[str]:
    """One argument/value against the engine's typeof / var_to_str / var_to_bytes prints."""
    problems = []
    entry = get_dialect(dialect).by_key(type_key(value))
    if entry is None or entry.id != g["type"] or entry.name != g["type_name"]:
        problems.append(f"{where}: type {entry.name if entry else None}, engine {g['type_name']}")
    ours = to_text(value, dialect)
    if "text" in g and ours != g["text"]:
        problems.append(f"{where}: text {ours!r}, engine {g['text']!r}")
    if "text_head" in g and not ours.startswith(g["text_head"]):
        problems.append(f"{where}: text does not start like the engine's")
    mine = encode(value, dialect)
    if "var_to_bytes" in g:
        engine = bytes.fromhex(g["var_to_bytes"])
        if mine != engine:  # NodePath padding is uninitialised in both engines
            back, used = decode_prefix(engine, dialect, allow_objects=True)
            if not (_has_node_path(value) and used == len(engine) and same(back, value)):
                problems.append(f"{where}: var_to_bytes {mine.hex()[:80]} != engine {g['var_to_bytes'][:80]}")
    elif len(mine) != g["size"] or hashlib.sha256(mine).hexdigest() != g["hex_sha256"]:
        problems.append(f"{where}: encoded size/sha256 differ from the engine's")
    return problems


def _call(r: Record, g: dict[str, Any], announced: dict[int, str], with_names: bool, where: str) -> list[str]:
    problems = []
    f = r.fields or {}
    if "method_id" in g and r.method_id != g["method_id"]:
        problems.append(f"{where}: method id {r.method_id}, golden {g['method_id']}")
    if ("method_id" not in g or with_names) and r.method != g["method"]:
        problems.append(f"{where}: method {r.method!r}, golden {g['method']!r}")
    if "method_id" in g and with_names and f.get("method_verified") is not True:
        problems.append(f"{where}: method name not verified by the md5")
    if "method_id" in g and not with_names and r.method is not None:
        problems.append(f"{where}: a method name {r.method!r} without any names given")
    if "node_path" in g and r.node != g["node_path"]:
        problems.append(f"{where}: node {r.node!r}, golden {g['node_path']!r}")
    if "node_cache_id" in g and (f.get("node_id") != g["node_cache_id"] or r.node != announced.get(g["node_cache_id"])):
        problems.append(f"{where}: node id {f.get('node_id')} -> {r.node!r}, golden {g['node_cache_id']}")
    if "byte_only" in g and bool(f.get("byte_only")) != g["byte_only"]:
        problems.append(f"{where}: byte_only {f.get('byte_only')}, golden {g['byte_only']}")
    args = g.get("args", [])
    values = [r.value] if r.kind == "rset" else list(r.value or [])
    if len(values) != g.get("argc", len(args)):
        problems.append(f"{where}: {len(values)} values, the engine printed {len(args)}")
    if g.get("argc", len(args)) != len(args):  # fewer on the wire: the method's defaults were printed
        return problems
    for i, (v, a) in enumerate(zip(values, args, strict=False)):
        problems += check_value(v, a, r.dialect, f"{where} arg {i}")
    expected = g.get("text", "")
    shown = f"{r.method} = {r.text()}" if r.kind == "rset" else f"{r.method or g['method']}({r.text()})"
    if "text" in g and "size" not in g and shown != expected:
        problems.append(f"{where}: text {shown!r}, golden {expected!r}")
    return problems


def compare(name: str, records: list[Record], with_names: bool = True) -> list[str]:
    gold = golden(name)
    got: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        if r.kind != "enet":  # ENet control commands are not Godot packets
            got[flow_of(r)].append(r)
    problems = [f"frame {r.frame}: {r.command} {r.error}" for r in records if r.kind == "error"]
    # (flow, sending peer) -> cache id -> path: caches are per sender (the server relays for others)
    announced: dict[tuple[str, Any], dict[int, str]] = defaultdict(dict)
    flows: dict[str, list[dict]] = defaultdict(list)
    for g in gold:
        flows[g["flow"]].append(g)
        if g.get("inner_command", g["command"]) == "SIMPLIFY_PATH":
            inner = g.get("inner", g)
            announced[g["flow"], _sender(g)][inner["cache_id"]] = inner["node_path"]
    for flow, msgs in flows.items():
        recs = got.get(flow, [])
        if len(recs) != len(msgs):
            problems.append(f"{flow}: {len(recs)} records, golden has {len(msgs)}")
        for r, g in zip(recs, sorted(msgs, key=lambda g: g["index"]), strict=False):
            where = f"{flow} #{g['index']} frame {r.frame}"
            problems += _one(r, g, announced[flow, _sender(g)], with_names, where)
    return problems


def _sender(g: dict[str, Any]) -> Any:
    """The peer whose path cache a golden line's packet uses (a relay's source, else the sender)."""
    sender = g.get("from_peer", g.get("peer_src"))
    return g["relay_peer"] if g.get("sys") == "RELAY" and sender == 1 else sender


def _one(r: Record, g: dict[str, Any], announced: dict[int, str], with_names: bool, where: str) -> list[str]:
    problems = []
    f = r.fields or {}
    if "hex" in g and r.raw.hex() != g["hex"]:
        problems.append(f"{where}: bytes {r.raw.hex()[:60]} differ from {g['hex'][:60]}")
    if "hex_sha256" in g and (len(r.raw), hashlib.sha256(r.raw).hexdigest()) != (g["size"], g["hex_sha256"]):
        problems.append(f"{where}: packet size/sha256 differ")
    if "enet_channel" in g and r.channel != g["enet_channel"]:
        problems.append(f"{where}: ENet channel {r.channel}, golden {g['enet_channel']}")
    if "peer_src" in g and "peer" not in g:
        src, dst = (f.get("src"), f.get("dst")) if "src" in f else (f.get("from"), f.get("to"))
        if (src, dst) != (g["peer_src"], g["peer_dst"]):
            problems.append(f"{where}: header {src} -> {dst}, golden {g['peer_src']} -> {g['peer_dst']}")
    if "remote_sender_id" in g and f.get("sender") != g["remote_sender_id"]:
        problems.append(f"{where}: sender {f.get('sender')}, the engine says {g['remote_sender_id']}")
    cmd = g["command"]
    if cmd == "SYS" and g["sys"] == "RELAY":  # a relayed packet: shown as the packet inside
        way = "from" if r.direction == "s2c" else "to"
        if (f.get("sys"), r.peer, f.get("relay")) != ("RELAY", g["relay_peer"], f"{way} {g['relay_peer']}"):
            problems.append(f"{where}: relay {f.get('sys')} {f.get('relay')} peer={r.peer}, golden {g['relay_peer']}")
        g = {**g, **g.get("inner", {}), "command": g["inner_command"], "text": g["text"].split(": ", 1)[-1]}
        cmd = g["command"]
    ok = _command(r, f, g, cmd)
    if cmd in ("REMOTE_CALL", "REMOTE_SET"):
        problems += _call(r, g, announced, with_names, where)
    elif cmd == "SPAWN":
        problems += _values(r.value or [], g.get("properties", []), r.dialect, where)
        if "spawn_arg" in g:
            problems += check_value(f.get("arg"), g["spawn_arg"], r.dialect, f"{where} spawn arg")
    elif cmd == "SYNC":
        entries = f.get("entries", [])
        if len(entries) != len(g["entries"]):
            problems.append(f"{where}: {len(entries)} entries, golden {len(g['entries'])}")
        for i, (e, v, ge) in enumerate(zip(entries, r.value or [], g["entries"], strict=False)):
            raw_id = (ge["net_id"] | 0x80000000) if ge.get("path_cache") else ge["net_id"]
            if e["net_id"] != raw_id or e.get("indexes") != ge.get("indexes"):
                problems.append(f"{where} entry {i}: net id {e['net_id']:#x} indexes {e.get('indexes')}, golden {ge}")
            if ge.get("path_cache") and e.get("node") != ge["synchronizer"]:
                problems.append(f"{where} entry {i}: node {e.get('node')!r}, golden {ge['synchronizer']!r}")
            if not ge.get("path_cache") and f"/{e.get('spawned')}/" not in ge["synchronizer"]:
                problems.append(f"{where} entry {i}: spawned node {e.get('spawned')!r}, golden {ge['synchronizer']!r}")
            problems += _values(v, ge["properties"], r.dialect, f"{where} entry {i}")
    if not ok:
        problems.append(f"{where}: {cmd} read as {r.kind} {r.command} node={r.node} peer={r.peer} {f}")
    return problems


def _values(values: list[Any], golden_values: list[dict[str, Any]], dialect: str, where: str) -> list[str]:
    if len(values) != len(golden_values):
        return [f"{where}: {len(values)} values, the engine printed {len(golden_values)}"]
    out = []
    for i, (v, g) in enumerate(zip(values, golden_values, strict=True)):
        out += check_value(v, g, dialect, f"{where} value {i}")
    return out


def _command(r: Record, f: dict[str, Any], g: dict[str, Any], cmd: str) -> bool:
    """The packet's own fields against the golden line."""
    if cmd in PEER_COMMANDS:
        return (r.kind, r.command, r.peer) == ("peer", cmd, g["peer"])
    if cmd == "PEER_ID":
        return (r.kind, r.command, r.peer) == ("peer", "PEER_ID", g["peer_id"])
    if cmd == "SYS":
        if g["sys"] == "AUTH":
            return (r.kind, f.get("sys"), r.value) == ("sys", "AUTH", bytes.fromhex(g["auth_hex"]))
        return (r.kind, f.get("sys"), r.peer) == ("sys", g["sys"], g["peer"])
    if cmd == "SIMPLIFY_PATH":
        ok = (r.kind, r.node, f.get("cache_id", f.get("path_id"))) == ("simplify_path", g["node_path"], g["cache_id"])
        ok = ok and f.get("md5") == g.get("md5")
        return ok and ("rpc_methods" not in g or not r.fields or f.get("rpc_methods", []) == g["rpc_methods"]
                       or "rpc_methods" not in f)
    if cmd == "CONFIRM_PATH":
        return r.kind == "confirm_path" and all(
            (r.node if k == "node_path" else f.get(k)) == g[k] for k in ("valid", "cache_id", "node_path") if k in g)
    if cmd == "RAW":
        return r.kind == "raw" and r.value == bytes.fromhex(g["data_hex"])
    if cmd in ("REMOTE_CALL", "REMOTE_SET"):
        return (r.kind, r.command) == ({"REMOTE_CALL": "rpc", "REMOTE_SET": "rset"}[cmd], cmd)
    if cmd == "SPAWN":
        mine = (r.kind, r.node, f.get("node_id"), f.get("net_id"), f.get("scene_id"), f.get("sync_ids"), f.get("name"))
        return mine == ("spawn", g["spawner"], g["spawner_cache_id"], g["net_id"], g["scene_id"], g["sync_ids"],
                        g["name"])
    if cmd == "DESPAWN":
        return (r.kind, r.node, f.get("net_id"), f.get("name")) == ("despawn", g["spawner"], g["net_id"], g["name"])
    if cmd == "SYNC":
        return r.kind == "sync" and f.get("delta") == g["delta"] and f.get("time") == g.get("time")
    return False


@pytest.mark.parametrize("name", NAMES)
def test_multiplayer_capture_matches_golden(name: str) -> None:
    project = PROJECTS.get(name)
    records = list(read_pcap(str(CAPTURES / MANIFEST[name]["pcap"]), project=str(project) if project else None))
    problems = compare(name, records)
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:40])
    family = 3 if name.startswith("godot3") else 4
    assert {r.dialect for r in records if r.kind != "enet"} == {f"godot{family}"}


def test_enet_capture_shows_the_handshake_and_only_asked_for_control_commands() -> None:
    path = str(CAPTURES / "godot3-enet-multiplayer.pcapng")
    if not Path(path).exists():
        pytest.skip("capture not made yet")
    enet = [r for r in read_pcap(path) if r.kind == "enet"]
    assert {r.command for r in enet} == {"CONNECT", "VERIFY_CONNECT", "DISCONNECT"}
    connects = [r for r in enet if r.command == "CONNECT"]
    ids = MANIFEST["godot3-enet-multiplayer"]["peer_ids"]
    # CONNECT data is the client's Godot unique id; channel count 3 = Godot 3
    assert sorted(r.fields["data"] for r in connects) == sorted(v for k, v in ids.items() if k != "server")
    assert all(r.fields["godot_major"] == 3 for r in connects)
    everything = [r for r in read_pcap(path, enet_control=True) if r.kind == "enet"]
    assert {"ACKNOWLEDGE", "PING"} <= {r.command for r in everything}
    assert len(everything) > len(enet)


WS_NAMES = [n for n in NAMES if "websocket" in n]


@pytest.mark.parametrize("plan", ["one_byte", "all_in_one", "duplicated_and_reordered"])
@pytest.mark.parametrize("name", WS_NAMES)
def test_resegmented_websocket_capture_gives_the_same_messages(name: str, plan: str, tmp_path: Path) -> None:
    from . import resegment as R

    out = tmp_path / "reseg.pcap"
    R.resegment(str(CAPTURES / MANIFEST[name]["pcap"]), str(out), getattr(R, plan))
    project = PROJECTS.get(name)
    records = list(read_pcap(str(out), project=str(project) if project else None))
    problems = compare(name, records)
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:40])
