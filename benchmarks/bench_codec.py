"""Codec throughput against Godot 3.2.3's own bytes2var/var2bytes on the same bytes, and against
msgpack on its equivalent of the small-message workload.

    python benchmarks/bench_codec.py [--rounds 7] [--json out.json] [--markdown]

Rounds are interleaved: each round times our decode/encode of every workload (collector on, then
off for reference), msgpack's, then the engine's: one Godot process, started once, does every
workload once per round when told to (OS.get_ticks_usec() around bytes2var()/var2bytes()
in GDScript). A first round warms every side up and is not counted. Figures are medians over
the rounds with min-max; "x engine" is engine median / our median (>1: faster). "gc" counts the
collections (generations 0/1/2) that ran inside our timed regions over all rounds: the headline
figure is the one with the collector on, as a program runs.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.rounds import Samples, ratio, timed  # noqa: E402
from benchmarks.workloads import message_workloads, workloads  # noqa: E402
from godot_dissect import decode, encode  # noqa: E402

# one round: every workload once untimed (warm-up), then once timed; the previous value is freed
# before the clock starts, as our side releases its result after its clock stops
GD_SCRIPT = """extends SceneTree
# Godot 3 runs out of pool-array slots with 40,000 buffers alive: messages are loaded CHUNK at a time (untimed)
const CHUNK = 10000

func _one(path):
	var f = File.new()
	f.open(path, File.READ)
	var b = f.get_buffer(f.get_len())
	f.close()
	var v = bytes2var(b)
	var e = var2bytes(v)
	v = null
	e = null
	var t0 = OS.get_ticks_usec()
	v = bytes2var(b)
	var t1 = OS.get_ticks_usec()
	e = var2bytes(v)
	var t2 = OS.get_ticks_usec()
	if e.size() != b.size():
		print("SIZE_MISMATCH ", path, " ", e.size(), " ", b.size())
	return [t1 - t0, t2 - t1]

func _many(path):
	var f = File.new()
	f.open(path, File.READ)
	var vals = []
	var dec = 0
	var warm = true
	while f.get_position() < f.get_len():
		var chunk = []
		while chunk.size() < CHUNK and f.get_position() < f.get_len():
			var n = f.get_32()
			chunk.append(f.get_buffer(n))
		var v = null
		if warm:
			for b in chunk:
				v = bytes2var(b)
			warm = false
		v = null
		var t0 = OS.get_ticks_usec()
		for b in chunk:
			v = bytes2var(b)
		dec += OS.get_ticks_usec() - t0
		for b in chunk:
			vals.append(bytes2var(b))
	f.close()
	var e = null
	for x in vals:
		e = var2bytes(x)
	var t1 = OS.get_ticks_usec()
	for x in vals:
		e = var2bytes(x)
	return [dec, OS.get_ticks_usec() - t1]

func _init():
	var dir = "%s"
	# round N starts when the file goN appears (Godot 3.2 reads no stdin), so that rounds
	# interleave with the Python side's; the file "stop" ends it
	var d = Directory.new()
	var i = 0
	while true:
		while not d.file_exists(dir + "/go" + str(i)) and not d.file_exists(dir + "/stop"):
			OS.delay_msec(1)
		if d.file_exists(dir + "/stop"):
			break
		i += 1
		for n in %s:
			var r = _one(dir + "/" + n + ".bin")
			print("BENCH ", n, " ", r[0], " ", r[1])
		for n in %s:
			var r = _many(dir + "/" + n + ".bin")
			print("BENCH ", n, " ", r[0], " ", r[1])
		print("DONE")
	quit()
"""


class EngineRound:
    """Runs one engine round per call over the same files."""

    def __init__(self, blobs: dict[str, bytes], many: dict[str, list[bytes]]) -> None:
        self.godot = shutil.which("godot3-server")
        self.tmp = tempfile.TemporaryDirectory()
        tmp = self.tmp.name
        for n, b in blobs.items():
            Path(tmp, n + ".bin").write_bytes(b)
        for n, msgs in many.items():
            Path(tmp, n + ".bin").write_bytes(b"".join(struct.pack("<I", len(m)) + m for m in msgs))
        self.count = len(blobs) + len(many)
        Path(tmp, "project.godot").write_text("config_version=4\n")
        Path(tmp, "bench.gd").write_text(GD_SCRIPT % (tmp, json.dumps(list(blobs)), json.dumps(list(many))))

    def start(self) -> None:
        self.proc = None
        if self.godot is not None:
            self.proc = subprocess.Popen([self.godot, "--path", self.tmp.name, "-s", "bench.gd"],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                         env={**os.environ, "HOME": self.tmp.name})
        self.round = 0

    def stop(self) -> None:
        if self.proc is not None:
            Path(self.tmp.name, "stop").touch()
            self.proc.communicate(timeout=60)

    def __call__(self) -> dict[str, tuple[float, float]]:
        """One round in the running engine: every workload once, timed."""
        if self.proc is None:
            return {}
        assert self.proc.stdout is not None
        Path(self.tmp.name, f"go{self.round}").touch()
        self.round += 1
        res = {}
        for line in self.proc.stdout:
            if line.startswith("SIZE_MISMATCH"):
                raise SystemExit(f"the engine re-encoded to another size: {line}")
            if line.startswith("BENCH "):
                _, n, d, e = line.split()
                res[n] = (float(d) / 1e6, float(e) / 1e6)
            if line.startswith("DONE"):
                break
        if len(res) != self.count:
            raise SystemExit(f"the engine did not time every workload: {res}")
        return res


def _each(fn: Callable[[Any], Any], items: list[Any]) -> Callable[[], None]:
    def run() -> None:
        for x in items:
            fn(x)
    return run


def _gc_off(fn: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        gc.disable()
        try:
            return fn()
        finally:
            gc.enable()
    return run


SIDES = ("dec", "dec_gc_off", "enc", "enc_gc_off", "engine_dec", "engine_enc", "msgpack_dec", "msgpack_enc")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--markdown", action="store_true", help="print the README tables")
    args = ap.parse_args()
    try:
        import msgpack
    except ImportError:  # the test extra has it; without it the peer columns say n/a
        msgpack = None

    # name -> (our decode, our encode, msgpack decode, msgpack encode, wire bytes)
    jobs: dict[str, tuple[Callable[[], Any], ...]] = {}
    sizes: dict[str, int] = {}
    blobs: dict[str, bytes] = {}
    many: dict[str, list[bytes]] = {}
    for name, value in workloads().items():
        data = blobs[name] = encode(value, "godot3")
        v = decode(data, "godot3")
        assert encode(v, "godot3") == data
        jobs[name] = (lambda d=data: decode(d, "godot3"), lambda v=v: encode(v, "godot3"))
        sizes[name] = len(data)
    for name, values in message_workloads().items():
        msgs = many[name] = [encode(v, "godot3") for v in values]
        vals = [decode(m, "godot3") for m in msgs]
        assert vals == values
        jobs[name] = (_each(lambda m: decode(m, "godot3"), msgs), _each(lambda v: encode(v, "godot3"), vals))
        if msgpack is not None:
            packed = [msgpack.packb(v) for v in values]
            assert [msgpack.unpackb(p) for p in packed] == values
            jobs[name] += (_each(msgpack.unpackb, packed), _each(msgpack.packb, values))
        sizes[name] = sum(map(len, msgs)) // len(msgs)
    engine = EngineRound(blobs, many)
    engine.start()
    stats = {n: {s: Samples() for s in SIDES} for n in jobs}
    warm = {n: {s: Samples() for s in SIDES} for n in jobs}
    for i in range(max(args.rounds, 1) + 1):  # round 0 warms both sides up and is not counted
        into = warm if i == 0 else stats
        for name, fns in jobs.items():
            st = into[name]
            timed(fns[0], st["dec"])
            timed(_gc_off(fns[0]), st["dec_gc_off"])
            timed(fns[1], st["enc"])
            timed(_gc_off(fns[1]), st["enc_gc_off"])
            if len(fns) > 2:
                timed(fns[2], st["msgpack_dec"])
                timed(fns[3], st["msgpack_enc"])
        for name, (d, e) in engine().items():
            into[name]["engine_dec"].add(d)
            into[name]["engine_enc"].add(e)
    engine.stop()

    rows = []
    for name, st in stats.items():
        row: dict[str, Any] = {"workload": name, "bytes": sizes[name], "per_message": name in many}
        row.update({s: st[s].as_dict() for s in SIDES if st[s].times})
        row["decode_x_engine"] = ratio(st["engine_dec"], st["dec"])
        row["encode_x_engine"] = ratio(st["engine_enc"], st["enc"])
        # best against best: what is left when a loaded machine slowed a side down in some rounds
        row["decode_x_engine_best"] = min(st["engine_dec"].times) / min(st["dec"].times)
        row["encode_x_engine_best"] = min(st["engine_enc"].times) / min(st["enc"].times)
        if st["msgpack_dec"].times:
            row["decode_x_msgpack"] = ratio(st["msgpack_dec"], st["dec"])
            row["encode_x_msgpack"] = ratio(st["msgpack_enc"], st["enc"])
            row["decode_x_msgpack_cpu"] = st["msgpack_dec"].cpu_median / st["dec"].cpu_median
            row["encode_x_msgpack_cpu"] = st["msgpack_enc"].cpu_median / st["enc"].cpu_median
        rows.append(row)
    print(f"{args.rounds} interleaved rounds; ms: median (min-max); x = peer median / our median (best: peer min / "
          "our min); gc = collections in our timed regions (gen0/gen1/gen2, all rounds)")
    for what, ours, eng, key in (("decode", "dec", "engine_dec", "decode_x_engine"),
                                 ("encode", "enc", "engine_enc", "encode_x_engine")):
        print(f"\n{what:8} {'workload':20} {'bytes':>9} {'ours ms':>22} {'gc':>7} {'gc off ms':>22} "
              f"{'engine ms':>22} {'x engine':>8} {'best':>6}")
        for r in rows:
            st = stats[r["workload"]]
            print(f"{'':8} {r['workload']:20} {r['bytes']:>9} {st[ours].span():>22} {st[ours].gc_note():>7} "
                  f"{st[ours + '_gc_off'].span():>22} {st[eng].span():>22} {r[key]:>8.2f} {r[key + '_best']:>6.2f}")
    for r in rows:
        st = stats[r["workload"]]
        if st["msgpack_dec"].times:
            print(f"\n{r['workload']} one message at a time (us per message): decode ours "
                  f"{st['dec'].span(1e6 / 100_000, 3)}, msgpack.unpackb {st['msgpack_dec'].span(1e6 / 100_000, 3)}"
                  f" -> {r['decode_x_msgpack']:.2f}x msgpack; encode ours {st['enc'].span(1e6 / 100_000, 3)}, "
                  f"msgpack.packb {st['msgpack_enc'].span(1e6 / 100_000, 3)} -> {r['encode_x_msgpack']:.2f}x")
            print(f"  by CPU time (both in this process; medians): decode {r['decode_x_msgpack_cpu']:.2f}x msgpack, "
                  f"encode {r['encode_x_msgpack_cpu']:.2f}x")
    if args.markdown:
        print("\n| workload | bytes | decode ms | engine ms | × engine (best) | encode ms | engine ms "
              "| × engine (best) | gc runs |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            st = stats[r["workload"]]
            gc_runs = [a + b for a, b in zip(st["dec"].gc_runs, st["enc"].gc_runs, strict=True)]
            print(f"| {r['workload']} | {r['bytes']:,}{' each' if r['per_message'] else ''} | {st['dec'].span()} | "
                  f"{st['engine_dec'].span()} | {r['decode_x_engine']:.2f} ({r['decode_x_engine_best']:.2f}) | "
                  f"{st['enc'].span()} | {st['engine_enc'].span()} | {r['encode_x_engine']:.2f} "
                  f"({r['encode_x_engine_best']:.2f}) | {'/'.join(map(str, gc_runs))} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
