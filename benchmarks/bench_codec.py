"""Codec throughput against Godot 3.2.3's own bytes2var/var2bytes on the same bytes.

    python benchmarks/bench_codec.py [--repeat 5] [--json out.json]

Both sides are timed in the same run on the same machine: ours with time.perf_counter around
decode()/encode(), the engine's with OS.get_ticks_usec() around bytes2var()/var2bytes() in GDScript
(best of N repeats each). The ratio engine_time / our_time is what the README reports (>1: faster).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.workloads import workloads  # noqa: E402
from godot_dissect import decode, encode  # noqa: E402

GD_SCRIPT = """extends SceneTree
func _init():
	var dir = "%s"
	var names = %s
	var repeat = %d
	for n in names:
		var f = File.new()
		f.open(dir + "/" + n + ".bin", File.READ)
		var b = f.get_buffer(f.get_len())
		f.close()
		var best_dec = 1e18
		var best_enc = 1e18
		var v = null
		for i in range(repeat):
			var t0 = OS.get_ticks_usec()
			v = bytes2var(b)
			var t1 = OS.get_ticks_usec()
			var e = var2bytes(v)
			var t2 = OS.get_ticks_usec()
			best_dec = min(best_dec, t1 - t0)
			best_enc = min(best_enc, t2 - t1)
			if e.size() != b.size():
				print("SIZE_MISMATCH ", n, " ", e.size(), " ", b.size())
		print("BENCH ", n, " ", best_dec, " ", best_enc)
	quit()
"""


def best(fn, repeat: int) -> float:
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def engine_times(blobs: dict[str, bytes], repeat: int) -> dict[str, tuple[float, float]]:
    godot = shutil.which("godot3-server")
    if godot is None:
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        for n, b in blobs.items():
            Path(tmp, n + ".bin").write_bytes(b)
        Path(tmp, "project.godot").write_text("config_version=4\n")
        Path(tmp, "bench.gd").write_text(GD_SCRIPT % (tmp, json.dumps(list(blobs)), repeat))
        out = subprocess.run([godot, "--path", tmp, "-s", "bench.gd"], capture_output=True, text=True,
                             env={**os.environ, "HOME": tmp}, timeout=600).stdout
    res = {}
    for line in out.splitlines():
        if line.startswith("BENCH "):
            _, n, d, e = line.split()
            res[n] = (float(d) / 1e6, float(e) / 1e6)
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    blobs, rows = {}, []
    for name, value in workloads().items():
        data = encode(value, "godot3")
        assert decode(data, "godot3") is not None
        blobs[name] = data
        ours_dec = best(lambda d=data: decode(d, "godot3"), args.repeat)
        v = decode(data, "godot3")
        ours_enc = best(lambda v=v: encode(v, "godot3"), args.repeat)
        rows.append({"workload": name, "bytes": len(data), "ours_decode_s": ours_dec, "ours_encode_s": ours_enc})
    eng = engine_times(blobs, args.repeat)
    print(f"{'workload':22} {'bytes':>10} {'decode ms':>10} {'engine ms':>10} {'x engine':>9} "
          f"{'encode ms':>10} {'engine ms':>10} {'x engine':>9}")
    for r in rows:
        ed, ee = eng.get(r["workload"], (float("nan"), float("nan")))
        r["engine_decode_s"], r["engine_encode_s"] = ed, ee
        r["decode_speedup"], r["encode_speedup"] = ed / r["ours_decode_s"], ee / r["ours_encode_s"]
        print(f"{r['workload']:22} {r['bytes']:>10} {r['ours_decode_s'] * 1e3:>10.2f} {ed * 1e3:>10.2f} "
              f"{r['decode_speedup']:>9.2f} {r['ours_encode_s'] * 1e3:>10.2f} {ee * 1e3:>10.2f} "
              f"{r['encode_speedup']:>9.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
