"""Hostile review of the reader (round 10): hand-built pcap/pcapng bytes against the capture reader, TCP and
ENet reassembly and the multiplayer decoders. Each test failed before its fix; counts come from real tshark."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import pytest

from godot_dissect.fuzz.hostile import CLIENT, GOOD, SERVER
from godot_dissect.fuzz.pcapout import PcapWriter
from godot_dissect.pcap.packets import CaptureError
from godot_dissect.pcap.reader import read_pcap

needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")


def _pcapng(messages: int, payload: bytes = GOOD) -> tuple[bytes, list[bytes]]:
    """(section header + interface blocks, one Enhanced Packet Block per UDP datagram ``payload``)."""
    buf = io.BytesIO()
    w = PcapWriter(buf)
    head, blocks = buf.getvalue(), []
    for i in range(messages):
        at = buf.tell()
        w.udp(i * 0.01, CLIENT, SERVER, payload)
        blocks.append(buf.getvalue()[at:])
    return head, blocks


def _tshark_frames(path: Path, display_filter: str) -> list[int]:
    """Frame numbers tshark shows for the filter (it reads a damaged file up to the damage, then says so)."""
    out = subprocess.run(["tshark", "-r", str(path), "-Y", display_filter, "-T", "fields", "-e", "frame.number"],
                         capture_output=True, text=True, timeout=120).stdout
    return [int(x) for x in out.split()]


@needs_tshark
def test_messages_held_for_the_dialect_come_out_before_the_error_of_a_capture_cut_short(tmp_path: Path) -> None:
    """30 datagrams whose dialect stays ambiguous (held while it is guessed), then a packet block cut short (a
    capture copied while dumpcap was writing it): tshark shows the 30, and so must the reader, before its error.
    Was: the error left the reader with the held messages, and it gave none."""
    head, blocks = _pcapng(30)
    path = tmp_path / "cut.pcapng"
    path.write_bytes(head + b"".join(blocks) + blocks[0][:40])
    frames = _tshark_frames(path, f"udp.dstport == {SERVER[1]}")
    assert len(frames) == 30
    got = []
    with pytest.raises(CaptureError, match=r"offset \d+: pcapng packet block cut short"):
        for r in read_pcap(str(path)):
            got.append(r)
    assert [r.frame for r in got if r.kind == "variant"] == frames
    assert all(r.value == "hello" for r in got)
