"""``godot-dissect stats`` (every table) against dpkt merely parsing the same file's Ethernet/IP/UDP/TCP
headers (bench_read.py's floor), whole processes, in the same run; and its peak RSS at 1x and 8x the
capture.

    python benchmarks/bench_stats.py [CAPTURE ...] [--rounds N] [--no-memory]

Default captures: the load capture given on the command line (see bench_read.py for how to make one)
and a multiplayer capture of a different shape: captures/profile/godot3-enet-profile.pcapng (real Godot
3.2.3 ENet, three peers) concatenated 300 times with mergecap. The two sides run in turn (A B A B
...) for N rounds (default 5); the ratio is taken pair by pair and the median is printed (the
machine is shared). CPU seconds and peak RSS are each child's own (os.wait4). The 8x file is the
capture concatenated eight times (mergecap -a) in a temporary directory, deleted afterwards.
Target: stats <= 2x the floor; peak RSS at 8x about the same as at 1x (memory follows the number of
distinct rows, not the capture's length).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLES = ("rpc", "sync", "bandwidth", "enet", "variants", "conversations", "expert")
DEFAULT_TABLES = ("rpc", "sync", "bandwidth")  # what `godot-dissect stats` prints when no --table is given
FLOOR = ("import sys; sys.path.insert(0, {bench!r}); from bench_read import dpkt_headers; "
         "dpkt_headers(sys.argv[1])")


def stats_cmd(path: str, tables: tuple[str, ...] = TABLES) -> list[str]:
    cmd = [sys.executable, "-m", "godot_dissect", "stats", path, "--format", "csv"]
    for t in tables:
        cmd += ["--table", t]
    return cmd


def floor_cmd(path: str) -> list[str]:
    return [sys.executable, "-c", FLOOR.format(bench=str(ROOT / "benchmarks")), path]


def run(cmd: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if status != 0:
        raise SystemExit(f"{cmd[:5]} failed:\n{err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def concatenated(path: str, times: int, out_dir: str) -> str:
    out = os.path.join(out_dir, f"x{times}-{Path(path).name}")
    subprocess.run(["mergecap", "-a", "-F", "pcapng", "-w", out, *[path] * times], check=True)
    return out


def compare(path: str, rounds: int, tables: tuple[str, ...]) -> None:
    a_cpu, b_cpu, a_wall, b_wall, ratio_cpu, ratio_wall, rss = [], [], [], [], [], [], []
    for _ in range(rounds):
        aw, ac, am = run(stats_cmd(path, tables))
        bw, bc, _ = run(floor_cmd(path))
        a_cpu.append(ac)
        b_cpu.append(bc)
        a_wall.append(aw)
        b_wall.append(bw)
        ratio_cpu.append(ac / bc)
        ratio_wall.append(aw / bw)
        rss.append(am)
    med = statistics.median
    size = os.path.getsize(path) / 1e6
    print(f"{Path(path).name} ({size:.1f} MB), tables {', '.join(tables)}; {rounds} interleaved rounds, medians:")
    print(f"  dpkt headers only:   cpu {med(b_cpu):.2f} s  wall {med(b_wall):.2f} s")
    print(f"  godot-dissect stats: cpu {med(a_cpu):.2f} s  wall {med(a_wall):.2f} s  peak RSS {max(rss):.0f} MiB")
    print(f"  ratio stats/dpkt:    cpu {med(ratio_cpu):.2f}x  wall {med(ratio_wall):.2f}x  (target <= 2x)")


def memory(path: str, out_dir: str) -> None:
    one = run(stats_cmd(path))[2]
    eight_path = concatenated(path, 8, out_dir)
    eight = run(stats_cmd(eight_path))[2]
    os.unlink(eight_path)
    print(f"  peak RSS: 1x {one:.0f} MiB, 8x ({os.path.getsize(path) * 8 / 1e6:.0f} MB) {eight:.0f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("captures", nargs="*", help="captures to profile (default: the multiplayer one only)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds per capture (default 5)")
    ap.add_argument("--no-memory", action="store_true", help="skip the 1x / 8x peak RSS runs")
    ap.add_argument("--tables", choices=("all", "default"), default="all",
                    help="every table (default) or the CLI's default ones (rpc, sync, bandwidth: no ENet re-parse)")
    args = ap.parse_args()
    if not shutil.which("mergecap"):
        raise SystemExit("mergecap (Wireshark) is needed to make the concatenated captures")
    tmp = tempfile.mkdtemp(prefix="bench-stats-")
    try:
        captures = list(args.captures)
        captures.append(concatenated(str(ROOT / "captures" / "profile" / "godot3-enet-profile.pcapng"), 300, tmp))
        for path in captures:
            compare(path, max(args.rounds, 1), TABLES if args.tables == "all" else DEFAULT_TABLES)
            if not args.no_memory:
                memory(path, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
