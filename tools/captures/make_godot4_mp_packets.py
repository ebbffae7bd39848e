#!/usr/bin/env python3
"""Godot 4.6 SceneMultiplayer packets made by the engine, their golden, and an assembled ENet pcap.

    python tools/captures/make_godot4_mp_packets.py [--out captures/] [--keep-log DIR]

There is no native Godot 4 here and the 4.6 web build cannot open UDP sockets, so no real Godot 4
ENet capture can be made.  SceneMultiplayer runs on any MultiplayerPeer, though: the project in
tools/captures/godot4_mp/ runs a server and two clients in ONE engine process (the official 4.6 web
export template under Node.js), each SceneMultiplayer on its own subtree, joined by a recording
MultiplayerPeerExtension (loop_peer.gd + wire.gd) that prints every packet (bytes, from, to,
channel, transfer mode) and delivers it.  The scenario (main.gd) drives real features: RPCs with
every compression case, path cache, spawn/despawn, sync and delta sync, auth, peers, relay, RAW.
The receiving SceneMultiplayer prints what it got; those prints are the golden.

Writes (into --out), NAME = godot4-enet-multiplayer-assembled:
  NAME.golden.jsonl   one line per engine-made packet: the golden (flows = the pcap's conversations)
  NAME.pcapng         the same packets wrapped in ENet datagrams as Godot 4's ENetMultiplayerPeer would
                      send them -- ASSEMBLED, not captured (godot4_mp/assemble.py)
  NAME.enet.jsonl     the ENet datagrams of that pcap, as built (like godot3-enet-multiplayer.enet.jsonl)
and the capture's entry in manifest.json.  Before anything is written: every golden line is
checked against the packet bytes (wire_view.py), tshark must read exactly the datagrams that were
built, and godot_dissect.enet's parser + reassembler must give back exactly the engine's packets
per conversation.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROJECT = HERE / "godot4_mp"
sys.path[:0] = [str(ROOT), str(HERE), str(PROJECT)]

from assemble import ASSEMBLED, SERVER_ID, assemble, frame_records, write_pcapng  # noqa: E402
from common import CaptureError  # noqa: E402
from engine_log import Log, parse_log  # noqa: E402
from golden import GoldenBuilder  # noqa: E402
from make_godot4_captures import engine_errors, order_keys, tshark_fields, update_manifest, wire_bytes  # noqa: E402

from godot_dissect.enet.parse import parse_datagram  # noqa: E402
from godot_dissect.enet.reassembly import EnetReassembler  # noqa: E402
from godot_dissect.engines import ensure_installed, find_node, web_engine_dir  # noqa: E402
from godot_dissect.engines.pck import build_pck, default_settings, project_binary  # noqa: E402
from godot_dissect.engines.runner import HERE as ENGINES_DIR  # noqa: E402
from godot_dissect.engines.runner import isolated_env, run_process  # noqa: E402

NAME = "godot4-enet-multiplayer-assembled"
GOLDEN = f"{NAME}.golden.jsonl"  # one line per engine-made packet
ENET_LIST = f"{NAME}.enet.jsonl"  # one line per ENet datagram of the pcap, as built
CLIENT_PORT_BASE = 51510  # client i (in order of first packet) uses UDP port CLIENT_PORT_BASE + i
REPORT_GD = HERE / "godot4" / "report.gd"  # the print format the WebSocket captures use too

DESCRIPTION = (
    "ASSEMBLED, not captured: " + ASSEMBLED + ". SceneMultiplayer packets made by the official Godot 4.6 web "
    "export template under Node.js, a server and two clients in one engine process joined by a recording "
    "MultiplayerPeerExtension (tools/captures/godot4_mp/): auth (SYS AUTH), ADD_PEER/DEL_PEER, RPCs with "
    "every compression case (8/16/32-bit node ids and the full-path form, 8- and 16-bit method ids, "
    "byte-only and zero-argument calls, bool/int compression of every width, standard Variants), "
    "SIMPLIFY_PATH/CONFIRM_PATH (4.3+ form), client-to-client calls and RAW through the server relay, "
    "MultiplayerSpawner spawns (scene list and custom spawn_function) and despawn, MultiplayerSynchronizer "
    "SYNC and delta SYNC (including a path-cache net id), RAW. Each packet then wrapped in ENet 1.3 as "
    "ENetMultiplayerPeer sends it (channel map, reliability, fragmentation, CONNECT with channelCount 255 "
    "and the client id, ACKs, DISCONNECT) by godot_dissect.enet.build; server 127.0.0.1:7000, one UDP "
    "conversation per client. The golden is " + GOLDEN + " (what the receiving engine printed).")


# --------------------------------------------------------------------------------------------------
# the engine


def project_pck() -> bytes:
    files = [("project.binary", project_binary(default_settings("res://main.tscn")))]
    files += [(f.name, f.read_bytes()) for f in sorted(PROJECT.iterdir()) if f.suffix in (".gd", ".tscn")]
    files.append(("report.gd", REPORT_GD.read_bytes()))
    return build_pck(files)


def run_engine(timeout: float, keep_log: Path | None) -> tuple[list[str], list[str]]:
    ensure_installed("godot4")
    node = find_node()
    if node is None:
        raise CaptureError("Node.js not found")
    with tempfile.TemporaryDirectory(prefix="gdx4mp-") as tmp:
        pck = Path(tmp) / "mp.pck"
        pck.write_bytes(project_pck())
        res = run_process([node, str(ENGINES_DIR / "run_web.js"), str(web_engine_dir()), str(pck),
                           str(int(timeout * 1000))], Path(tmp), isolated_env(Path(tmp)), timeout + 10)
    out, err = res.stdout.splitlines(), res.stderr.splitlines()
    if keep_log:
        keep_log.mkdir(parents=True, exist_ok=True)
        (keep_log / "godot4-mp.stdout.txt").write_text(res.stdout, encoding="utf-8")
        (keep_log / "godot4-mp.stderr.txt").write_text(res.stderr, encoding="utf-8")
    if res.timed_out or res.returncode != 0:
        raise CaptureError(f"the engine exited with {res.returncode} (timed out: {res.timed_out}):\n"
                           + "\n".join((err + out)[-30:]))
    bad = engine_errors(err)
    if bad:
        raise CaptureError("engine errors:\n  " + "\n  ".join(bad[:30]))
    return out, err


# --------------------------------------------------------------------------------------------------
# golden + pcap


def peer_names(log: Log) -> dict[int, str]:
    names = {SERVER_ID: "server"}
    for p in log.packets:
        for uid in (p.src, p.dst):
            if uid not in names:
                names[uid] = "client " + "ABCDEFGH"[len(names) - 1]
    return names


def departures(log: Log, records: list[dict[str, Any]], clients: list[int]) -> dict[int, int]:
    """client -> seq of the SYS DEL_PEER announcing it after its last packet (its DISCONNECT goes first)."""
    out = {}
    for uid in clients:
        last = max(p.seq for p in log.packets if uid in (p.src, p.dst))
        for r, p in zip(records, log.packets, strict=True):
            if p.seq > last and r.get("sys") == "DEL_PEER" and r.get("peer") == uid:
                out[uid] = p.seq
                break
    return out


def build_all(log: Log) -> tuple[list[dict[str, Any]], Any, dict[int, str]]:
    names = peer_names(log)
    builder = GoldenBuilder(log, names)
    recs = [builder.record(p) for p in log.packets]
    clients = [uid for uid in names if uid != SERVER_ID]
    ports = {uid: CLIENT_PORT_BASE + i for i, uid in enumerate(clients)}
    asm = assemble(log.packets, log.steps, ports, departures(log, recs, clients))
    index: Counter[str] = Counter()
    out = []
    for r, p in zip(recs, log.packets, strict=True):
        d = asm.deliveries[p.seq]
        r = {"seq": p.seq, "flow": d.flow, "index": index[d.flow], "kind": "multiplayer", **r, **d.fields()}
        index[d.flow] += 1
        out.append(order_keys(r))
    return out, asm, names


def verify_pcap(tshark: str, pcap: Path, asm: Any, recs: list[dict[str, Any]]) -> dict[str, Any]:
    """tshark reads exactly the datagrams built; godot_dissect.enet gives back exactly the packets."""
    rows = tshark_fields(tshark, pcap, ["frame.number", "ip.src", "udp.srcport", "ip.dst", "udp.dstport",
                                         "udp.payload"], "udp")
    if len(rows) != len(asm.frames):
        raise CaptureError(f"tshark reads {len(rows)} UDP datagrams, {len(asm.frames)} were written")
    reasm: dict[str, EnetReassembler] = {}
    got: dict[str, list[tuple[dict[str, Any], int | None]]] = {}
    for row, fr in zip(rows, asm.frames, strict=True):
        n, src, sport, dst, dport, payload = row
        if (int(n), src, int(sport), dst, int(dport)) != (fr.number, *fr.link.src, *fr.link.dst):
            raise CaptureError(f"frame {fr.number}: tshark sees {row[:5]}")
        if bytes.fromhex(payload) != fr.payload:
            raise CaptureError(f"frame {fr.number}: tshark's udp.payload differs from what was written")
        dg = parse_datagram(fr.payload)
        if dg.error is not None:
            raise CaptureError(f"frame {fr.number}: godot_dissect.enet: {dg.error}")
        flow = fr.link.flow
        for pl in reasm.setdefault(flow, EnetReassembler()).feed(dg, fr.number, fr.time):
            if pl.error:
                raise CaptureError(f"frame {fr.number}: reassembly: {pl.error}")
            got.setdefault(flow, []).append((wire_bytes(pl.data), pl.channel))
    want: dict[str, list[tuple[dict[str, Any], int | None]]] = {}
    for r in recs:
        want.setdefault(r["flow"], []).append(({k: r[k] for k in ("hex", "size", "hex_sha256") if k in r},
                                               r["enet_channel"]))
    if got != want:
        bad = [f for f in want if got.get(f) != want[f]]
        raise CaptureError(f"godot_dissect.enet does not give back the engine's packets on {bad}")
    return {"tshark_datagrams": len(rows), "enet_round_trip_packets": sum(len(v) for v in got.values())}


def summary(log: Log, recs: list[dict[str, Any]], asm: Any, names: dict[int, str]) -> dict[str, Any]:
    flows: dict[str, dict[str, Any]] = {}
    commands: dict[str, Counter[str]] = {}
    for r in recs:
        f = flows.setdefault(r["flow"], {"flow": r["flow"], "messages": 0,
                                         "direction": f"{names[r['from_peer']]} -> {names[r['to_peer']]}"})
        f["messages"] += 1
        commands.setdefault(r["flow"], Counter())[r["command"] + (f" {r['sys']}" if "sys" in r else "")] += 1
    frames = Counter(fr.link.flow for fr in asm.frames)
    for f in flows.values():
        f["datagrams"] = frames[f["flow"]]
    # the same keys as godot3-enet-multiplayer's "enet" entry
    enet = {"datagrams_file": ENET_LIST, "datagrams": len(asm.frames),
            "commands": dict(sorted(Counter(c.name for fr in asm.frames for c, _ in fr.commands).items())),
            "godot_packets_by_command_and_channel": dict(sorted(Counter(
                f"{r['enet_command']} ch{r['enet_channel']}" for r in recs).items())),
            "fragmented_packets": sum(1 for r in recs if "enet_fragments" in r)}
    return {
        "engine": f"Godot {log.engine} web export template (wasm32, single precision) under Node.js",
        "messages": len(recs),
        "flows": list(flows.values()),
        "commands": {k: dict(sorted(v.items())) for k, v in commands.items()},
        "peers": {v: k for k, v in names.items()},
        "enet": enet,
        "rpc_md5": {t.path: t.md5 for t in log.rpc_tables.values()},
        "unrecorded": {**log.sink, "why": "packets the server sent to the sink peer while burning path-cache "
                                          "ids (main.gd step 'burn'), so that Game/Mid and Game/Far get ids "
                                          "300 and 65600: dropped by the wire, in neither the golden nor the pcap"},
    }


def write_jsonl(path: Path, recs: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "captures")
    ap.add_argument("--keep-log", type=Path, help="write the engine's stdout/stderr here")
    ap.add_argument("--timeout", type=float, default=180.0)
    o = ap.parse_args(argv)
    tshark = shutil.which("tshark")
    if tshark is None:
        print("tshark not found (apt-get install -y tshark)", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    try:
        out, _ = run_engine(o.timeout, o.keep_log)
        log = parse_log(out)
        recs, asm, names = build_all(log)
        with tempfile.TemporaryDirectory(prefix="gdx4mp-") as tmp:
            pcap = Path(tmp) / f"{NAME}.pcapng"
            write_pcapng(asm.frames, str(pcap))
            checks = verify_pcap(tshark, pcap, asm, recs)
            o.out.mkdir(parents=True, exist_ok=True)
            write_jsonl(o.out / GOLDEN, recs)
            write_jsonl(o.out / ENET_LIST, frame_records(asm.frames))
            shutil.copyfile(pcap, o.out / pcap.name)
            (o.out / pcap.name).chmod(0o644)
    except CaptureError as e:
        print(f"FAILED: {e}", file=sys.stderr)
        return 1
    data = (o.out / f"{NAME}.pcapng").read_bytes()
    entry = {"pcap": f"{NAME}.pcapng", "golden": GOLDEN,
             "assembled": ASSEMBLED, "description": DESCRIPTION, "pcap_bytes": len(data),
             "pcap_sha256": hashlib.sha256(data).hexdigest(), "packets": len(asm.frames),
             **summary(log, recs, asm, names), "checks": checks}
    update_manifest(o.out, NAME, entry)
    print(f"ok: {len(recs)} engine packets, {len(asm.frames)} ENet datagrams, {len(data)} bytes "
          f"({time.monotonic() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
