"""``read`` writes the same bytes with the compiled paths (``_packets.c``, ``_speedups.c``, ``_render.c``,
the reader's datagram shortcut) as with the pure-Python reference (``GODOT_DISSECT_PURE=1``): text,
``-V`` text, JSON and JSON lines of every committed capture, Godot 3.2.3 and 4.6 engine traffic of
every transport (UDP, TCP, WebSocket, ENet, the remote debugger), and of captures whose messages are
damaged (error records)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from godot_dissect.codec import fast

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted((ROOT / "captures").rglob("*.pcap*"))
FORMATS = (("text",), ("text", "-V", "--evidence"), ("json",), ("jsonl",))

pytestmark = pytest.mark.skipif(not fast.BUILT, reason="the C extensions are not built")


def _read(capture: Path, fmt: tuple[str, ...], pure: bool) -> bytes:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GODOT_DISSECT_PURE": "1" if pure else "0"}
    out = subprocess.run([sys.executable, "-m", "godot_dissect", "read", str(capture), "--format", *fmt],
                         env=env, capture_output=True, check=True)
    return out.stdout


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: " ".join(f))
@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_compiled_and_pure_write_the_same_bytes(capture: Path, fmt: tuple[str, ...]) -> None:
    fast_out = _read(capture, fmt, pure=False)
    assert fast_out, "no output at all: nothing compared"
    assert fast_out == _read(capture, fmt, pure=True)


def test_damaged_messages_write_the_same_bytes(tmp_path: Path) -> None:
    """Every datagram of the Godot 3 UDP capture cut short by one byte, so most messages are error
    records (the datagram shortcut's error branch), against the pure reference."""
    import dpkt

    src = ROOT / "captures" / "godot3-udp-all-types.pcapng"
    out = tmp_path / "cut.pcap"
    with open(src, "rb") as f, open(out, "wb") as g:
        w = dpkt.pcap.Writer(g, linktype=dpkt.pcap.DLT_EN10MB)
        for ts, buf in dpkt.pcapng.Reader(f):
            eth = dpkt.ethernet.Ethernet(buf)
            if isinstance(eth.data, dpkt.ip.IP) and isinstance(eth.data.data, dpkt.udp.UDP) \
                    and len(eth.data.data.data) > 12:
                udp = eth.data.data
                udp.data = udp.data[:-1]
                udp.ulen -= 1
                eth.data.len -= 1
            w.writepkt(bytes(eth), ts)
    for fmt in (("text",), ("jsonl",)):
        fast_out = _read(out, fmt, pure=False)
        assert b"error" in fast_out
        assert fast_out == _read(out, fmt, pure=True)
