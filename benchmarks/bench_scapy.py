"""What the Godot scapy layers cost, next to scapy's own IP/UDP dissection of the same packets.

    python benchmarks/bench_scapy.py [CAPTURE] [--limit N]

CAPTURE defaults to a load capture made by real Godot 3.2.3 processes
(``tools/captures/make_captures.py --load 25000``: 25,001 UDP game-state datagrams on ports
nobody bound, found by the heuristic, and 5,001 length-prefixed TCP messages).

The same raw frames are dissected three ways, best of 3 rounds each:

* ``Ether(frame, stop_dissection_after=Ether)``: Ethernet, the rest Raw;
* ``Ether(frame)`` with the Godot layers off: Ethernet / IP / UDP / Raw;
* ``Ether(frame)`` with the Godot layers on: Ethernet / IP / UDP / GodotVariant (heuristic,
  dialect detection, the value decoded and attached; fields built only when looked at).

IP+UDP cost = second - first; Godot cost = third - second. Target: Godot <= IP+UDP. Also printed:
the cost of building every packet's full field tree (``show()``), and ``sniff(offline=...,
session=TCPSession)`` over the TCP part with and without the Godot layers.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scapy.all import Ether, RawPcapReader, TCPSession, conf, sniff, wrpcap
from scapy.layers.inet import TCP, UDP

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import godot_dissect.scapy as gs  # noqa: E402
from godot_dissect.scapy import GodotVariant, enable_heuristics, godot_messages, reset_flows  # noqa: E402


def best(fn, frames: list[bytes], rounds: int = 3) -> float:
    t = []
    for _ in range(rounds):
        reset_flows()
        t0 = time.perf_counter()
        fn(frames)
        t.append(time.perf_counter() - t0)
    return min(t)


def ether_only(frames: list[bytes]) -> None:
    for f in frames:
        Ether(f, stop_dissection_after=Ether)


def full(frames: list[bytes]) -> None:
    for f in frames:
        Ether(f)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("capture", nargs="?")
    ap.add_argument("--limit", type=int, default=0, help="use only the first N UDP frames")
    args = ap.parse_args()
    path = args.capture
    if path is None:
        path = os.path.join(tempfile.mkdtemp(), "load.pcapng")
        print("making a load capture with real Godot 3.2.3 (~20 s)...", flush=True)
        subprocess.run([sys.executable, str(ROOT / "tools/captures/make_captures.py"), "--load", "25000",
                        "--load-out", path], check=True, capture_output=True)
    udp, tcp = [], []
    enable_heuristics(False)
    for data, _ in RawPcapReader(path):
        p = Ether(data)
        if UDP in p and len(p[UDP].payload):
            udp.append(data)
        elif TCP in p:
            tcp.append(data)
    if args.limit:
        udp = udp[:args.limit]
    n = len(udp)
    print(f"capture: {path} ({os.path.getsize(path) / 1e6:.1f} MB): {n} UDP datagrams with a payload, "
          f"{len(tcp)} TCP segments")

    t_eth = best(ether_only, udp)
    enable_heuristics(False)
    t_ipudp = best(full, udp)
    enable_heuristics(True)
    t_godot = best(full, udp)
    reset_flows()
    pkts = [Ether(f) for f in udp]
    missed = sum(1 for p in pkts if not isinstance(p[UDP].payload, GodotVariant))
    assert not missed, f"{missed} datagrams not dissected as Godot Variants"
    values = sum(1 for p in pkts if p[GodotVariant].to_value() is not None)
    t0 = time.perf_counter()
    for p in pkts[:2000]:
        p.show(dump=True)
    t_show = (time.perf_counter() - t0) / min(n, 2000)

    us = 1e6 / n
    ipudp, godot = (t_ipudp - t_eth) * us, (t_godot - t_ipudp) * us
    print(f"Ether only                      {t_eth:7.2f} s  {t_eth * us:6.1f} us/packet")
    print(f"Ether/IP/UDP/Raw                {t_ipudp:7.2f} s  {t_ipudp * us:6.1f} us/packet")
    print(f"Ether/IP/UDP/GodotVariant       {t_godot:7.2f} s  {t_godot * us:6.1f} us/packet  ({values} values)")
    print(f"  IP+UDP layers:  {ipudp:6.1f} us/packet")
    print(f"  Godot layer:    {godot:6.1f} us/packet  = {godot / ipudp:.2f}x IP+UDP (target <= 1.00x)")
    print(f"  full field tree on demand (show(dump=True)): {t_show * 1e6:.0f} us/packet")

    if tcp:
        tmp = os.path.join(tempfile.mkdtemp(), "tcp.pcap")
        wrpcap(tmp, [Ether(f) for f in tcp])
        res = {}
        for on in (False, True):
            enable_heuristics(on)
            reset_flows()
            t0 = time.perf_counter()
            pkts = sniff(offline=tmp, session=TCPSession, quiet=True)
            dt = time.perf_counter() - t0
            msgs = sum(len(godot_messages(p)) for p in pkts)
            res[on] = (dt, msgs)
        (t_off, _), (t_on, msgs) = res[False], res[True]
        print(f"TCP, sniff(session=TCPSession): {len(tcp)} segments: Raw {t_off:.2f} s, "
              f"Godot {t_on:.2f} s ({msgs} messages, +{(t_on - t_off) / max(msgs, 1) * 1e6:.0f} us/message)")
    enable_heuristics(True)
    assert conf.raw_layer is not None and gs.GodotPDU is not None


if __name__ == "__main__":
    main()
