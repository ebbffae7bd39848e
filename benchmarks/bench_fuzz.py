#!/usr/bin/env python3
"""Fuzzer throughput: packets per second to a UDP loopback target.

    python benchmarks/bench_fuzz.py [--count 200000] [--dialect godot4] [--probe-every 1000]

The target is a plain Python socket sink in its own process on 127.0.0.1 (a free port picked here):
it counts datagrams and answers the known-good probe, so the fuzzer's liveness checks run as in a
real campaign. What is timed is ``godot_dissect.fuzz.campaign.run_fuzz`` end to end: generating each
case (every strategy), framing, sending, probing. Target: >= 10,000 packets/s.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from godot_dissect.codec import encode  # noqa: E402
from godot_dissect.fuzz.campaign import PROBE_VALUE, FuzzOptions, run_fuzz  # noqa: E402


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sink(port: int, probe: bytes, ready: mp.Event, stop: mp.Event, counts: mp.Array) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
    s.bind(("127.0.0.1", port))
    s.settimeout(0.2)
    ready.set()
    n = nbytes = 0
    while not stop.is_set():
        try:
            data, addr = s.recvfrom(70000)
        except TimeoutError:
            continue
        n += 1
        nbytes += len(data)
        if data == probe:
            s.sendto(b"pong", addr)
        if n % 1024 == 0:
            counts[0], counts[1] = n, nbytes
    counts[0], counts[1] = n, nbytes
    s.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=200_000)
    ap.add_argument("--dialect", default="godot4")
    ap.add_argument("--probe-every", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    port = free_udp_port()
    probe = encode(PROBE_VALUE, args.dialect)
    ready, stop = mp.Event(), mp.Event()
    counts = mp.Array("q", 2)
    proc = mp.Process(target=sink, args=(port, probe, ready, stop, counts), daemon=True)
    proc.start()
    try:
        if not ready.wait(10):
            print("sink did not start", file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory() as tmp:
            opts = FuzzOptions(target=f"udp://127.0.0.1:{port}", dialect=args.dialect, seed=args.seed,
                               count=args.count, duration=600, probe_every=args.probe_every, out=Path(tmp))
            t0 = time.perf_counter()
            summary = run_fuzz(opts, log=lambda s: None)
            seconds = time.perf_counter() - t0
    finally:
        time.sleep(0.3)
        stop.set()
        proc.join(5)
    pps = summary.packets / seconds
    res = {"packets": summary.packets, "bytes": summary.bytes, "seconds": round(seconds, 3),
           "packets_per_second": round(pps), "mbytes_per_second": round(summary.bytes / seconds / 1e6, 1),
           "received_by_sink": counts[0], "probes": summary.probes, "findings": len(summary.findings),
           "strategies": dict(summary.strategies), "dialect": args.dialect}
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        print(f"{summary.packets} packets ({summary.bytes / 1e6:.1f} MB) to a UDP loopback sink in {seconds:.2f} s: "
              f"{pps:,.0f} packets/s, {res['mbytes_per_second']} MB/s; the sink received {counts[0]}; "
              f"{summary.probes} probes, {len(summary.findings)} findings")
        print("target: >= 10,000 packets/s:", "met" if pps >= 10_000 else "NOT met")
    return 0 if pps >= 10_000 else 1


if __name__ == "__main__":
    sys.exit(main())
