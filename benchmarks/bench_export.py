"""``godot-dissect export`` (issue 12) against floors and a peer, in one run, interleaved (A B A B),
medians of N rounds:

1. one capture to Parquet with one worker, against dpkt merely parsing the same file's headers
   (target <= 2x), and against ``pcaptoparquet`` (a peer that extracts headers only) on the same file;
2. the exporter's peak RSS on the capture and on 8 copies merged into one (``mergecap -a``): it
   streams in batches, so the 8x file should need no more memory;
3. 8 copies of the capture as 8 files: ``--workers 2`` against ``--workers 1`` (target >= 1.7x
   on 2 cores), and through a local Dask cluster (``dask scheduler`` + 2 single-thread workers);
   beside the wall-clock times, the CPU seconds the conversions took per file (``export --verbose``),
   which other jobs on a shared machine do not change.

    python benchmarks/bench_export.py CAPTURE [CAPTURE ...] [--all-types] [--rounds 5] [--pcaptoparquet CMD]

Without a capture (or with --all-types, besides them) it uses a generated one: every value type Godot 3.2.3 sent in
captures/godot3-udp-all-types.pcapng, repeated (small datagrams of many types).
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import dpkt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script (python benchmarks/bench_export.py) or as a module

from benchmarks.bench_read import _READER, dpkt_headers  # noqa: E402

# bytecode cached as an installed package has it (a PYTHONDONTWRITEBYTECODE shell would compile every module
# at every start, for every command measured)
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
       "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def repeat_capture(src: Path, dst: Path, times: int) -> None:
    """A classic pcap of ``src``'s packets ``times`` over, each copy later in time than the last."""
    with src.open("rb") as f:
        pcapng = f.read(4) == b"\x0a\x0d\x0d\x0a"
        f.seek(0)
        reader = dpkt.pcapng.Reader(f) if pcapng else dpkt.pcap.Reader(f)
        linktype = reader.datalink()
        packets = list(reader)
    t0, step = packets[0][0], packets[-1][0] - packets[0][0] + 1
    with dst.open("wb") as f:
        w = dpkt.pcap.Writer(f, linktype=linktype)
        for i in range(times):
            for ts, buf in packets:
                w.writepkt(buf, ts=t0 + i * step + (ts - t0))


#: CPU seconds of each side, beside its wall-clock time (on a shared machine the CPU ratio is the steadier one)
CPU: dict[str, list[float]] = {}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


#: CPU seconds the conversions themselves took, summed over the files of each run (``export --verbose``), per side
FILE_CPU: dict[str, list[float]] = {}


def export(paths: list[str], out: Path, *extra: str, side: str = "") -> tuple[float, int]:
    """Wall-clock seconds and peak RSS (kB) of one ``godot-dissect export`` run, as a user types it; the
    conversions' CPU seconds (wherever they ran, a Dask worker too) go to FILE_CPU[side]."""
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", _READER, "export", *paths, "-o", str(out), "--verbose", *extra],
                       capture_output=True, text=True, env=ENV, cwd=ROOT)
    t = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"export failed:\n{r.stderr}")
    cpu = [float(line.rsplit("(", 1)[1].split()[0]) for line in r.stderr.splitlines() if line.endswith("CPU s)")]
    FILE_CPU.setdefault(side, []).append(sum(cpu))
    return t, int(r.stderr.rsplit("peak-rss-kb", 1)[1].split()[0])


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def cpu_timed(name: str, fn: Callable[[], float], in_process: bool = False) -> Callable[[], float]:
    """``fn`` (which returns its wall-clock time), also recording its CPU seconds under ``name``
    (a subprocess's own and its children's, or this process's)."""
    def run() -> float:
        c0 = time.process_time() if in_process else _children_cpu()
        t = fn()
        CPU.setdefault(name, []).append((time.process_time() if in_process else _children_cpu()) - c0)
        return t
    return run


def interleaved(rounds: int, sides: dict[str, Callable[[], float]]) -> dict[str, list[float]]:
    """Each side once per round, in turn (A B A B ...): the machine's load falls on all alike."""
    times: dict[str, list[float]] = {k: [] for k in sides}
    for _ in range(rounds):
        for name, fn in sides.items():
            times[name].append(fn())
    return times


def fmt(ts: list[float]) -> str:
    return f"{statistics.median(ts):.2f} s (runs {', '.join(f'{t:.2f}' for t in ts)})"


class DaskCluster:
    """``dask scheduler`` + two single-thread ``dask worker`` processes on 127.0.0.1."""

    def __init__(self, tmp: Path) -> None:
        sf = tmp / "scheduler.json"
        dash = ["--dashboard-address", "127.0.0.1:0"]
        self.procs = [subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port",
                                        "0", "--scheduler-file", str(sf), *dash], env=ENV, cwd=tmp,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        while not sf.exists():
            time.sleep(0.1)
        self.procs += [subprocess.Popen([sys.executable, "-m", "dask", "worker", "--scheduler-file", str(sf),
                                         "--host", "127.0.0.1", "--nthreads", "1", "--memory-limit", "0", *dash],
                                        env=ENV, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                       for _ in range(2)]
        from distributed import Client

        with Client(scheduler_file=str(sf), timeout=60) as c:
            c.wait_for_workers(2, timeout=60)
            self.address = c.scheduler.address

    def stop(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait(timeout=30)


def bench_capture(path: str, tmp: Path, rounds: int, peer: list[str] | None) -> None:
    size = os.path.getsize(path) / 1e6
    out = tmp / "one"
    rss: list[int] = []

    def ours() -> float:
        t, kb = export([path], out, "--workers", "1", side="one")
        rss.append(kb)
        return t

    floor_name, ours_name, peer_name = "dpkt headers only (floor)", "export --format parquet, 1 worker", \
        "pcaptoparquet (peer)"
    CPU.clear()
    sides: dict[str, Callable[[], float]] = {
        floor_name: cpu_timed(floor_name, lambda: timed(lambda: dpkt_headers(path)), in_process=True),
        ours_name: cpu_timed(ours_name, ours)}
    reader_name = "read --format jsonl > /dev/null (the reader alone, for reference)"
    sides[reader_name] = cpu_timed(reader_name, lambda: timed(lambda: subprocess.run(
        [sys.executable, "-m", "godot_dissect", "read", path, "--format", "jsonl"], check=True,
        stdout=subprocess.DEVNULL, env=ENV, cwd=ROOT)))
    if peer:
        peer_out = tmp / "peer.parquet"
        sides[peer_name] = cpu_timed(peer_name, lambda: timed(lambda: subprocess.run(
            [*peer, "-i", path, "-o", str(peer_out), "-f", "parquet"], check=True, capture_output=True, env=ENV)))
    times = interleaved(rounds, sides)
    print(f"\n== {Path(path).name}: {size:.1f} MB, {dpkt_headers(path)} UDP/TCP packets (load average after: "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})")
    floor, floor_cpu = statistics.median(times[floor_name]), statistics.median(CPU[floor_name])
    for name, ts in times.items():
        cpu = statistics.median(CPU[name])
        print(f"{name}: wall {fmt(ts)} = {statistics.median(ts) / floor:.2f}x dpkt; "
              f"CPU {cpu:.2f} s (min-max {min(CPU[name]):.2f}-{max(CPU[name]):.2f}) = {cpu / floor_cpu:.2f}x dpkt")
    ours_t, ours_cpu = statistics.median(times[ours_name]), statistics.median(CPU[ours_name])
    rounds_cpu = [o / f for o, f in zip(CPU[ours_name], CPU[floor_name], strict=True)]  # round by round
    print(f"export / dpkt floor: {ours_t / floor:.2f}x wall, {ours_cpu / floor_cpu:.2f}x CPU (rounds "
          f"{min(rounds_cpu):.2f}-{max(rounds_cpu):.2f}x; target <= 2x)")
    if peer:
        print(f"export / pcaptoparquet: {ours_t / statistics.median(times[peer_name]):.2f} wall, "
              f"{ours_cpu / statistics.median(CPU[peer_name]):.2f} CPU")
    x8 = tmp / ("x8" + Path(path).suffix)
    subprocess.run(["mergecap", "-a", "-w", str(x8), *[path] * 8], check=True)
    t8, kb8 = export([str(x8)], tmp / "x8", "--workers", "1")
    print(f"peak RSS: 1x {max(rss) / 1024:.0f} MB, 8x ({os.path.getsize(x8) / 1e6:.0f} MB, {t8:.2f} s) "
          f"{kb8 / 1024:.0f} MB")
    x8.unlink()


def bench_many(path: str, tmp: Path, rounds: int, dask: bool) -> None:
    folder = tmp / "copies"
    folder.mkdir(exist_ok=True)
    copies = []
    for i in range(8):
        c = folder / f"copy-{i}{Path(path).suffix}"
        if not c.exists():
            shutil.copy(path, c)
        copies.append(str(c))
    w1, w2, dask_name = "--workers 1", "--workers 2", "--scheduler (local Dask, 2 workers)"
    FILE_CPU.clear()
    CPU.clear()
    sides: dict[str, Callable[[], float]] = {
        w1: cpu_timed(w1, lambda: export(copies, tmp / "w1", "--workers", "1", side=w1)[0]),
        w2: cpu_timed(w2, lambda: export(copies, tmp / "w2", "--workers", "2", side=w2)[0]),
    }
    # the pool's rounds run with no Dask cluster alive: its idle scheduler and workers take CPU from them
    times = interleaved(rounds, sides)
    if dask:
        cluster = DaskCluster(tmp)
        try:  # then the cluster's rounds, interleaved with --workers 1 again for a ratio from the same minutes
            w1_again = f"{w1} (beside the cluster)"
            dask_sides = {w1_again: lambda: export(copies, tmp / "w1", "--workers", "1", side=w1_again)[0],
                          dask_name: lambda: export(copies, tmp / "dask", "--scheduler", cluster.address,
                                                    side=dask_name)[0]}
            dask_times = interleaved(rounds, dask_sides)
        finally:
            cluster.stop()
    print(f"\n== 8 copies of {Path(path).name} as 8 files ({os.cpu_count()} cores, load average after: "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})")
    groups = [times] + ([dask_times] if dask else [])
    for group in groups:
        one = statistics.median(next(iter(group.values())))
        for name, ts in group.items():
            line = f"{name}: {fmt(ts)}  speed-up {one / statistics.median(ts):.2f}x; " \
                   f"conversion CPU {statistics.median(FILE_CPU[name]) / len(copies):.2f} s per file"
            if name in CPU:  # the whole run's processes (the Dask workers are not ours to count)
                line += f", whole run {statistics.median(CPU[name]):.2f} CPU s"
            print(line)
    print("target: --workers 2 >= 1.7x --workers 1 (on an idle machine; the CPU per file says what contention hides)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("captures", nargs="*")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds; medians count")
    ap.add_argument("--pcaptoparquet", default="pcaptoparquet", help="the peer's command ('' to skip)")
    ap.add_argument("--no-dask", action="store_true", help="skip the local Dask cluster")
    ap.add_argument("--no-many", action="store_true", help="skip the 8-files part")
    ap.add_argument("--many-only", action="store_true", help="only the 8-files part")
    ap.add_argument("--all-types", action="store_true", help="also the generated capture (a second shape)")
    args = ap.parse_args()
    peer = shlex.split(args.pcaptoparquet) if args.pcaptoparquet else None
    if peer and shutil.which(peer[0]) is None:
        print(f"(pcaptoparquet not found as {peer[0]!r}: pip install pcaptoparquet, or --pcaptoparquet CMD)")
        peer = None
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        captures = list(args.captures)
        if not captures or args.all_types:
            gen = tmp / "all-types-x150.pcap"
            repeat_capture(ROOT / "captures" / "godot3-udp-all-types.pcapng", gen, 150)
            captures.append(str(gen))
        for c in captures if not args.many_only else ():
            bench_capture(c, tmp, args.rounds, peer)
        if not args.no_many:
            bench_many(captures[0], tmp, args.rounds, not args.no_dask)


if __name__ == "__main__":
    main()
