#!/usr/bin/env python3
"""Make captures/profile/godot3-enet-profile: real Godot 3.2.3 ENet multiplayer traffic for the network
profiler (``godot-dissect stats``), with every call the engines made and executed printed.

    python tools/captures/make_profile_capture.py [--out captures/profile/] [--keep-tmp]

A server (UDP 127.0.0.1:4290) and two clients bound to 4291 (a) and 4292 (b): three godot3-server
processes running tools/captures/godot3_mp/mp_peer.gd with GDX_PLAN=profile (profile_plan.gd) while
``tshark -i lo`` records. Every peer prints each call it makes (report.gd SEND: kind, node, method,
target, unreliable, channel; and CALLSIZE: ``var2bytes(args).size()``) and, inside the called method
or setter, each call it executes with ``get_rpc_sender_id()`` (RECV). The golden has one line per
print, in the order each peer printed them:

    {"event": "call", "role", "peer_id", "n", "kind", "node", "method", "target", "reliable",
     "channel", "args_var2bytes_size"}
    {"event": "exec", "role", "peer_id", "n", "kind", "node", "method", "sender", "local"}

``local``: a remotesync/puppetsync call the caller executed itself (nothing on the wire).

It lives in captures/profile/ with its own manifest.json: its golden is the engines' call prints,
not one line per packet, so the tests that walk captures/manifest.json's goldens do not take it.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import make_captures as mc  # noqa: E402
import make_multiplayer_captures as mmc  # noqa: E402
from common import CaptureError, tshark_capture  # noqa: E402

NAME = "godot3-enet-profile"
PORTS = {"s": 4290, "a": 4291, "b": 4292}
DESCRIPTION = (
    "Godot 3.2.3 high-level multiplayer over NetworkedMultiplayerENet for the network profiler: a server "
    "(127.0.0.1:4290) and two clients bound to 127.0.0.1:4291 (a) and 4292 (b), three godot3-server processes "
    "following tools/captures/godot3_mp/profile_plan.gd for about 8 s: six rounds of tick (unreliable, to all), "
    "move (unreliable, a to all: the server relays it to b), chat (b to the server; a to b, relayed), pos "
    "(rset_unreliable to all), label (rset, b to all), hp (rset_id to a), announce (remotesync, a to all), "
    "ping (unreliable, b to a, relayed), and one 3000-byte blob (server to b, ENet fragments). The golden is "
    "the engines' own prints: every call made (target, node, method, reliable, var2bytes(args).size()) and "
    "every call executed (get_rpc_sender_id()).")


def golden_lines(procs: dict[str, mc.Proc], logs: dict[str, mmc.PeerLog]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for role, p in procs.items():
        log = logs[role]
        sizes = {int(f[1]): int(f[2]) for f in mc.cap_lines(p.stderr()) if f[0] == "CALLSIZE"}
        for s in log.sent:
            if s.kind == "raw":
                raise CaptureError(f"{role}: the profile plan sends no raw packets")
            if s.n not in sizes:
                raise CaptureError(f"{role}: SEND {s.n} without CALLSIZE")
            out.append({"event": "call", "role": role, "peer_id": log.id, "n": s.n, "kind": s.kind, "node": s.node,
                        "method": s.name, "target": s.target, "reliable": not s.mode, "channel": s.channel,
                        "args_var2bytes_size": sizes[s.n]})
        for r in log.received:
            out.append({"event": "exec", "role": role, "peer_id": log.id, "n": r.n, "kind": r.kind,
                        "node": r.node_rel, "method": r.name, "sender": r.sender, "local": r.sender == log.id})
    for seq, r in enumerate(out):
        r["seq"] = seq
    return out


def make(ctx: mc.Ctx) -> dict[str, Any]:
    mc.require_ports(*((socket.SOCK_DGRAM, p) for p in PORTS.values()))
    pcap = mmc.partial_pcap(ctx, NAME)
    ws = mmc.MpWorkspace(ctx.godot, ctx.keep)
    try:
        with tshark_capture(ctx.tshark, f"udp portrange {PORTS['s']}-{PORTS['b']}", pcap):
            procs = mmc.start_group(ws, "enet", PORTS["s"], PORTS, env={"GDX_PLAN": "profile"}, tag="-profile")
        logs = mmc.finish_group(procs)
        recs = golden_lines(procs, logs)
    finally:
        ws.close()
    mc.write_golden(ctx.out / f"{NAME}.golden.jsonl", recs)
    calls = sum(1 for r in recs if r["event"] == "call")
    return {"messages": len(recs), "calls": calls, "executions": len(recs) - calls,
            "ports": {mmc.ROLE_NAMES[r]: p for r, p in PORTS.items()},
            "peer_ids": {mmc.ROLE_NAMES[r]: log.id for r, log in logs.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "captures" / "profile",
                    help="output directory (default: captures/profile/)")
    mc.add_engine_args(ap)
    args = ap.parse_args(argv)
    ctx = mc.engine_ctx(args)
    if ctx is None:
        return 2
    t0 = time.monotonic()
    try:
        info = make(ctx)
    except CaptureError as e:
        print(f"{NAME}: FAILED (nothing written): {e}", file=sys.stderr)
        mmc.partial_pcap(ctx, NAME).unlink(missing_ok=True)
        return 1
    pcap = ctx.out / f"{NAME}.pcapng"
    mmc.partial_pcap(ctx, NAME).replace(pcap)
    entry = {"pcap": pcap.name, "golden": f"{NAME}.golden.jsonl", "description": DESCRIPTION,
             "engine": f"godot3-server {ctx.version}", "pcap_bytes": pcap.stat().st_size,
             "packets": mc.pcap_packets(ctx.tshark, pcap), **info}
    mc.update_manifest(ctx.out, NAME, entry)
    print(f"{NAME}: {info['calls']} calls, {info['executions']} executions, {entry['packets']} pcap packets, "
          f"{entry['pcap_bytes']} bytes ({time.monotonic() - t0:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
