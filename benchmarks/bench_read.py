"""``godot-dissect read --format jsonl`` over a load capture, against dpkt merely parsing the
same file's Ethernet/IP/UDP/TCP headers, in the same run.

    python benchmarks/bench_read.py [CAPTURE]   # default: makes one with tools/captures (Godot 3.2.3)

Prints the two times, the ratio (target <= 3) and the reader's peak RSS.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dpkt

ROOT = Path(__file__).resolve().parent.parent


def dpkt_headers(path: str) -> int:
    n = 0
    with open(path, "rb") as f:
        magic = f.read(4)
        f.seek(0)
        reader = dpkt.pcapng.Reader(f) if magic == b"\x0a\x0d\x0d\x0a" else dpkt.pcap.Reader(f)
        for _, buf in reader:
            eth = dpkt.ethernet.Ethernet(buf)
            ip = eth.data
            if isinstance(ip, (dpkt.ip.IP, dpkt.ip6.IP6)) and isinstance(ip.data, (dpkt.udp.UDP, dpkt.tcp.TCP)):
                n += 1
    return n


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else None
    tmp = None
    if path is None:
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, "load.pcapng")
        subprocess.run([sys.executable, str(ROOT / "tools/captures/make_captures.py"), "--load", "25000",
                        "--load-out", path], check=True, capture_output=True)
    t0 = time.perf_counter()
    n = dpkt_headers(path)
    t_dpkt = time.perf_counter() - t0
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "godot_dissect", "read", path, "--format", "jsonl"],
                          stdout=subprocess.PIPE, cwd=ROOT, check=True)
    t_read = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    lines = proc.stdout.count(b"\n")
    size = os.path.getsize(path) / 1e6
    print(f"capture: {size:.1f} MB, {n} UDP/TCP packets, {lines} Godot messages")
    print(f"dpkt headers only: {t_dpkt:.2f} s")
    print(f"godot-dissect read --format jsonl: {t_read:.2f} s  ({t_read / t_dpkt:.2f}x dpkt; target <= 3x)")
    print(f"peak RSS of the reader: {rss_mb:.0f} MB")


if __name__ == "__main__":
    main()
