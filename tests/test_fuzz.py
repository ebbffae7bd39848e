"""The fuzzer: spec-derived generation and mutation, targets and framings, findings, reproducers,
minimisation and replay — proven on real Godot 3.2.3 servers (tools/fuzz_targets/) — and the
differential mode against Godot 3.2.3 and 4.6.

Every target here is on 127.0.0.1, on a port picked free by the test; every server stops by itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from godot_dissect import DecodeError, decode_prefix, encode
from godot_dissect import values as V
from godot_dissect.cli import main as cli_main
from godot_dissect.fuzz.campaign import PROBE_VALUE, FuzzOptions, run_fuzz
from godot_dissect.fuzz.cases import MAX_PAYLOAD, CaseGenerator, conversations_from_pcap, seeds_from_tscn
from godot_dissect.fuzz.fields import COUNT, HEADER, LENGTH, TEXT, field_map
from godot_dissect.fuzz.framing import Framer
from godot_dissect.fuzz.generate import NEST_SHAPES, nest, nest_levels, nest_units
from godot_dissect.fuzz.malformed import malformed_corpus
from godot_dissect.fuzz.samples import SAMPLES
from godot_dissect.fuzz.target import UnsafeTarget, parse_target
from godot_dissect.pcap.reader import read_pcap
from godot_dissect.spec import DIALECT_NAMES, get_dialect

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ROOT / "tools" / "fuzz_targets"
GODOT3 = shutil.which("godot3-server")
needs_godot3 = pytest.mark.skipif(GODOT3 is None and not os.environ.get("CI"),
                                  reason="godot3-server not installed (scripts/setup.sh installs it)")


def free_port(kind: int) -> int:
    """A loopback port that is free for ``kind`` (checked by binding it)."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def godot_cmd(home: Path, script: str, lifetime: int = 120) -> str:
    return (f"HOME={home} LANG=en_US.UTF-8 exec {GODOT3 or 'godot3-server'} --path {TARGETS} -s {script} "
            f"--port={{port}} --lifetime={lifetime}")


@contextlib.contextmanager
def godot_server(tmp: Path, script: str, port: int, lifetime: int = 60):
    """A fresh Godot 3.2.3 fuzz target, ready when the block starts, stopped (by pid) at the end."""
    home = tmp / f"home-{port}"
    home.mkdir(exist_ok=True)
    cmd = godot_cmd(home, script, lifetime).replace("{port}", str(port))
    p = subprocess.Popen(["/bin/sh", "-c", cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        kind = socket.SOCK_STREAM if "tcp" in script else socket.SOCK_DGRAM
        while time.monotonic() < deadline:
            assert p.poll() is None, "the Godot target exited at start"
            if _answers(kind, port):
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the Godot target did not answer its probe")
        yield p
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def _answers(kind: int, port: int, timeout: float = 0.5) -> bool:
    probe = encode(PROBE_VALUE, "godot3")
    try:
        if kind == socket.SOCK_STREAM:
            with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
                s.sendall(struct.pack("<I", len(probe)) + probe)
                return bool(s.recv(100))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(timeout)
            s.sendto(probe, ("127.0.0.1", port))
            return bool(s.recv(100))
    except OSError:
        return False


def run_cli(*args: str) -> tuple[int, str]:
    out = subprocess.run([sys.executable, "-m", "godot_dissect", *args], capture_output=True, text=True,
                         cwd=ROOT, timeout=600)
    sys.stderr.write(out.stderr[-4000:])
    return out.returncode, out.stdout


# --- generation and mutation from the spec ---------------------------------------------------------

@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_field_map_walks_every_sample(dialect: str) -> None:
    d = get_dialect(dialect)
    for e in d.entries:
        data = encode(SAMPLES[e.key], d)
        fm = field_map(data, d)
        assert fm.complete and fm.end == len(data), e.name
        assert fm.fields[0].role == HEADER and fm.fields[0].key == e.key
        for f in fm.fields:
            assert f.offset >= 0 and f.offset + f.size <= len(data)


def test_field_map_roles_and_deep_nesting() -> None:
    data = encode({"name": [1, "xy"], "n": V.NodePath("/a:b")}, "godot4")
    fm = field_map(data, "godot4")
    assert fm.complete and fm.max_depth == 2
    assert len(fm.by_role(COUNT)) == 4  # Dictionary, Array, NodePath names + subnames
    assert {data[f.offset:f.offset + f.size] for f in fm.by_role(TEXT)} >= {b"name", b"xy", b"a", b"b"}
    assert len(fm.by_role(LENGTH)) == len(fm.by_role(TEXT))
    # a million levels: walked without recursion (the walk's time is benchmarks' business, not a test's)
    deep = nest("godot4", "array", 1_000_000)
    fm = field_map(deep, "godot4", limit=10)
    assert fm.complete and fm.max_depth == 1_000_000 and len(fm.fields) == 10


@pytest.mark.parametrize("dialect", ["godot3", "godot4", "godot4@4.2", "godot4-double"])
def test_nesting_shapes(dialect: str) -> None:
    d = get_dialect(dialect)
    for shape in NEST_SHAPES:
        units = nest_units(d, shape)
        if units is None:
            assert shape == "typed_array" and not d.has_typed_arrays()
            continue
        data = nest(d, shape, 300)
        value, used = decode_prefix(data, d, allow_objects=True, max_depth=10_000)
        assert used == len(data)
        with pytest.raises(DecodeError, match="nesting deeper"):
            decode_prefix(nest(d, shape, 2000), d, allow_objects=True)
    assert nest_levels("mixed", 10) == 20


def test_generator_is_deterministic_and_covers_everything() -> None:
    g = CaseGenerator("godot4", 7, framing="stream")
    cases = [g.case(i) for i in range(3000)]
    again = CaseGenerator("godot4", 7, framing="stream")
    assert [again.case(i).payload for i in (2999, 5, 1500)] == [cases[2999].payload, cases[5].payload,
                                                                   cases[1500].payload]
    other = CaseGenerator("godot4", 8, framing="stream")
    assert [other.case(i).payload for i in range(50, 60)] != [c.payload for c in cases[50:60]]
    strategies = {c.strategy for c in cases}
    assert strategies == {"mutate", "corpus", "valid", "deep", "huge", "object", "frame"}
    # every strategy in the first cases, so that even a short run tries deep nesting
    assert {c.strategy for c in cases[:7]} == strategies
    deep = [c for c in cases if c.strategy == "deep"]
    assert max(c.recipe["depth"] for c in deep) >= 100_000
    assert {c.recipe["nest"] for c in deep} >= {"array", "dict_value", "dict_key", "typed_array"}
    text = " ".join(c.name for c in cases)
    for what in ("type id", "header", "count", "length", "utf8", "data", "truncated", "trailing", "bit"):
        assert what in text, what
    d = get_dialect("godot4")
    assert any(f"type id @0 = {d.variant_max}" in c.name for c in cases)  # first id past the table
    flags = {int(w) for c in cases for w in _after(c.name, "header @0 bit ")}
    assert len(flags) >= 20  # the flag bits 8..31
    assert any("typed" in c.name or "kind" in c.name for c in cases)
    assert any(c.allow_objects and c.strategy == "object" for c in cases)
    assert any(c.frame_length is not None and c.frame_length != len(c.payload) for c in cases)
    corpus = {m.data for m in malformed_corpus("godot4")}
    assert sum(c.payload in corpus for c in cases if c.strategy == "corpus") > 300


def _after(text: str, marker: str) -> list[str]:
    out = []
    i = text.find(marker)
    while i >= 0:
        j = i + len(marker)
        k = j
        while k < len(text) and text[k].isdigit():
            k += 1
        if k > j:
            out.append(text[j:k])
        i = text.find(marker, k)
    return out


def test_udp_cases_fit_a_datagram() -> None:
    g = CaseGenerator("godot3", 1, framing="udp")
    cases = [g.case(i) for i in range(2000)]
    assert max(len(c.payload) for c in cases) <= MAX_PAYLOAD["udp"]
    deep = [c for c in cases if c.strategy == "deep"]
    assert deep and max(len(c.payload) for c in deep) > 60_000  # as deep as a datagram allows


def test_seeds_from_tscn_and_captures() -> None:
    seeds = seeds_from_tscn([str(ROOT / "tests/data/seed_godot3.tscn")])
    assert len(seeds) > 50 and any(isinstance(v, (V.PackedVector3Array, dict)) for _, v in seeds)
    convs, values = conversations_from_pcap(str(ROOT / "captures/godot3-udp-all-types.pcapng"))
    assert convs and len(convs[0]) > 50 and values
    g = CaseGenerator("godot3", 0, framing="udp", seed_values=seeds + values, conversations=convs)
    assert len(g.user_seeds) > 100
    cases = [g.case(i) for i in range(400)]
    conv = [c for c in cases if c.strategy == "conversation"]
    assert conv
    c = conv[0]
    assert len(c.messages) == len(convs[0]) and list(c.before) == convs[0][:len(c.before)]
    assert any("seed_godot3.tscn" in c.name for c in cases)


def test_framings() -> None:
    payload = encode([1, "x"], "godot4")
    g = CaseGenerator("godot4", 0, framing="stream")
    case = g.case(0).with_payload(payload, frame_length=None, before=(), after=())
    assert Framer("udp", "godot4").frames(case) == [payload]
    assert Framer("stream", "godot4").frames(case) == [struct.pack("<I", len(payload)) + payload]
    f4 = Framer("debugger4", "godot4").frames(case)[0]
    assert struct.unpack_from("<I", f4)[0] == len(f4) - 4
    msg = decode_prefix(f4[4:], "godot4")[0]
    assert isinstance(msg[0], str) and msg[1] == 1 and msg[2] == [[1, "x"]]
    f3 = Framer("debugger3", "godot3").frames(case.with_payload(encode(7, "godot3")))[0]
    pdus = []
    while f3:
        n = struct.unpack_from("<I", f3)[0]
        pdus.append(decode_prefix(f3[4:4 + n], "godot3")[0])
        f3 = f3[4 + n:]
    assert isinstance(pdus[0], str) and pdus[1:] == [1, 7]
    lie = case.with_payload(payload, frame_length=0xFFFFFFFF)
    assert Framer("stream", "godot4").frames(lie)[0][:4] == b"\xff\xff\xff\xff"
    assert not Framer("stream", "godot4").honest(lie)


def test_only_loopback_targets() -> None:
    assert parse_target("udp://127.0.0.1:9").address[0] == "127.0.0.1"
    assert parse_target("tcp://localhost:9").host == "localhost"
    with pytest.raises(UnsafeTarget, match="not a loopback"):
        parse_target("udp://192.0.2.1:9")  # TEST-NET-1: parsed only, never sent to
    assert parse_target("udp://192.0.2.1:9", allow_remote=True).port == 9
    with pytest.raises(ValueError):
        parse_target("http://127.0.0.1:9")
    code = cli_main(["fuzz", "--target", "udp://192.0.2.1:9", "--count", "1", "--duration", "1"])
    assert code == 2


# --- a fake target without --cmd: findings from the probe alone ------------------------------------

class FakeTcpServer:
    """A length-prefixed TCP server (thread) that answers the probe and "dies" (stops listening)
    on a value nested deeper than ``limit`` — a stand-in for a decoder without a depth limit."""

    def __init__(self, port: int, limit: int = 3000) -> None:
        self.port, self.limit = port, limit
        self.sock = socket.create_server(("127.0.0.1", port))
        self.sock.settimeout(0.2)
        self.dead = threading.Event()
        self.received = 0
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self) -> None:
        deadline = time.monotonic() + 120
        while not self.dead.is_set() and time.monotonic() < deadline:
            try:
                c, _ = self.sock.accept()
            except TimeoutError:
                continue
            with c:
                c.settimeout(2)
                self.serve(c)
        self.sock.close()

    def serve(self, c: socket.socket) -> None:
        buf = b""
        try:
            while True:
                chunk = c.recv(1 << 20)
                if not chunk:
                    return
                buf += chunk
                while len(buf) >= 4 and len(buf) >= 4 + struct.unpack_from("<I", buf)[0]:
                    n = struct.unpack_from("<I", buf)[0]
                    msg, buf = buf[4:4 + n], buf[4 + n:]
                    self.received += 1
                    if field_map(msg[:65536], "godot4", limit=1).max_depth > self.limit:
                        self.dead.set()
                        self.sock.close()
                        return
                    try:
                        v = decode_prefix(msg, "godot4")[0]
                    except DecodeError:
                        continue
                    if v == PROBE_VALUE:
                        c.sendall(encode("pong", "godot4"))
        except OSError:
            return

    def stop(self) -> None:
        self.dead.set()
        self.t.join(5)


def test_finding_without_cmd_on_a_fake_server(tmp_path: Path) -> None:
    port = free_port(socket.SOCK_STREAM)
    srv = FakeTcpServer(port)
    try:
        s = run_fuzz(FuzzOptions(target=f"tcp://127.0.0.1:{port}", dialect="godot4", seed=3, count=2000,
                                 duration=60, out=tmp_path / "out", timeout=1.0), log=lambda m: None)
    finally:
        srv.stop()
    assert srv.dead.is_set()
    assert len(s.findings) == 1
    f = s.findings[0]
    assert f.kind == "refused" and f.case.strategy == "deep" and not f.confirmed
    info = json.loads((f.path / "finding.json").read_text())
    assert info["dialect"] == "godot4" and info["framing"] == "stream" and info["seed"] == 3
    assert info["target"] == f"tcp://127.0.0.1:{port}" and info["confirmed"] is False
    assert (f.path / "payload.bin").read_bytes() == f.case.payload
    recs = list(read_pcap(str(f.path / "exchange.pcapng"), "godot4", ports=[port]))
    assert recs and recs[0].raw == f.case.payload  # the pcap holds the fatal message
    # replay kills a fresh fake server too
    srv2 = FakeTcpServer(port)
    try:
        assert cli_main(["replay", str(f.path), "--target", f"tcp://127.0.0.1:{port}"]) == 1
    finally:
        srv2.stop()
    assert srv2.dead.is_set()


def test_surviving_fake_server_gives_no_finding(tmp_path: Path) -> None:
    port = free_port(socket.SOCK_STREAM)
    srv = FakeTcpServer(port, limit=10**9)
    try:
        s = run_fuzz(FuzzOptions(target=f"tcp://127.0.0.1:{port}", dialect="godot4", count=300, duration=30,
                                 out=tmp_path / "out"), log=lambda m: None)
    finally:
        srv.stop()
    assert not s.findings and s.cases == 300 and s.stopped.startswith("count")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").glob("finding-*"))


@pytest.mark.parametrize("framing", ["debugger3", "debugger4"])
def test_debugger_framings_against_a_listener(framing: str, tmp_path: Path) -> None:
    """An editor-like listener that never answers: liveness is the port accepting; nothing found."""
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    srv.settimeout(0.2)
    got = bytearray()
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except TimeoutError:
                continue
            with c:
                c.settimeout(2)
                with contextlib.suppress(OSError):
                    while chunk := c.recv(1 << 20):
                        got.extend(chunk[:64] if len(got) < 1 << 16 else b"")
        srv.close()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    dialect = "godot3" if framing == "debugger3" else "godot4"
    try:
        s = run_fuzz(FuzzOptions(target=f"tcp://127.0.0.1:{port}", framing=framing, dialect=dialect, count=120,
                                 duration=30, out=tmp_path), log=lambda m: None)
    finally:
        stop.set()
        t.join(5)
    assert s.cases == 120 and not s.findings and s.framing == framing
    assert got[4:8] == encode([], dialect)[:4] if framing == "debugger4" else got[4:8] == encode("x", dialect)[:4]


def test_udp_rate_limit_and_count(tmp_path: Path) -> None:
    port = free_port(socket.SOCK_DGRAM)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", port))
    probe = encode(PROBE_VALUE, "godot3")
    got = []

    def sink() -> None:
        sock.settimeout(0.2)
        end = time.monotonic() + 30
        while time.monotonic() < end:
            try:
                data, addr = sock.recvfrom(70000)
            except TimeoutError:
                continue
            except OSError:
                return
            got.append(len(data))
            if data == probe:
                sock.sendto(b"pong", addr)

    t = threading.Thread(target=sink, daemon=True)
    t.start()
    try:
        s = run_fuzz(FuzzOptions(target=f"udp://127.0.0.1:{port}", dialect="godot3", count=200, rate=400,
                                 duration=30, out=tmp_path), log=lambda m: None)
    finally:
        time.sleep(0.3)
        sock.close()
        t.join(5)
    assert s.cases == 200 and not s.findings
    assert 0.4 < s.seconds < 5  # 200 cases at 400/s: half a second, not less
    assert len(got) >= 200


# --- real Godot 3.2.3 servers ----------------------------------------------------------------------

@needs_godot3
def test_fuzzer_kills_godot3_tcp_server_and_replay_reproduces(tmp_path: Path) -> None:
    port = free_port(socket.SOCK_STREAM)
    home = tmp_path / "home"
    home.mkdir()
    out = tmp_path / "findings"
    code, stdout = run_cli("fuzz", "--target", f"tcp://127.0.0.1:{port}", "--dialect", "godot3", "--duration", "60",
                           "--out", str(out), "--json", "--cmd", godot_cmd(home, "tcp_server.gd"))
    assert code == 1, stdout
    summary = json.loads(stdout)
    assert len(summary["findings"]) == 1
    f = summary["findings"][0]
    print(f"Godot 3.2.3 TCP server killed after {f['elapsed']} s ({f['cases_before']} cases): {f['detail']}; "
          f"minimised {f['minimised']['from_size']} -> {f['minimised']['to_size']} bytes "
          f"in {f['minimised']['runs']} runs: {f['minimised']['steps']}")
    assert f["elapsed"] < 60
    assert f["kind"] == "crash" and f["signal"] == signal.SIGSEGV and f["confirmed"]
    folder = Path(f["path"])
    info = json.loads((folder / "finding.json").read_text())
    assert (info["dialect"], info["framing"], info["seed"]) == ("godot3", "stream", 0)
    assert info["strategy"] == "deep" and info["minimised"]["verified"]
    payload = (folder / "payload.bin").read_bytes()
    original = (folder / "original.bin").read_bytes()
    assert len(payload) < len(original) and f["minimised"]["to_size"] == len(payload)
    assert info["cases"][0]["recipe"]["depth"] < 100_000  # the nesting was shrunk
    # the pcaps of the exchange hold the fatal message (then the probe the server never answered)
    for pcap, data in (("exchange.pcapng", original), ("minimised.pcapng", payload)):
        recs = list(read_pcap(str(folder / pcap), "godot3", ports=[port]))
        assert recs[0].raw == data and "nesting deeper" in (recs[0].error or "")
        assert recs[1].value == PROBE_VALUE

    # the minimised payload kills a fresh server: sent by hand, the process dies on SIGSEGV
    with godot_server(tmp_path, "tcp_server.gd", port) as p:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(struct.pack("<I", len(payload)) + payload)
        assert p.wait(timeout=20) in (-signal.SIGSEGV, 128 + signal.SIGSEGV)

    # replay does it again, and says so with its exit status
    with godot_server(tmp_path, "tcp_server.gd", port) as p:
        code, stdout = run_cli("replay", str(folder), "--target", f"tcp://127.0.0.1:{port}")
        assert code == 1 and "went down" in stdout
        assert p.wait(timeout=20) in (-signal.SIGSEGV, 128 + signal.SIGSEGV)
    # and with --cmd it starts the target itself
    code, stdout = run_cli("replay", str(folder / "finding.json"), "--target", f"tcp://127.0.0.1:{port}",
                           "--cmd", godot_cmd(home, "tcp_server.gd"))
    assert code == 1 and "SIGSEGV" in stdout


@needs_godot3
def test_fuzzer_finds_godot3_var2str_crash_over_udp(tmp_path: Path) -> None:
    """A UDP server that logs what it receives with var2str dies on a 44-byte datagram: a Dictionary
    keyed by an empty and a non-empty PoolByteArray (Godot 3.2.3 aborts while sorting the keys)."""
    port = free_port(socket.SOCK_DGRAM)
    home = tmp_path / "home"
    home.mkdir()
    cmd = godot_cmd(home, "udp_server.gd") + " --log-values=1"
    code, stdout = run_cli("fuzz", "--target", f"udp://127.0.0.1:{port}", "--dialect", "godot3", "--duration", "60",
                           "--strategy", "valid", "--out", str(tmp_path / "out"), "--json", "--cmd", cmd)
    assert code == 1, stdout
    f = json.loads(stdout)["findings"][0]
    print(f"Godot 3.2.3 UDP server logging with var2str killed after {f['elapsed']} s: {f['detail']}, "
          f"{f['payload_size']} bytes")
    assert f["signal"] == signal.SIGABRT and f["confirmed"] and f["elapsed"] < 60
    folder = Path(f["path"])
    value = decode_prefix((folder / "payload.bin").read_bytes(), "godot3")[0]
    keys = list(value)
    assert all(isinstance(k, bytes) for k in keys) and min(map(len, keys)) == 0 < max(map(len, keys))
    code, stdout = run_cli("replay", str(folder), "--target", f"udp://127.0.0.1:{port}", "--cmd", cmd)
    assert code == 1 and "SIGABRT" in stdout


@needs_godot3
def test_godot3_udp_server_survives_a_short_run(tmp_path: Path) -> None:
    port = free_port(socket.SOCK_DGRAM)
    home = tmp_path / "home"
    home.mkdir()
    code, stdout = run_cli("fuzz", "--target", f"udp://127.0.0.1:{port}", "--dialect", "godot3", "--duration", "8",
                           "--seed", "5", "--probe-every", "50", "--out", str(tmp_path / "out"), "--json",
                           "--seed-pcap", str(ROOT / "captures/godot3-udp-all-types.pcapng"),
                           "--seed-tscn", str(ROOT / "tests/data/seed_godot3.tscn"),
                           "--cmd", godot_cmd(home, "udp_server.gd"))
    summary = json.loads(stdout)
    print(f"Godot 3.2.3 UDP server: {summary['cases']} cases in {summary['seconds']} s, no finding")
    assert code == 0 and summary["findings"] == []
    assert summary["cases"] > 200 and summary["target_starts"] == 1
    assert {"deep", "conversation", "mutate", "object"} <= set(summary["strategies"])


@needs_godot3
def test_godot3_tcp_server_survives_without_deep_nesting(tmp_path: Path) -> None:
    port = free_port(socket.SOCK_STREAM)
    home = tmp_path / "home"
    home.mkdir()
    code, stdout = run_cli("fuzz", "--target", f"tcp://127.0.0.1:{port}", "--dialect", "godot3", "--count", "400",
                           "--duration", "30", "--strategy", "mutate", "--strategy", "corpus", "--strategy", "huge",
                           "--strategy", "frame", "--out", str(tmp_path / "out"), "--json",
                           "--cmd", godot_cmd(home, "tcp_server.gd"))
    summary = json.loads(stdout)
    assert code == 0 and summary["findings"] == [] and summary["cases"] == 400


# --- differential mode against the engines ---------------------------------------------------------

@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_differential_against_engine(dialect: str, tmp_path: Path) -> None:
    from godot_dissect.engines import EngineUnavailable, get_engine
    from godot_dissect.fuzz.differential import CODEC_ISSUES, RULES

    try:
        get_engine(dialect)
    except EngineUnavailable as e:
        if os.environ.get("CI") or os.environ.get("GODOT_DISSECT_REQUIRE_ENGINES"):
            pytest.fail(f"{dialect} engine must be available: {e.reason}")
        pytest.skip(f"{dialect} engine unavailable: {e.reason}")
    report = tmp_path / "report.json"
    code, stdout = run_cli("fuzz", "--differential", "--dialect", dialect, "--count", "10000", "--report",
                           str(report))
    print(stdout)
    rep = json.loads(report.read_text())
    assert rep["total"] == 10_000 and rep["agree"] + len(rep["disagreements"]) == 10_000
    print(f"{dialect}: agreement {100 * rep['rate']:.2f}% ({rep['agree']}/{rep['total']})")
    unexplained = [d for d in rep["disagreements"] if d["rule"] is None]
    assert not unexplained, "\n".join(json.dumps(d)[:400] for d in unexplained[:20])
    for d in rep["disagreements"]:
        name = d["rule"].removeprefix("issue: ")
        assert name in RULES or name in CODEC_ISSUES
    issues = [d for d in rep["disagreements"] if d["rule"].startswith("issue: ")]
    assert code == (1 if issues else 0)
    assert rep["rate"] > 0.95
    assert set(rep["strategies"]) == {"mutate", "corpus", "valid", "deep", "huge", "object"}
