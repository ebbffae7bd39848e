"""``godot-dissect read`` (``--format jsonl`` and the default text) over captures, against dpkt merely
parsing the same file's Ethernet/IP/UDP/TCP headers, in the same run; and the start-up time (a read
of an empty capture).

    python benchmarks/bench_read.py [CAPTURE ...] [--rounds N]   # default: makes a load capture (Godot 3.2.3)

A TCP-heavy capture of the same engine traffic (the README's second shape): the TCP stream of a
bigger load capture, ``python tools/captures/make_captures.py --load 100000 --load-out L.pcapng``
then ``tshark -r L.pcapng -Y tcp -w load-tcp.pcapng`` (20,001 length-prefixed messages).

Rounds are interleaved (dpkt, jsonl, text, empty, dpkt, ...) and every figure is the median over
the rounds with min-max, wall clock first, then the CPU time (user + system) the same runs used,
which a loaded machine disturbs less. The reader runs as the command a user types, as installed
(with a bytecode cache), its output read back through a pipe; dpkt runs in this process (no
interpreter start-up: the stricter floor). "gc" is the
collections (generations 0/1/2) the reader's process ran, from gc.get_stats() at its exit, median
over the rounds: the collector stays on.
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

import dpkt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.rounds import Samples, ratio  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# `python -m godot_dissect ARGS` that also reports its peak RSS (VmHWM: the process's own; getrusage
# would count the parent's memory too, which a vfork'ed child inherits as its high-water mark) and
# the collections it ran
_READER = """
import atexit, gc, runpy, sys
def _report():
    try:
        with open("/proc/self/status") as f:
            kb = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        import resource
        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    gcs = "/".join(str(s["collections"]) for s in gc.get_stats())
    print(f"peak-rss-kb {kb} gc {gcs}", file=sys.stderr)
atexit.register(_report)
sys.argv[0] = "godot_dissect"
runpy.run_module("godot_dissect", run_name="__main__", alter_sys=True)
"""


# The reader runs as installed: an install compiles the package's bytecode once (pip does), so the
# runs here use a bytecode cache (in a temporary directory, written by the first run) even where
# the environment says PYTHONDONTWRITEBYTECODE; start-up then measures imports, not compilation.
_PYCACHE = tempfile.mkdtemp(prefix="bench-read-pyc-")
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPYCACHEPREFIX": _PYCACHE}


#: the environment as given, for the start-up figure without a bytecode cache (if it says so)
_ENV_AS_IS = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}


def fresh_copy() -> str:
    """The package's sources and built extensions in a new directory, as a fresh checkout has them: no
    __pycache__ an earlier run here wrote (the installed libraries keep theirs, as they would)."""
    where = tempfile.mkdtemp(prefix="bench-read-fresh-")
    shutil.copytree(ROOT / "godot_dissect", os.path.join(where, "godot_dissect"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    return where


def run_reader(path: str, *fmt: str, env: dict[str, str] = _ENV, cwd: Path | str = ROOT
               ) -> tuple[float, float, int, int, str]:
    """Wall-clock and CPU (user + system) seconds, output lines, peak RSS (kB) and gc collections of
    one reader run; its output is consumed as it comes (a pipe reader that keeps nothing)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _READER, "read", path, *fmt],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    lines = 0
    while chunk := proc.stdout.read(1 << 20):
        lines += chunk.count(b"\n")
    err = proc.stderr.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"the reader failed:\n{err}")
    t = time.perf_counter() - t0
    tail = err.rsplit("peak-rss-kb", 1)[1].split()
    return t, usage.ru_utime + usage.ru_stime, lines, int(tail[0]), tail[2]


def run_python() -> tuple[float, float]:
    """Wall-clock and CPU seconds of ``python -c pass`` in the reader's environment."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "pass"], cwd=ROOT, env=_ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime


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


def empty_capture(directory: str) -> str:
    path = os.path.join(directory, "empty.pcap")
    with open(path, "wb") as f:
        dpkt.pcap.Writer(f, linktype=dpkt.pcap.DLT_EN10MB)
    return path


def bench(path: str, rounds: int, empty: str) -> None:
    floor, jsonl, text, start = Samples(), Samples(), Samples(), Samples()
    floor_cpu, jsonl_cpu, text_cpu, start_cpu = Samples(), Samples(), Samples(), Samples()
    start_nc, start_nc_cpu = Samples(), Samples()
    python, python_cpu = Samples(), Samples()
    no_cache = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    fresh = fresh_copy() if no_cache else ""
    fresh_env = _ENV_AS_IS | {"PYTHONPATH": fresh}
    rss, gcs = [], {"jsonl": [], "text": []}
    n = lines = text_lines = 0
    run_reader(empty)  # writes the bytecode cache
    for _ in range(max(rounds, 1)):
        t0, c0 = time.perf_counter(), time.process_time()
        n = dpkt_headers(path)
        floor.add(time.perf_counter() - t0)
        floor_cpu.add(time.process_time() - c0)
        t, c, lines, kb, g = run_reader(path, "--format", "jsonl")
        jsonl.add(t)
        jsonl_cpu.add(c)
        rss.append(kb)
        gcs["jsonl"].append(g)
        t, c, text_lines, kb, g = run_reader(path)
        text.add(t)
        text_cpu.add(c)
        rss.append(kb)
        gcs["text"].append(g)
        t, c, *_ = run_reader(empty)
        start.add(t)
        start_cpu.add(c)
        t, c = run_python()
        python.add(t)
        python_cpu.add(c)
        if no_cache:
            t, c, *_ = run_reader(empty, env=fresh_env, cwd=fresh)
            start_nc.add(t)
            start_nc_cpu.add(c)
    size = os.path.getsize(path) / 1e6
    print(f"{os.path.basename(path)}: {size:.1f} MB, {n} UDP/TCP packets, {lines} JSON lines, {text_lines} text lines;"
          f" {rounds} interleaved rounds, s: median (min-max)")
    print(f"  dpkt headers only (in process):     {floor.span(1, 3)}  cpu {floor_cpu.span(1, 3)}")
    print(f"  godot-dissect read --format jsonl:  {jsonl.span(1, 3)}  {ratio(jsonl, floor):.2f}x dpkt (target <= 1.5)"
          f"  cpu {jsonl_cpu.span(1, 3)} {ratio(jsonl_cpu, floor_cpu):.2f}x  gc {statistics.median_low(gcs['jsonl'])}")
    print(f"  godot-dissect read (text):          {text.span(1, 3)}  {ratio(text, floor):.2f}x dpkt (target <= 1.5)"
          f"  cpu {text_cpu.span(1, 3)} {ratio(text_cpu, floor_cpu):.2f}x  gc {statistics.median_low(gcs['text'])}")
    print(f"  godot-dissect read of an empty capture (start-up): {start.span(1, 3)} (target < 0.15)"
          f"  cpu {start_cpu.span(1, 3)}")
    print(f"  of which the interpreter alone (python -c pass, same environment): {python.span(1, 3)}"
          f"  cpu {python_cpu.span(1, 3)}")
    if no_cache:
        print(f"  the same start-up compiling the package's modules (fresh checkout, PYTHONDONTWRITEBYTECODE set): "
              f"{start_nc.span(1, 3)}  cpu {start_nc_cpu.span(1, 3)}")
    print(f"  peak RSS of the reader: {max(rss) / 1024:.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("captures", nargs="*")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds; medians are reported")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    paths = args.captures
    if not paths:
        paths = [os.path.join(tmp, "load.pcapng")]
        subprocess.run([sys.executable, str(ROOT / "tools/captures/make_captures.py"), "--load", "25000",
                        "--load-out", paths[0]], check=True, capture_output=True)
    empty = empty_capture(tmp)
    for p in paths:
        bench(p, args.rounds, empty)


if __name__ == "__main__":
    main()
