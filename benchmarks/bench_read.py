"""``godot-dissect read --format jsonl`` over a load capture, against dpkt merely parsing the
same file's Ethernet/IP/UDP/TCP headers, in the same run.

    python benchmarks/bench_read.py [CAPTURE] [--repeat N]   # default: makes one (Godot 3.2.3)

Each side runs N times (default 3, alternating) and its best wall-clock time counts, as in
bench_codec.py: the machine is shared. The reader runs as the command a user types, its JSON
lines read back through a pipe. Prints the two times, the ratio (target <= 3) and the reader's
peak RSS.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dpkt

ROOT = Path(__file__).resolve().parent.parent

# `python -m godot_dissect ARGS` that also reports its peak RSS (VmHWM: the process's own; getrusage
# would count the parent's memory too, which a vfork'ed child inherits as its high-water mark)
_READER = """
import atexit, runpy, sys
def _peak():
    try:
        with open("/proc/self/status") as f:
            kb = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        import resource
        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak-rss-kb {kb}", file=sys.stderr)
atexit.register(_peak)
sys.argv[0] = "godot_dissect"
runpy.run_module("godot_dissect", run_name="__main__", alter_sys=True)
"""


def read_jsonl(path: str) -> tuple[float, int, int]:
    """Wall-clock seconds, JSON lines and peak RSS (kB) of one reader run; its output is consumed
    as it comes (a pipe reader that keeps nothing)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _READER, "read", path, "--format", "jsonl"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    lines = 0
    while chunk := proc.stdout.read(1 << 20):
        lines += chunk.count(b"\n")
    err = proc.stderr.read().decode()
    if proc.wait() != 0:
        raise SystemExit(f"the reader failed:\n{err}")
    t = time.perf_counter() - t0
    return t, lines, int(err.rsplit("peak-rss-kb", 1)[1].split()[0])


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
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("capture", nargs="?")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each side; the best counts")
    args = ap.parse_args()
    path = args.capture
    if path is None:
        path = os.path.join(tempfile.mkdtemp(), "load.pcapng")
        subprocess.run([sys.executable, str(ROOT / "tools/captures/make_captures.py"), "--load", "25000",
                        "--load-out", path], check=True, capture_output=True)
    t_dpkt, t_read, rss = [], [], []
    for _ in range(max(args.repeat, 1)):
        t0 = time.perf_counter()
        n = dpkt_headers(path)
        t_dpkt.append(time.perf_counter() - t0)
        t, lines, kb = read_jsonl(path)
        t_read.append(t)
        rss.append(kb)
    rss_mb = max(rss) / 1024
    size = os.path.getsize(path) / 1e6
    best_dpkt, best_read = min(t_dpkt), min(t_read)
    print(f"capture: {size:.1f} MB, {n} UDP/TCP packets, {lines} Godot messages")
    print(f"dpkt headers only: {best_dpkt:.2f} s  (runs: {', '.join(f'{t:.2f}' for t in t_dpkt)})")
    print(f"godot-dissect read --format jsonl: {best_read:.2f} s  ({best_read / best_dpkt:.2f}x dpkt; target <= 3x)"
          f"  (runs: {', '.join(f'{t:.2f}' for t in t_read)})")
    print(f"peak RSS of the reader: {rss_mb:.0f} MB")


if __name__ == "__main__":
    main()
