"""``read -`` (standard input, streaming, ``-l``) and ``read -i IFACE`` (live capture through dumpcap).

The live test starts real Godot 3.2.3 peers (a server and two clients exchanging RPCs and RSETs over
ENet on 127.0.0.1: tools/captures/godot3_mp, started the way make_multiplayer_captures.py starts them),
captures them with ``read -i lo -f 'udp port P' -a duration:N -w saved.pcapng`` and checks that the
records printed live are ``read saved.pcapng``'s, and that the calls are the ones the engines printed.
Live capture needs root or capture rights (CI runs as root).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from godot_dissect import encode

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "captures"
DUMPCAP = shutil.which("dumpcap")
GODOT3 = shutil.which("godot3-server")


def cli(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "godot_dissect", *args], input=stdin, capture_output=True,
                          cwd=ROOT, timeout=timeout, env=env)


def popen(*args: str, **kw: object) -> subprocess.Popen:
    # unbuffered: lines read before communicate() must not leave read-ahead bytes in a Python buffer
    return subprocess.Popen([sys.executable, "-m", "godot_dissect", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, bufsize=0, **kw)  # type: ignore[call-overload]


def free_port(kind: int = socket.SOCK_DGRAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def can_capture() -> bool:
    return DUMPCAP is not None and os.geteuid() == 0


needs_capture = pytest.mark.skipif(not can_capture() and not os.environ.get("CI"),
                                   reason="live capture needs dumpcap and root (CI has both)")


# -- standard input ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["godot3-udp-all-types.pcapng", "godot3-enet-multiplayer.pcapng",
                                  "godot3-tcp-stream.pcapng", "godot4-websocket-multiplayer.pcapng"])
def test_stdin_reads_what_the_file_path_reads(name: str, tmp_path: Path) -> None:
    path = CAPTURES / name
    for args in (["--format", "jsonl"], ["-T", "fields", "-e", "frame", "-e", "kind", "-e", "text"]):
        want = cli("read", str(path), *args)
        got = cli("read", "-", *args, stdin=path.read_bytes())
        assert want.returncode == got.returncode == 0, got.stderr
        assert got.stdout == want.stdout and want.stdout
    # classic pcap (tshark converts; not our writer) through a pipe too
    if shutil.which("editcap"):
        pcap = tmp_path / "classic.pcap"
        subprocess.run(["editcap", "-F", "pcap", str(path), str(pcap)], check=True, capture_output=True)
        got = cli("read", "-", "--format", "jsonl", stdin=pcap.read_bytes())
        assert got.returncode == 0
        assert without_time(got.stdout) == without_time(cli("read", str(path), "--format", "jsonl").stdout)


def without_time(jsonl: bytes) -> list[dict]:
    """Records without their time: classic pcap keeps microseconds where pcapng had nanoseconds."""
    return [{k: v for k, v in json.loads(x).items() if k != "time"} for x in jsonl.splitlines()]


def test_stdin_streams_records_before_the_input_ends() -> None:
    """With -l each record comes out as soon as its packet is in: half a capture written into the pipe
    gives records while the writer still holds it open."""
    data = (CAPTURES / "godot3-udp-all-types.pcapng").read_bytes()
    want = cli("read", str(CAPTURES / "godot3-udp-all-types.pcapng"), "--format", "jsonl").stdout.splitlines()
    p = popen("read", "-", "-l", "--format", "jsonl", stdin=subprocess.PIPE)
    try:
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write(data[:len(data) * 2 // 3])
        p.stdin.flush()
        early: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(early) < 5 and time.monotonic() < deadline:
            ready, _, _ = select.select([p.stdout], [], [], 0.5)
            if ready:
                early.append(p.stdout.readline())
        assert len(early) >= 5, "no record before the end of the input"
        assert p.poll() is None  # still waiting for the rest
        p.stdin.write(data[len(data) * 2 // 3:])
        p.stdin.close()
        rest = p.stdout.read().splitlines()
        assert p.wait(30) == 0
    finally:
        if p.poll() is None:
            p.kill()
    assert [x.rstrip(b"\n") for x in early] + rest == want


def test_stdin_that_is_not_a_capture_exits_2() -> None:
    r = cli("read", "-", stdin=b"hello, not a capture at all, but long enough to look")
    assert r.returncode == 2 and b"standard input" in r.stderr


# -- live capture: what goes wrong -------------------------------------------------------------------------

def test_live_without_dumpcap_says_what_to_install(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    r = cli("read", "-i", "lo", "-a", "duration:1", env={**os.environ, "PATH": str(bin_dir)})
    assert r.returncode == 2 and r.stdout == b""
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "dumpcap" in err and "apt install tshark" in err


@needs_capture
def test_live_without_capture_rights_names_group_and_capabilities(tmp_path: Path) -> None:
    """The real dumpcap, run as nobody (no capabilities, no wireshark group)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) not installed")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "dumpcap"
    wrapper.write_text(f"#!/bin/sh\nexec {setpriv} --reuid=65534 --regid=65534 --clear-groups {DUMPCAP} \"$@\"\n")
    wrapper.chmod(0o755)
    r = cli("read", "-i", "lo", "-a", "duration:2", env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert r.returncode == 2 and r.stdout == b""
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "no permission to capture on lo" in err
    assert "wireshark' group" in err and "cap_net_raw" in err


@needs_capture
def test_live_unknown_interface_is_dumpcaps_one_line() -> None:
    r = cli("read", "-i", "no-such-interface0", "-a", "duration:1")
    assert r.returncode == 2 and b"no-such-interface0" in r.stderr and r.stderr.count(b"\n") == 1


def test_live_unwritable_save_file_starts_no_capture(tmp_path: Path) -> None:
    r = cli("read", "-i", "lo", "-w", str(tmp_path / "no" / "such" / "dir.pcapng"))  # no -a: would run forever
    assert r.returncode == 2 and b"-w " in r.stderr and b"No such file or directory" in r.stderr


@pytest.mark.parametrize("args", [["-a", "minutes:3"], ["-a", "packets:1.5"]])
def test_live_bad_autostop(args: list[str]) -> None:
    r = cli("read", "-i", "lo", *args)
    assert r.returncode == 2 and b"duration:SECONDS or packets:N" in r.stderr


# -- live capture: real traffic ------------------------------------------------------------------------------

def send_until_seen(p: subprocess.Popen, port: int, timeout: float = 30) -> list[dict]:
    """Send a Godot 3 datagram to ``port`` every 0.2 s until the live reader prints it: then dumpcap is
    capturing. Returns the records printed so far."""
    assert p.stdout is not None
    lines: list[dict] = []
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        while time.monotonic() < deadline:
            s.sendto(encode("godot-dissect live check", "godot3"), ("127.0.0.1", port))
            ready, _, _ = select.select([p.stdout], [], [], 0.2)
            if ready:
                line = p.stdout.readline()
                if not line:
                    break
                lines.append(json.loads(line))
                return lines
    raise AssertionError(f"the live reader printed nothing in {timeout} s")


@needs_capture
def test_live_packets_autostop_and_saved_file(tmp_path: Path) -> None:
    port = free_port()
    saved = tmp_path / "saved.pcapng"
    p = popen("read", "-i", "lo", "-f", f"udp port {port}", "-a", "packets:3", "-a", "duration:60",
              "-w", str(saved), "--format", "jsonl")
    first = send_until_seen(p, port)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for i in range(10):
            s.sendto(encode({"n": i}, "godot3"), ("127.0.0.1", port))
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    live = first + [json.loads(x) for x in out.splitlines()]
    assert len(live) == 3  # dumpcap stopped after 3 packets
    assert live == [json.loads(x) for x in cli("read", str(saved), "--format", "jsonl").stdout.splitlines()]


@needs_capture
def test_live_ctrl_c_ends_cleanly_with_the_records_so_far(tmp_path: Path) -> None:
    port = free_port()
    saved = tmp_path / "saved.pcapng"
    p = popen("read", "-i", "lo", "-f", f"udp port {port}", "-w", str(saved), "--format", "json")
    consumed = send_until_seen_json(p, port)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for i in range(5):
            s.sendto(encode({"n": i}, "godot3"), ("127.0.0.1", port))
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    doc = json.loads(consumed + out)  # the array is closed
    assert [d["text"] for d in doc[-5:]] == [f'{{\n"n": {i}\n}}' for i in range(5)]
    assert doc == json.loads(cli("read", str(saved), "--format", "json").stdout)


def send_until_seen_json(p: subprocess.Popen, port: int) -> bytes:
    """--format json: wait for the first record (the line after "["); returns the bytes read."""
    assert p.stdout is not None
    deadline = time.monotonic() + 30
    consumed = b""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        while time.monotonic() < deadline:
            s.sendto(encode("godot-dissect live check", "godot3"), ("127.0.0.1", port))
            ready, _, _ = select.select([p.stdout], [], [], 0.2)
            if ready:
                consumed += p.stdout.readline()
                if b"{" in consumed:
                    return consumed
    raise AssertionError("the live reader printed nothing")


@needs_capture
@pytest.mark.skipif(GODOT3 is None and not os.environ.get("CI"), reason="godot3-server not installed")
def test_live_capture_of_real_godot3_enet_peers(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "tools" / "captures"))
    import make_multiplayer_captures as driver

    port = free_port()
    clients = {"a": free_port(), "b": free_port()}
    saved = tmp_path / "saved.pcapng"
    p = popen("read", "-i", "lo", "-f", f"udp port {port}", "-a", "duration:240", "-w", str(saved),
              "--format", "jsonl")
    try:
        live = send_until_seen(p, port)
        ws = driver.MpWorkspace(GODOT3 or "godot3-server", keep=False)
        try:
            procs = driver.start_group(ws, "enet", port, clients)
            logs = driver.finish_group(procs)
        finally:
            ws.close()
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)  # the peers are done: end the capture (Ctrl-C) well before 240 s
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    live += [json.loads(x) for x in out.splitlines()]
    again = [json.loads(x) for x in cli("read", str(saved), "--format", "jsonl").stdout.splitlines()]
    assert live == again  # what was printed live is what the saved capture reads as

    enet = [r for r in live if {r["sport"], r["dport"]} & set(clients.values())]
    calls = [r for r in enet if r["kind"] in ("rpc", "rset")]
    assert calls and {r["dialect"] for r in enet} == {"godot3"}
    # every reliable call the engines printed as sent went over the wire, with the printed arguments, and
    # nothing else did (an unreliable one may be dropped by ENet's packet throttle before it is sent)
    sent = [s for log in logs.values() for s in log.sent if s.kind in ("rpc", "rset")]
    printed = {(s.node, s.name, ", ".join(driver.arg_text(a) for a in s.args)): s.mode for s in sent}
    reliable = {k for k, mode in printed.items() if mode != 1}
    seen = {(r["node"], r["method"], r["text"]) for r in calls}
    assert reliable <= seen <= set(printed), (reliable - seen, seen - set(printed))
    assert len(reliable) >= 10
    # and every send_bytes() payload
    raw = {bytes(s.data or b"").hex(): s.mode for log in logs.values() for s in log.sent if s.kind == "raw"}
    raw_reliable = {k for k, mode in raw.items() if mode == 2}  # NetworkedMultiplayerPeer.TRANSFER_MODE_RELIABLE
    raw_seen = {r["value"]["hex"] for r in enet if r["kind"] == "raw"}
    assert raw_reliable and raw_reliable <= raw_seen <= set(raw)


def test_records_are_flushed_one_by_one_on_a_terminal() -> None:
    """No -l: stdout is a pseudo-terminal, so each record still shows as soon as it is read."""
    import pty

    data = (CAPTURES / "godot3-udp-all-types.pcapng").read_bytes()
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "godot_dissect", "read", "-"], cwd=ROOT, stdin=subprocess.PIPE,
                         stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    try:
        assert p.stdin is not None
        p.stdin.write(data[:len(data) * 2 // 3])
        p.stdin.flush()
        seen = b""
        deadline = time.monotonic() + 30
        while seen.count(b"\n") < 5 and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                seen += os.read(master, 65536)
        assert seen.count(b"\n") >= 5 and p.poll() is None  # records before the input ended
        assert b"godot3 variant Nil null" in seen
        p.stdin.close()
        assert p.wait(30) == 0
    finally:
        if p.poll() is None:
            p.kill()
        os.close(master)


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@needs_capture
@pytest.mark.skipif(GODOT3 is None and not os.environ.get("CI"), reason="godot3-server not installed")
@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback on this machine")
def test_live_any_interface_ipv6_against_the_engines_log(tmp_path: Path) -> None:
    """``-i any`` (Linux cooked capture) of IPv6 datagrams to a real Godot 3.2.3 server on ::1 that prints
    every value it decodes (var2str): the records' texts are the engine's lines."""
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
        s.bind(("::1", 0))
        port = s.getsockname()[1]
    log = tmp_path / "server.out"
    home = tmp_path / "home"
    home.mkdir()
    with log.open("wb") as out:
        server = subprocess.Popen([GODOT3 or "godot3-server", "--path", str(ROOT / "tools" / "fuzz_targets"), "-s",
                                   "udp_server.gd", f"--port={port}", "--host=::1", "--log-values=1",
                                   "--lifetime=120"], stdout=out, stderr=subprocess.DEVNULL,
                                  env={**os.environ, "HOME": str(home), "LANG": "en_US.UTF-8"},
                                  start_new_session=True)
    saved = tmp_path / "saved.pcapng"
    reader = popen("read", "-i", "any", "-f", f"udp dst port {port}", "-a", "duration:120", "-w", str(saved),
                   "--format", "jsonl")
    values = [7, -2**40, 2.5, "héllo, 世界", [1, "two", [3.0]], {"b": [True, None], "a": 1},
              ["x" * 300, b"\x00\x01\xff"]]
    try:
        assert reader.stdout is not None
        live: list[dict] = []
        deadline = time.monotonic() + 30
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
            while not live and time.monotonic() < deadline:  # until dumpcap captures (and the server is up)
                s.sendto(encode("live check", "godot3"), ("::1", port))
                if select.select([reader.stdout], [], [], 0.2)[0]:
                    live.append(json.loads(reader.stdout.readline()))
            assert live, "the live reader printed nothing"
            for v in values:
                s.sendto(encode(v, "godot3"), ("::1", port))
        time.sleep(1.0)
        reader.send_signal(signal.SIGINT)
        out, err = reader.communicate(timeout=60)
        assert reader.returncode == 0, err
        live += [json.loads(x) for x in out.splitlines()]
        texts = "".join(r["text"] + "\n" for r in live)
        deadline = time.monotonic() + 20
        while not log.read_text("utf-8", "replace").endswith(texts) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        for p in (reader, server):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL) if p is server else p.kill()
            p.wait()
    assert {(r["src"], r["dst"], r["transport"]) for r in live} == {("::1", "::1", "udp")}
    # the checks and the scalars read alike in both dialects (a live reader cannot wait for hindsight);
    # from the first container on, where Godot 3's type ids differ from Godot 4's, they are Godot 3's
    assert [r["dialect"] for r in live[-3:]] == ["godot3"] * 3
    engine = log.read_text("utf-8", "replace")
    assert engine.endswith(texts), f"engine printed:\n{engine[-2000:]}\nrecords:\n{texts[-2000:]}"
    # the saved file is what tshark calls a Linux cooked capture, and reads as the live records did
    info = subprocess.run(["capinfos", "-E", str(saved)], capture_output=True, text=True).stdout
    assert "Linux cooked-mode capture" in info, info
    assert live == [json.loads(x) for x in cli("read", str(saved), "--format", "jsonl").stdout.splitlines()]
