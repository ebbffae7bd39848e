"""``tshark -V`` with the generated Lua dissector against ``tshark -V`` without it, same capture,
same run.

    python benchmarks/bench_lua.py [CAPTURE] [--runs N] [--prefs 'godot.compact:TRUE' ...]

Without CAPTURE a load capture is made with real Godot 3.2.3 processes
(``tools/captures/make_captures.py --load 25000``: 25,001 UDP game-state datagrams and 5,001 TCP
messages). Each configuration runs N times (default 3), interleaved, and the best time counts (the
machine may be busy). Times are the tshark processes' CPU time (user + system); wall times are
printed too. The target is <= 4x for the default tree.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LUA = ROOT / "lua" / "godot.lua"


def run(cmd: list[str]) -> tuple[float, float, int]:
    """(cpu seconds, wall seconds, output lines) of one tshark run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines = 0
    assert proc.stdout is not None
    for chunk in iter(lambda: proc.stdout.read(1 << 20), b""):  # type: ignore[union-attr]
        lines += chunk.count(b"\n")
    if proc.wait() != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("capture", nargs="?")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--prefs", action="append", default=[],
                    help="extra configurations: a space-separated list of NAME:VALUE prefs, e.g. godot.compact:TRUE")
    args = ap.parse_args()
    if shutil.which("tshark") is None:
        raise SystemExit("tshark is not installed (apt-get install tshark)")
    path = args.capture
    if path is None:
        path = os.path.join(tempfile.mkdtemp(), "load.pcapng")
        subprocess.run([sys.executable, str(ROOT / "tools/captures/make_captures.py"), "--load", "25000",
                        "--load-out", path], check=True, capture_output=True)
    base = ["tshark", "-n", "-r", path, "-V"]
    configs: dict[str, list[str]] = {
        "tshark -V": base,
        "tshark -V + godot.lua (default tree)": [*base, "-X", f"lua_script:{LUA}"],
    }
    for p in args.prefs:
        opts = [x for pref in p.split() for x in ("-o", pref)]
        configs[f"tshark -V + godot.lua ({p})"] = [*base, "-X", f"lua_script:{LUA}", *opts]
    best: dict[str, tuple[float, float, int]] = {}
    for _ in range(args.runs):
        for name, cmd in configs.items():
            cpu, wall, lines = run(cmd)
            if name not in best or cpu < best[name][0]:
                best[name] = (cpu, wall, lines)
    size = os.path.getsize(path) / 1e6
    messages = subprocess.run(["tshark", "-n", "-r", path, "-X", f"lua_script:{LUA}", "-T", "fields",
                               "-e", "godot.dialect", "-E", "occurrence=a"], capture_output=True, text=True,
                              check=True).stdout.count("godot")
    print(f"capture: {path} ({size:.1f} MB), {messages} Godot messages; best of {args.runs} runs")
    plain = best["tshark -V"][0]
    for name, (cpu, wall, lines) in best.items():
        ratio = "" if name == "tshark -V" else f"  {cpu / plain:.2f}x"
        print(f"{name:48} cpu {cpu:6.2f} s  wall {wall:6.2f} s  {lines:>9} lines{ratio}")
    default = best["tshark -V + godot.lua (default tree)"][0] / plain
    print(f"target: <= 4x for the default tree: {default:.2f}x, {'met' if default <= 4 else 'MISSED'}")


if __name__ == "__main__":
    main()
