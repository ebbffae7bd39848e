"""tshark with the generated Lua dissectors against tshark without them: same capture, same run,
interleaved rounds.

    python benchmarks/bench_lua.py [CAPTURE ...] [--rounds N] [--prefs 'godot.compact:TRUE' ...] [--floor]
    python benchmarks/bench_lua.py --make-enet-load /tmp/enet-load.pcap [--copies 150]
    python benchmarks/bench_lua.py --make-ws-load /tmp/ws-load.pcap [--copies 600]
    python benchmarks/bench_lua.py --make-enet-session /tmp/enet-session.pcapng
    python benchmarks/bench_lua.py --make-enet-mix /tmp/enet-mix.pcapng

Without CAPTURE a load capture is made with real Godot 3.2.3 processes
(``tools/captures/make_captures.py --load 25000``: 25,001 UDP game-state datagrams and 5,001 TCP
messages). ``--make-enet-load`` writes the second load capture, of another shape: the committed
real Godot 3.2.3 ENet multiplayer capture (``captures/godot3-enet-multiplayer.pcapng``: RPCs and
remote sets with Dictionary, Array, math and PoolByteArray arguments, fragments, relays) replayed
``--copies`` times, each copy a connection of its own (other client ports, later times).
``--make-enet-session`` captures a third shape from real Godot 3.2.3 processes: one long ENet session of steady
game traffic (``tools/captures/godot3/enet_load.gd``: 20,000 unreliable RPCs with a Dictionary argument each way,
reliable chat RPCs and remote sets; ~42,000 frames), on the loopback interface with dumpcap.
``--make-enet-mix`` captures a fourth the same way: a game of a server and three clients where most traffic crosses
the server (``tools/captures/godot3/enet_mix.gd``: state RPCs with a Dictionary, relayed chat RPCs, relayed
PoolByteArrays of 2.5-3.2 kB in ENet fragments, remote sets, world snapshots of an Array of Dictionaries; ~25,000
frames).
``--make-ws-load`` writes another shape, Godot 4 SceneMultiplayer over WebSocket: the committed real
capture (``captures/godot4-websocket-multiplayer.pcapng``: the HTTP upgrade, SIMPLIFY_PATH,
CONFIRM_PATH, RPCs with compressed arguments of most types, a raw packet) replayed the same way, each
copy a TCP connection of its own.

Each round runs every configuration once, in turn (A B C D, A B C D, ...): ``tshark -V`` and plain
``tshark`` (the packet list), each without and with the dissector, their output read through a pipe.
Times are the tshark processes' CPU time (user + system); the report gives the median of the rounds
with min-max, and the ratio of the medians. Targets: ``-V`` with the dissector at most 3x ``-V``
without, the packet list at most 2x.

``--floor`` adds the floor of the dissector's tree to the ``-V`` rounds: a count run first
(``benchmarks/lua/api_count.lua`` loaded before the dissector) counts the calls it makes into Wireshark's
tree API on the capture (items added, marked generated or hidden, TvbRanges made, other item calls); then
``benchmarks/lua/api_floor.lua``, a post-dissector that makes the same calls spread evenly over the frames and
computes nothing, is timed with the others. Its ratio is what Wireshark 4.0's Lua charges for a tree of that
size on that capture; the dissector's ratio over it is the cost of reading the bytes and of everything else.
(The floor's run keeps plain tshark's own items for the payload, the Data lines the dissector replaces, so it
is a little above the true floor.)
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LUA = ROOT / "lua" / "godot.lua"
API_COUNT = ROOT / "benchmarks" / "lua" / "api_count.lua"
API_FLOOR = ROOT / "benchmarks" / "lua" / "api_floor.lua"
ENET_SOURCE = ROOT / "captures" / "godot3-enet-multiplayer.pcapng"
WS_SOURCE = ROOT / "captures" / "godot4-websocket-multiplayer.pcapng"
TARGETS = {"-V": 3.0, "list": 2.0}


def run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    """(cpu seconds, output lines) of one tshark run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    lines = 0
    assert proc.stdout is not None
    for chunk in iter(lambda: proc.stdout.read(1 << 20), b""):  # type: ignore[union-attr]
        lines += chunk.count(b"\n")
    if proc.wait() != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), lines


def _replay(source: Path, out: Path, copies: int, move: Callable[[Any, int], None]) -> None:
    """A committed capture ``copies`` times into a pcap, each copy after the one before; ``move(segment, i)``
    gives copy i's UDP datagram or TCP segment its own client port (checksum left to be ignored)."""
    import dpkt

    with source.open("rb") as f:
        frames = [(ts, bytes(buf)) for ts, buf in dpkt.pcapng.Reader(f)]
    span = frames[-1][0] - frames[0][0] + 1.0
    with out.open("wb") as f:
        w = dpkt.pcap.Writer(f, linktype=dpkt.pcap.DLT_EN10MB, nano=True)
        for i in range(copies):
            for ts, buf in frames:
                eth = dpkt.ethernet.Ethernet(buf)
                if isinstance(eth.data.data, (dpkt.udp.UDP, dpkt.tcp.TCP)):
                    move(eth.data.data, i)
                    eth.data.data.sum = 0
                w.writepkt(bytes(eth), ts=ts + i * span)


def make_enet_load(out: Path, copies: int) -> None:
    """The committed ENet capture ``copies`` times: in copy i the two clients use ports 52000+2i and
    52001+2i (ephemeral ports no Wireshark dissector claims), so each copy is new ENet and multiplayer
    conversations, CONNECT included; each copy starts after the one before."""
    server_port = 4270

    def move(udp: Any, i: int) -> None:
        if udp.sport != server_port:
            udp.sport = 52000 + 2 * i + (udp.sport - server_port - 1)
        if udp.dport != server_port:
            udp.dport = 52000 + 2 * i + (udp.dport - server_port - 1)

    _replay(ENET_SOURCE, out, copies, move)


def make_ws_load(out: Path, copies: int) -> None:
    """The committed Godot 4 WebSocket multiplayer capture ``copies`` times: in copy i the client's port is
    30000+i, so each copy is a new TCP connection (handshake, HTTP upgrade, WebSocket, multiplayer
    conversation); each copy starts after the one before."""
    import dpkt

    with WS_SOURCE.open("rb") as f:
        ports = {tcp.dport for _, buf in dpkt.pcapng.Reader(f)
                 if isinstance(tcp := dpkt.ethernet.Ethernet(buf).data.data, dpkt.tcp.TCP)
                 and tcp.flags & dpkt.tcp.TH_SYN and not tcp.flags & dpkt.tcp.TH_ACK}
    server_port = ports.pop()  # (the port the client's SYN goes to)

    def move(tcp: Any, i: int) -> None:
        if tcp.sport != server_port:
            tcp.sport = 30000 + i
        if tcp.dport != server_port:
            tcp.dport = 30000 + i

    _replay(WS_SOURCE, out, copies, move)


def make_enet_session(out: Path) -> None:
    """Capture tools/captures/godot3/enet_load.gd's session (a server and a client, real Godot 3.2.3) with dumpcap."""
    _capture_godot3_session("enet_load.gd", [{}], out)


def make_enet_mix(out: Path) -> None:
    """Capture tools/captures/godot3/enet_mix.gd's game (a server and three clients, real Godot 3.2.3) with dumpcap."""
    _capture_godot3_session("enet_mix.gd", [{"GDX_NAME": name} for name in ("a", "b", "c")], out)


def _capture_godot3_session(script_name: str, clients: list[dict[str, str]], out: Path) -> None:
    """Run a tools/captures/godot3 script as a server and the given clients (their extra environment), each a
    real Godot 3.2.3 process, and capture its port on the loopback interface with dumpcap."""
    import time

    script = ROOT / "tools" / "captures" / "godot3" / script_name
    port = next(line.split("=")[1].strip() for line in script.read_text().splitlines() if line.startswith("const PORT"))
    work = Path(tempfile.mkdtemp())  # Godot writes its logs/ where it runs
    cap = subprocess.Popen(["dumpcap", "-q", "-i", "lo", "-f", f"udp port {port}", "-w", str(out)],
                           stderr=subprocess.DEVNULL)
    time.sleep(2)  # (dumpcap is listening)
    godot = ["godot3-server", "-s", str(script)]
    server = subprocess.Popen(godot, cwd=work, env={**os.environ, "GDX_ROLE": "server"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    running = []
    try:
        time.sleep(1)
        running = [subprocess.Popen(godot, cwd=work, env={**os.environ, "GDX_ROLE": "client", **extra},
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for extra in clients]
        for client in running:
            if client.wait(timeout=300) != 0:
                raise RuntimeError(f"a Godot client of {script_name} failed")
        server.wait(timeout=30)  # (it quits when the clients have gone)
        time.sleep(1)
    finally:
        for p in [server, *running]:
            p.kill()
        cap.terminate()
        cap.wait()
    shutil.rmtree(work, ignore_errors=True)


def api_calls(path: str) -> str:
    """api_count.lua's totals for the dissector on the capture with -V: "frames items generated hidden
    ranges other"."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "count.txt"
        subprocess.run(["tshark", "-n", "-V", "-r", path, "-X", f"lua_script:{API_COUNT}", "-X", f"lua_script:{LUA}"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                       env={**os.environ, "GODOT_API_COUNT": str(out)})
        return out.read_text().strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("capture", nargs="*")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--prefs", action="append", default=[],
                    help="extra configurations: a space-separated list of NAME:VALUE prefs, e.g. godot.compact:TRUE")
    ap.add_argument("--floor", action="store_true",
                    help="also time the floor of the dissector's tree with -V (benchmarks/lua/api_floor.lua)")
    ap.add_argument("--make-enet-load", type=Path, metavar="PCAP", help="write the ENet load capture and exit")
    ap.add_argument("--make-ws-load", type=Path, metavar="PCAP",
                    help="write the WebSocket multiplayer load capture and exit")
    ap.add_argument("--copies", type=int, help="copies of the source capture (150 for ENet, 600 for WebSocket)")
    ap.add_argument("--make-enet-session", type=Path, metavar="PCAPNG",
                    help="capture the ENet session of real Godot 3.2.3 processes and exit")
    ap.add_argument("--make-enet-mix", type=Path, metavar="PCAPNG",
                    help="capture the three-client ENet game of real Godot 3.2.3 processes and exit")
    args = ap.parse_args()
    if args.make_enet_mix:
        make_enet_mix(args.make_enet_mix)
        print(f"wrote {args.make_enet_mix}")
        return
    if args.make_enet_session:
        make_enet_session(args.make_enet_session)
        print(f"wrote {args.make_enet_session}")
        return
    if args.make_enet_load:
        make_enet_load(args.make_enet_load, args.copies or 150)
        print(f"wrote {args.make_enet_load}")
        return
    if args.make_ws_load:
        make_ws_load(args.make_ws_load, args.copies or 600)
        print(f"wrote {args.make_ws_load}")
        return
    if shutil.which("tshark") is None:
        raise SystemExit("tshark is not installed (apt-get install tshark)")
    paths = list(args.capture)
    if not paths:
        path = os.path.join(tempfile.mkdtemp(), "load.pcapng")
        subprocess.run([sys.executable, str(ROOT / "tools/captures/make_captures.py"), "--load", "25000",
                        "--load-out", path], check=True, capture_output=True)
        paths = [path]
    lua = ["-X", f"lua_script:{LUA}"]
    for path in paths:
        configs: dict[str, list[str]] = {}
        envs: dict[str, dict[str, str]] = {}
        calls = api_calls(path) if args.floor else ""
        for mode, flags in (("-V", ["-V"]), ("list", [])):
            base = ["tshark", "-n", "-r", path, *flags]
            configs[f"tshark {mode}"] = base
            configs[f"tshark {mode} + godot.lua"] = [*base, *lua]
            if calls and mode == "-V":
                configs[f"tshark {mode} + API floor"] = [*base, "-X", f"lua_script:{API_FLOOR}"]
                envs[f"tshark {mode} + API floor"] = {**os.environ, "GODOT_API_FLOOR": calls}
            for p in args.prefs:
                opts = [x for pref in p.split() for x in ("-o", pref)]
                configs[f"tshark {mode} + godot.lua ({p})"] = [*base, *lua, *opts]
        times: dict[str, list[float]] = {name: [] for name in configs}
        lines: dict[str, int] = {}
        for _ in range(args.rounds):
            for name, cmd in configs.items():
                cpu, n = run(cmd, envs.get(name))
                times[name].append(cpu)
                lines[name] = n
        size = os.path.getsize(path) / 1e6
        print(f"capture: {path} ({size:.1f} MB); CPU seconds, median of {args.rounds} interleaved rounds (min-max)")
        if calls:
            frames, items, generated, hidden, ranges, other = (int(x) for x in calls.split())
            per = frames or 1
            print(f"  the dissector's tree with -V, a frame: {items / per:.1f} items ({generated / per:.1f} generated, "
                  f"{hidden / per:.1f} hidden), {ranges / per:.1f} TvbRanges, {other / per:.1f} other item calls")
        for name, ts in times.items():
            mode = name.split()[1]
            plain = statistics.median(times[f"tshark {mode}"])
            med = statistics.median(ts)
            ratio = "" if name == f"tshark {mode}" else f"  {med / plain:5.2f}x"
            print(f"  {name:50} {med:6.2f} s ({min(ts):.2f}-{max(ts):.2f})  {lines[name]:>9} lines{ratio}")
        if calls:
            over = statistics.median(times["tshark -V + godot.lua"]) / statistics.median(times["tshark -V + API floor"])
            print(f"  godot.lua -V over its API floor: {over:.2f}x")
        for mode, target in TARGETS.items():
            r = statistics.median(times[f"tshark {mode} + godot.lua"]) / statistics.median(times[f"tshark {mode}"])
            print(f"  target {mode}: <= {target:g}x: {r:.2f}x, {'met' if r <= target else 'MISSED'}")


if __name__ == "__main__":
    main()
