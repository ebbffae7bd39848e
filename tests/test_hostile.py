"""The standing adversarial harness, CI slice: every hostile class (``godot_dissect.fuzz.hostile``)
at its small and twice its small size, through ``read`` in every output format, the scapy layers
and tshark with the generated Lua plugin, each a separate process.

Asserted per run: exit 0 or the CLI's clean error, no traceback / RecursionError / Lua error, peak
RSS and time under the bounds below, the error records the class must give (what a bound cuts off
is reported once per cut, never once per segment), and at twice the input at most ~2.5x the time
over the tool's start-up floor (tshark with the plugin: 3.3x CPU, and at most 2.2x the plugin's own Lua VM
instructions, counted). The long run is ``benchmarks/bench_hostile.py``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from godot_dissect.fuzz import harness, hostile
from godot_dissect.fuzz.pcapout import PcapWriter

#: bounds of one run at CI sizes (the issue's goal for read: < 150 MB on any input)
READ_RSS_MB = 150
READ_SECONDS = 60
SCAPY_RSS_MB = 300
SCAPY_SECONDS = 120
SCAPY_SHARE = 4  # scapy reads each class at a quarter of its small size
TSHARK_RSS_MB = 400  # tshark alone takes ~160 MB here
TSHARK_SECONDS = 120
#: at 2x the input, at most this many times the time above the start-up floor ...
SCALE_RATIO = 2.5
#: ... once that time is long enough to measure
SCALE_MIN_SECONDS = 1.0
#: tshark with the plugin at 2x the input: its CPU seconds took 2.3-2.9x (resync_junk 2.5-2.6x, enet_peers up to
#: 2.9x, the plugin of this round and the one before alike) where its instructions double exactly (callgrind,
#: above start-up: resync_junk 2048 -> 4096 6.80 G -> 13.62 G, enet_peers 64 -> 128 peers 4.20 G -> 8.33 G): the
#: memory these classes make tshark hold grows with the input, and each step's cache misses with it. A quadratic
#: path takes 4x.
TSHARK_SCALE_RATIO = 3.3

CAPTURES = Path(__file__).resolve().parents[1] / "captures"

#: classes another branch fixes (issue 15 items they own); strict, so the mark must go once fixed
OWNED_ELSEWHERE: dict[str, str] = {}


def _mark(name: str) -> list:
    why = OWNED_ELSEWHERE.get(name)
    return [pytest.mark.xfail(strict=True, reason=why)] if why else []


CLASSES = [pytest.param(h, id=h.name, marks=_mark(h.name)) for h in hostile.CLASSES]


@pytest.fixture(scope="module")
def floor(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float]:
    """Start-up CPU time of each tool on a one-datagram capture (what the scaling check subtracts)."""
    folder = tmp_path_factory.mktemp("floor")
    w = PcapWriter(folder / "one.pcap")
    w.udp(0, hostile.CLIENT, hostile.SERVER, hostile.GOOD)
    w.close()
    hostile.tscn_sections(1, folder / "one.tscn")
    floors = {"read": min(harness.run_read(folder / "one.pcap", fmt=("-T", "jsonl")).cpu_seconds for _ in range(3)),
              "tscn": min(harness.run_tscn(folder / "one.tscn").cpu_seconds for _ in range(2))}
    if shutil.which("tshark"):
        floors["tshark"] = min(harness.run_tshark(folder / "one.pcap").cpu_seconds for _ in range(2))
    return floors


def _build(h: hostile.Hostile, n: int, tmp: Path) -> Path:
    path = tmp / f"{h.name}-{n}{h.suffix}"
    h.build(n, path)
    return path


def _check(o: harness.Outcome, rss_mb: float, seconds: float) -> None:
    assert o.clean, f"{o.tool}: {o.crash}"
    assert o.rss_mb < rss_mb, f"{o.tool}: peak RSS {o.rss_mb:.0f} MB"
    assert o.seconds < seconds, f"{o.tool}: {o.seconds:.1f} s"


def _scales(small: float, large: float, floor: float, what: str, detail: str = "", ratio: float = SCALE_RATIO) -> None:
    a, b = max(small - floor, 0.05), large - floor
    if b > SCALE_MIN_SECONDS:
        assert b <= ratio * a, \
            f"{what}: 2x input took {b / a:.1f}x the time ({small:.2f} s -> {large:.2f} s){detail}"


@pytest.mark.parametrize("h", CLASSES)
def test_read(h: hostile.Hostile, tmp_path: Path, floor: dict[str, float]) -> None:
    small, large = (_build(h, n, tmp_path) for n in h.sizes)
    if h.suffix == ".tscn":
        runs = [harness.run_tscn(small), harness.run_tscn(large)]
        for o in runs:
            _check(o, READ_RSS_MB, READ_SECONDS)
        if h.scales:
            _scales(runs[0].cpu_seconds, runs[1].cpu_seconds, floor["tscn"], f"{h.name} tscn.load")
        if h.name == "tscn_bad_utf8":
            assert all(o.rc == 2 for o in runs)  # a clean TextParseError
        return
    for fmt in harness.READ_FORMATS:
        _check(harness.run_read(small, h.read_args, fmt), READ_RSS_MB, READ_SECONDS)
    runs = [harness.run_read(p, h.read_args, ("-T", "jsonl")) for p in (small, large)]
    lo, hi = h.errors
    for o in runs:
        _check(o, READ_RSS_MB, READ_SECONDS)
        assert o.error_records >= lo and (hi is None or o.error_records <= hi), \
            f"{o.error_records} error records, expected {lo}..{hi}"
    if h.scales:
        _scales(runs[0].cpu_seconds, runs[1].cpu_seconds, floor["read"], f"{h.name} read")


@pytest.mark.parametrize("h", [p for p in CLASSES if p.values[0].suffix == ".pcap"])
def test_scapy(h: hostile.Hostile, tmp_path: Path) -> None:
    # a quarter of the small size: scapy spends ~0.3 ms a packet before any Godot layer
    _check(harness.run_scapy(_build(h, max(1, h.sizes[0] // SCAPY_SHARE), tmp_path)), SCAPY_RSS_MB, SCAPY_SECONDS)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
@pytest.mark.parametrize("h", [p for p in CLASSES if p.values[0].lua])
def test_tshark_lua(h: hostile.Hostile, tmp_path: Path) -> None:
    _check(harness.run_tshark(_build(h, h.sizes[0], tmp_path), extra=tuple(_lua_prefs(h))),
           TSHARK_RSS_MB, TSHARK_SECONDS)


#: classes whose tshark+Lua time is checked at two sizes (the sizes where a quadratic path shows): one PDU as
#: 1-byte segments (Wireshark's own reassembly is quadratic in the segments it holds for one PDU), 128 ENet
#: peers' never-completed groups
#: (trickle from 20k segments: tshark's first 10k cost ~2/3 as much per segment as the later ones, measured)
#: (resync_junk, big_prefix_trickle: a skipped run is scanned by the plugin itself, each offset once)
LUA_SCALING = {"trickle": (20_000, 40_000), "enet_peers": (64, 128), "resync_junk": (2048, 4096),
               "big_prefix_trickle": (20_000, 40_000)}


def _lua_prefs(h: hostile.Hostile) -> list[str]:
    """The read options of a class as the plugin's preferences (the ports it is told about)."""
    args = list(h.read_args)
    out = []
    for opt, prefs in (("-p", ("godot.udp_ports", "godot.tcp_ports")), ("--enet-port", ("enet.udp_ports",))):
        if opt in args:
            for pref in prefs:
                out += ["-o", f"{pref}:{args[args.index(opt) + 1]}"]
    return out


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
@pytest.mark.parametrize("name", sorted(LUA_SCALING))
def test_tshark_lua_scales(name: str, tmp_path: Path, floor: dict[str, float]) -> None:
    h = hostile.BY_NAME[name]
    paths = [_build(h, n, tmp_path) for n in LUA_SCALING[name]]
    # each size three times, alternating, and the smallest CPU time of each: Wireshark's TCP reassembly walks
    # a linked list of every segment of a stage per segment added (linear in segments, but each step a likely
    # cache miss), so other processes sharing the caches stretch its CPU seconds, the bigger run's most
    # (measured under load 6: 20k segments 2.0-2.8 s, 40k 4.8-6.5 s; alone 1.8 and 3.5 s)
    runs = [harness.run_tshark(p, extra=tuple(_lua_prefs(h))) for _ in range(3) for p in paths]
    for o in runs:
        _check(o, TSHARK_RSS_MB, TSHARK_SECONDS)
    small, large = (min(o.cpu_seconds for o in runs[i::2]) for i in range(2))
    detail = "; runs (CPU s, of it system, peak MB): " + ", ".join(
        f"{o.cpu_seconds:.2f}/{o.system_seconds:.2f}/{o.rss_mb:.0f}" for o in runs)
    _scales(small, large, floor["tshark"], f"{name} tshark+lua", detail, TSHARK_SCALE_RATIO)


#: the plugin's own work at 2x the input, counted: Lua VM instructions (deterministic; linear work doubles them)
LUA_VM_SCALE_RATIO = 2.2
#: a second script, loaded after the plugin: counts the Lua VM instructions of everything run from then on (a
#: hook every VM_COUNT_STEP) and writes the count when Wireshark closes its Lua state (the object that writes it
#: is held by the hook: a global of a script's is collected once the script has run)
VM_COUNT_STEP = 1000
VM_COUNTER = f"""local n = 0
local at_close = setmetatable({{}}, {{ __gc = function() io.stderr:write("vm-steps " .. n .. "\\n") end }})
debug.sethook(function() n = n + 1; return at_close end, "", {VM_COUNT_STEP})
"""


def _vm_steps(path: Path, counter: Path, prefs: list[str]) -> int:
    argv = ["tshark", "-n", "-X", f"lua_script:{harness.lua_script()}", "-X", f"lua_script:{counter}",
            "-r", str(path), "-V", *prefs]
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=TSHARK_SECONDS,
                          check=True)
    steps = [int(line.split()[1]) for line in done.stderr.decode().splitlines() if line.startswith("vm-steps ")]
    assert len(steps) == 1, done.stderr.decode()[-300:]
    return steps[0]


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
@pytest.mark.parametrize("name", sorted(LUA_SCALING))
def test_lua_plugin_work_scales(name: str, tmp_path: Path) -> None:
    """What the CPU check above cannot tell from the cache (see TSHARK_SCALE_RATIO): the plugin's own Lua work
    at 2x the input, in VM instructions, at most LUA_VM_SCALE_RATIO times that at 1x."""
    h = hostile.BY_NAME[name]
    counter = tmp_path / "vm_counter.lua"
    counter.write_text(VM_COUNTER)
    small, large = (_vm_steps(_build(h, n, tmp_path), counter, _lua_prefs(h)) for n in LUA_SCALING[name])
    assert small > 100, f"{name}: the plugin ran {small} x {VM_COUNT_STEP} VM instructions: was it counted?"
    assert large <= LUA_VM_SCALE_RATIO * small, \
        f"{name}: 2x input took {large / small:.2f}x the plugin's Lua VM instructions ({small} -> {large} steps)"


@pytest.mark.parametrize("capture", sorted(p.name for p in CAPTURES.glob("*.pcapng"))[:4])
def test_cut_captures(capture: str, tmp_path: Path) -> None:
    """A real capture cut anywhere: exit 0 or a clean one-line error, never a traceback."""
    data = (CAPTURES / capture).read_bytes()
    for i, cut in enumerate(sorted({24, 100, len(data) // 3, len(data) // 2 + 7, len(data) - 5})):
        path = tmp_path / f"cut{i}.pcapng"
        path.write_bytes(data[:cut])
        o = harness.run_read(path, fmt=("-T", "jsonl"))
        assert o.clean, f"cut at {cut}: {o.crash}"


# --- coverage-guided fuzz targets (the long run drives them for 1M inputs) ---------------------------

atheris = pytest.importorskip("atheris", reason="atheris not installed (pip install atheris)")


@pytest.mark.parametrize("target", ["decode", "text", "stream", "scapy", "pcap"])
def test_fuzz_targets_take_their_seeds(target: str) -> None:
    """Every seed of every target runs clean in-process (what atheris starts from)."""
    from godot_dissect.fuzz import coverage

    fn = coverage.TARGETS[target]
    n = 0
    for seed in coverage.seeds(target):
        fn(seed)
        fn(seed[: len(seed) // 2])  # and cut
        n += 1
    assert n >= (5 if target == "pcap" else 50)


def test_atheris_runs_a_target(tmp_path: Path) -> None:
    """The atheris wiring itself: 500 coverage-guided inputs on the decoders, no finding."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "godot_dissect.fuzz.coverage", "decode", "-runs=500", "-max_len=512",
                        f"-artifact_prefix={tmp_path}/"], capture_output=True, text=True, timeout=600,
                       cwd=tmp_path, env={**__import__("os").environ,
                                          "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Done 500 runs" in r.stderr
