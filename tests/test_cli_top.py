"""``godot-dissect top`` driven in a real pseudo-terminal (tmux): the full-screen view shows every peer
of the Godot 3.2.3 profile capture (endpoints and peer ids from the capture driver's manifest) and,
first among the busiest methods, the call the engines printed the most argument bytes for."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NAME = "godot3-enet-profile"
PROFILE = ROOT / "captures" / "profile"
PCAP = PROFILE / f"{NAME}.pcapng"
_MANIFEST_FILE = PROFILE / "manifest.json"
MANIFEST = json.loads(_MANIFEST_FILE.read_text()).get(NAME) if _MANIFEST_FILE.exists() else None
TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(MANIFEST is None, reason=f"{NAME} not in captures/profile/")


def engine_busiest_method() -> str:
    """The method whose calls carried the most argument bytes, as the engines printed them (var2bytes)."""
    size: Counter[str] = Counter()
    for line in (PROFILE / f"{NAME}.golden.jsonl").read_text().splitlines():
        g = json.loads(line)
        if g["event"] == "call":
            size[g["method"]] += g["args_var2bytes_size"]
    return size.most_common(1)[0][0]


def method_rows(screen: str) -> list[list[str]]:
    """The cells of the 'busiest methods' table's rows."""
    part = screen.split("busiest methods", 1)[1].split("busiest nodes", 1)[0]
    return [[c.strip() for c in line.strip("│ ").split("│")] for line in part.splitlines() if line.startswith("│")]


@pytest.mark.skipif(TMUX is None, reason="tmux not installed")
def test_top_full_screen_in_a_terminal_shows_peers_and_the_busiest_method(tmp_path: Path) -> None:
    session = f"gdx-top-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT))}
    cmd = f"cd {ROOT} && {sys.executable} -m godot_dissect top {PCAP}; echo TOP-EXIT=$?; sleep 30"
    tmux = [TMUX, "-L", session]  # a private server: nothing of the user's tmux is touched
    subprocess.run([*tmux, "new-session", "-d", "-s", session, "-x", "180", "-y", "60", cmd], check=True, env=env)
    try:
        screen = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            time.sleep(0.5)
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", session], capture_output=True,
                                    text=True).stdout
            if "capture ended" in screen and "busiest methods" in screen:
                break
        assert "capture ended" in screen, screen
        for role, port in MANIFEST["ports"].items():
            line = next((x for x in screen.splitlines() if f"127.0.0.1:{port} " in x), None)
            assert line is not None, f"{role} (port {port}) not on the screen:\n{screen}"
            assert str(MANIFEST["peer_ids"][role]) in line  # its Godot peer id
            assert "B/s" in line
        rows = method_rows(screen)
        assert rows and rows[0][2] == engine_busiest_method(), screen
        # Ctrl-C ends it cleanly
        subprocess.run([*tmux, "send-keys", "-t", session, "C-c"], check=True)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            time.sleep(0.3)
            after = subprocess.run([*tmux, "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout
            if "TOP-EXIT=" in after:
                break
        assert "TOP-EXIT=0" in after, after
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


def test_top_once_prints_the_same_tables() -> None:
    r = subprocess.run([sys.executable, "-m", "godot_dissect", "top", str(PCAP), "--once"], capture_output=True,
                       text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = method_rows(r.stdout)
    assert rows[0][2] == engine_busiest_method()
    for port in MANIFEST["ports"].values():
        assert f"127.0.0.1:{port}" in r.stdout


def test_top_needs_a_source() -> None:
    r = subprocess.run([sys.executable, "-m", "godot_dissect", "top"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "capture file or -i IFACE" in r.stderr


def test_top_rates_stay_bounded_under_a_flood_of_endpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    """200,000 source endpoints (a scan, spoofed ports): the rate table keeps at most MAX_ROWS of them and
    counts the rest as (other); every byte is still counted."""
    from godot_dissect.cli import top
    from godot_dissect.pcap.packets import Segment

    monkeypatch.setattr(top, "MAX_ROWS", 1000)
    rates = top.Rates()
    n = 200_000
    for i in range(n):
        rates.frame(Segment(i + 1, 1000.0 + i * 1e-5, "udp", f"10.0.{i // 250 % 250}.{i % 250}", 1000 + i % 60000,
                            "10.1.0.1", 7000, b"x", frame_len=60))
    assert len(rates.bins) <= 1000 and len(rates.totals) <= 1000 and top.OTHER in rates.bins
    sent = sum(t[0] for ep, t in rates.totals.items() if ep != "10.1.0.1:7000")
    assert rates.totals["10.1.0.1:7000"][2] == 60 * n  # the receiver got every byte
    assert sent <= 60 * n and rates.totals[top.OTHER][0] > 0


@pytest.mark.skipif(shutil.which("dumpcap") is None or os.geteuid() != 0, reason="live capture needs dumpcap and root")
def test_top_live_on_loopback(tmp_path: Path) -> None:
    """top -i lo: Godot datagrams sent while it captures show as a peer with their bytes."""
    import socket

    from godot_dissect import encode

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
        rx.bind(("127.0.0.1", 0))
        tx.bind(("127.0.0.1", 0))
        port, sport = rx.getsockname()[1], tx.getsockname()[1]
        p = subprocess.Popen([sys.executable, "-m", "godot_dissect", "top", "-i", "lo", "-f", f"udp port {port}",
                              "-a", "duration:4", "--once", "--port", str(port)], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 3.5
        while time.monotonic() < deadline:
            tx.sendto(encode({"hp": 10, "name": "live"}, "godot3"), ("127.0.0.1", port))
            time.sleep(0.05)
        out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert f"127.0.0.1:{sport}" in out and f"127.0.0.1:{port}" in out and "capture ended" in out
