"""The long run of the adversarial harness (the CI slice is tests/test_hostile.py).

    python -m benchmarks.bench_hostile [--python-inputs 1000000] [--lua-inputs 100000]
                                       [--scale 10] [--out DIR]

1. Coverage-guided fuzzing (atheris, ``godot_dissect.fuzz.coverage``) of the Python paths: the
   decoders (compiled and pure, which must agree), the text parser, whole captures, structured
   TCP/UDP/ENet streams and the scapy dissectors; ``--python-inputs`` shared among the targets.
2. ``--lua-inputs`` mutated messages (the malformed corpus, the hostile messages and the committed
   captures' own messages, mutated: bit flips, extreme u32 counts/lengths, cuts, splices) as UDP
   datagrams, ENet datagrams and length-prefixed TCP streams, 10k per capture, through tshark
   with the generated Lua plugin (``-V``: every field dissected).
3. Every hostile class (``godot_dissect.fuzz.hostile``) at ``--scale`` times its CI size and twice
   that, through ``read -T jsonl``: time, peak RSS, and the time ratio at 2x the input.

Prints one table per part (inputs tried, failures, worst time and RSS per class) — the figures of
the README's Reliability section — and writes any failing input to ``--out``.
"""

from __future__ import annotations

import argparse
import random
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from godot_dissect.enet import build as enet
from godot_dissect.fuzz import harness, hostile
from godot_dissect.fuzz.malformed import malformed_corpus
from godot_dissect.fuzz.pcapout import ACK, PSH, SYN, PcapWriter
from godot_dissect.pcap.reader import read_pcap

ROOT = Path(__file__).resolve().parents[1]
#: share of the Python inputs per atheris target (they differ ~20x in speed)
TARGET_SHARES = {"decode": 0.55, "text": 0.25, "stream": 0.08, "scapy": 0.1, "pcap": 0.02}
LUA_PER_CAPTURE = 10_000
_U32 = struct.Struct("<I")
EXTREMES = (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x40000000, 0xFFFF, 1 << 20)


def run_atheris(total: int, out: Path, max_seconds: int = 0) -> list[tuple[str, int, float, str]]:
    """``max_seconds``: also stop each target after this long (0: only the input count)."""
    rows = []
    for name, share in TARGET_SHARES.items():
        runs = max(1, int(total * share))
        corpus = out / "corpus" / name
        start = time.perf_counter()
        limit = [f"-max_total_time={max_seconds}"] if max_seconds else []
        r = subprocess.run([sys.executable, "-m", "godot_dissect.fuzz.coverage", name, str(corpus), f"-runs={runs}",
                            *limit, "-max_len=8192", "-rss_limit_mb=1024", "-timeout=30",
                            f"-artifact_prefix={out}/{name}-"],
                           capture_output=True, text=True, errors="replace", cwd=ROOT)
        seconds = time.perf_counter() - start
        done = [line for line in r.stderr.splitlines() if line.startswith("Done ")]
        tried = int(done[-1].split()[1]) if done else 0
        rss = [w for line in r.stderr.splitlines() if line.startswith("#") for w in line.split() if w.endswith("Mb")]
        verdict = "ok" if r.returncode == 0 and done else "FAILED: " + r.stderr.strip()[-400:]
        rows.append((name, tried, seconds, verdict))
        print(f"atheris {name:7} {tried:>9} inputs {seconds:8.1f} s  rss {rss[-1] if rss else '?'}  {verdict}",
              flush=True)
    return rows


def _seed_messages() -> list[bytes]:
    msgs = [m.data for d in ("godot3", "godot4") for m in malformed_corpus(d)]
    msgs += [hostile.SURROGATE, hostile.GOOD, hostile.deep_key_dictionary(40), hostile.nested_dictionary(40)]
    for p in sorted((ROOT / "captures").glob("*.pcapng")):
        msgs += [r.raw for r in read_pcap(str(p)) if getattr(r, "raw", None)][:400]
    return [m for m in msgs if m]


def _mutate(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        if op == 0 and b:
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1 and len(b) >= 4:
            i = rng.randrange(0, len(b) - 3) & ~3
            b[i:i + 4] = _U32.pack(rng.choice(EXTREMES))
        elif op == 2 and b:
            del b[rng.randrange(len(b)):]
        elif op == 3:
            other = rng.choice(pool)
            i = rng.randrange(len(b) + 1)
            b[i:i] = other[rng.randrange(len(other) + 1):]
        elif op == 4 and b:
            i = rng.randrange(len(b))
            del b[i:i + rng.randint(1, 8)]
    return bytes(b[:4096])


def _lua_capture(path: Path, rng: random.Random, pool: list[bytes], n: int) -> None:
    w = PcapWriter(path)
    server = ("10.0.0.2", hostile.PORT)
    i = 0
    conn = 0
    while i < n:
        kind = rng.randrange(3)
        if kind == 0:  # a datagram
            w.udp(i * 1e-4, ("10.0.0.1", 40000 + rng.randrange(64)), server, _mutate(rng.choice(pool), rng, pool))
            i += 1
        elif kind == 1:  # an ENet datagram carrying a mutated message (or mutated itself)
            cmd = enet.send_reliable(0, i & 0xFFFF, _mutate(rng.choice(pool), rng, pool)[:1200])
            data = enet.build_datagram(0, [cmd], sent_time=i & 0xFFFF)
            w.udp(i * 1e-4, ("10.0.1.1", 41000), ("10.0.0.2", hostile.ENET_PORT),
                  _mutate(data, rng, pool) if rng.random() < 0.5 else data)
            i += 1
        else:  # a TCP connection with 20 length-prefixed mutated PDUs, cut into random segments
            conn += 1
            client = ("10.0.2.1", 20000 + conn % 40000)
            stream = b"".join(_U32.pack(len(m)) + m for m in (_mutate(rng.choice(pool), rng, pool) for _ in range(20)))
            w.tcp(i * 1e-4, client, server, 999, 0, SYN)
            seq, pos = 1000, 0
            while pos < len(stream):
                cut = rng.randint(1, 1400)
                w.tcp(i * 1e-4, client, server, seq + pos, 0, PSH | ACK, stream[pos:pos + cut])
                pos += cut
            i += 20
    w.close()


def run_lua(total: int, out: Path, seed: int = 1) -> tuple[int, int, float, float]:
    rng = random.Random(seed)
    pool = _seed_messages()
    tried = failures = 0
    worst_s = worst_mb = 0.0
    prefs = ("-o", f"godot.udp_ports:{hostile.PORT}", "-o", f"godot.tcp_ports:{hostile.PORT}",
             "-o", f"enet.udp_ports:{hostile.ENET_PORT}")
    with tempfile.TemporaryDirectory() as tmp:
        k = 0
        while tried < total:
            path = Path(tmp) / f"lua-{k}.pcap"
            n = min(LUA_PER_CAPTURE, total - tried)
            _lua_capture(path, rng, pool, n)
            # every other capture with the whole tree (godot.details): the default one shows two levels and
            # only checks the rest
            details = ("-o", "godot.details:TRUE") if k % 2 else ()
            o = harness.run_tshark(path, timeout=1800, extra=prefs + details)
            tried += n
            worst_s, worst_mb = max(worst_s, o.seconds), max(worst_mb, o.rss_mb)
            if not o.clean:
                failures += 1
                path.replace(out / f"lua-failure-{k}.pcap")
            print(f"tshark+lua {tried:>7} inputs  {o.seconds:6.1f} s {o.rss_mb:6.0f} MB  {o.crash or 'ok'}", flush=True)
            k += 1
    return tried, failures, worst_s, worst_mb


def _prefs(h: hostile.Hostile) -> tuple[str, ...]:
    args = list(h.read_args)
    out: list[str] = []
    for opt, prefs in (("-p", ("godot.udp_ports", "godot.tcp_ports")), ("--enet-port", ("enet.udp_ports",))):
        if opt in args:
            for pref in prefs:
                out += ["-o", f"{pref}:{args[args.index(opt) + 1]}"]
    return tuple(out)


def run_classes(scale: int, out: Path, names: list[str] | None = None, tshark: bool = False) -> list[tuple]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for h in hostile.CLASSES:
            if names and h.name not in names:
                continue
            n = h.sizes[0] * scale
            outcomes = []
            for size in (n, 2 * n):
                path = Path(tmp) / f"{h.name}-{size}{h.suffix}"
                h.build(size, path)
                o = harness.run_tscn(path, 1800) if h.suffix == ".tscn" else \
                    harness.run_read(path, h.read_args, ("-T", "jsonl"), 1800)
                outcomes.append((size, path.stat().st_size, o))
                if not o.clean:
                    path.replace(out / path.name)
            (n1, b1, o1), (n2, b2, o2) = outcomes
            ratio = o2.seconds / max(o1.seconds, 1e-3)
            rows.append((h.name, n2, h.unit, b2, o2.seconds, o2.rss_mb, ratio,
                         "ok" if o1.clean and o2.clean else (o1.crash or o2.crash)))
            print(f"{h.name:20} {n2:>8} {h.unit:20} {b2 / 1e6:8.1f} MB  {o2.seconds:7.2f} s {o2.rss_mb:6.0f} MB "
                  f"2x: {ratio:4.2f}x  {rows[-1][-1]}", flush=True)
            if tshark and h.lua:  # both sizes: the 2x ratio of tshark+Lua too
                runs = []
                for size in (n, 2 * n):
                    path = Path(tmp) / f"{h.name}-{size}{h.suffix}"
                    h.build(size, path)
                    runs.append(harness.run_tshark(path, timeout=1800, extra=_prefs(h)))
                t1, t = runs
                print(f"{'':20} tshark+lua {t.seconds:7.2f} s {t.rss_mb:6.0f} MB "
                      f"2x: {t.seconds / max(t1.seconds, 1e-3):4.2f}x  {t1.crash or t.crash or 'ok'}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python-inputs", type=int, default=1_000_000)
    ap.add_argument("--lua-inputs", type=int, default=100_000)
    ap.add_argument("--scale", type=int, default=10, help="hostile classes at this many times their CI size")
    ap.add_argument("--out", default="hostile-findings")
    ap.add_argument("--parts", default="classes,lua,atheris")
    ap.add_argument("--classes", help="comma-separated hostile classes (default: all)")
    ap.add_argument("--tshark", action="store_true", help="classes: tshark+Lua too, at both sizes")
    ap.add_argument("--max-seconds-per-target", type=int, default=0, help="atheris: stop each target after this long")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    parts = args.parts.split(",")
    if "classes" in parts:
        run_classes(args.scale, out, args.classes.split(",") if args.classes else None, args.tshark)
    if "lua" in parts:
        tried, failures, worst_s, worst_mb = run_lua(args.lua_inputs, out)
        print(f"tshark+lua: {tried} inputs, {failures} failing captures, worst {worst_s:.1f} s / {worst_mb:.0f} MB")
    if "atheris" in parts:
        rows = run_atheris(args.python_inputs, out, args.max_seconds_per_target)
        print(f"atheris: {sum(r[1] for r in rows)} inputs, {sum(r[3] != 'ok' for r in rows)} failing targets")


if __name__ == "__main__":
    main()
