"""Hostile review of the reader (round 10): hand-built pcap/pcapng bytes against the capture reader, TCP and
ENet reassembly and the multiplayer decoders. Each test failed before its fix; counts come from real tshark."""

from __future__ import annotations

import io
import shutil
import struct
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


def _tshark_error(path: Path) -> str:
    return subprocess.run(["tshark", "-r", str(path)], capture_output=True, text=True, timeout=120).stderr


def _peak_bytes(path: Path) -> tuple[int, str, int]:
    """(records read, the CaptureError's text, peak bytes Python allocated while reading)."""
    import tracemalloc

    got, error = 0, ""
    tracemalloc.start()
    try:
        for _ in read_pcap(str(path)):
            got += 1
    except CaptureError as e:
        error = str(e)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return got, error, peak


def _block(btype: int, claimed: int, body: bytes) -> bytes:
    return struct.pack("<II", btype, claimed) + body


@needs_tshark
def test_a_block_claiming_2_31_bytes_is_damage_not_the_rest_of_the_file_held(tmp_path: Path) -> None:
    """A block that holds no packet (a custom type) claiming 2^31 bytes, then 8 MB of packets: tshark calls the
    file damaged at that block (its block limit); the reader must say so, at its offset, holding nothing of what
    follows. Was: the rest of the file read into one block, then a silent end (every packet after it lost)."""
    head, blocks = _pcapng(3)
    _, tail = _pcapng(1)
    path = tmp_path / "huge-block.pcapng"
    at = len(head) + sum(map(len, blocks[:3]))
    path.write_bytes(head + b"".join(blocks) + _block(0xBAD, 0x7FFFFFF0, bytes(8)) + tail[0] * 90_000)
    assert "too large" in _tshark_error(path)
    got, error, peak = _peak_bytes(path)
    assert got == 3 and f"offset {at}: pcapng block length {0x7FFFFFF0}" in error
    assert peak < 4 << 20


@needs_tshark
def test_a_block_holding_no_packet_cut_short_is_an_error(tmp_path: Path) -> None:
    """The capture ends inside an Interface Statistics Block: tshark says the file was cut short; so must the
    reader. Was: a silent end, as if the file were whole."""
    head, blocks = _pcapng(3)
    path = tmp_path / "cut-isb.pcapng"
    at = len(head) + sum(map(len, blocks))
    path.write_bytes(head + b"".join(blocks) + _block(5, 100, bytes(20)))
    assert "cut short" in _tshark_error(path)
    got, error, _ = _peak_bytes(path)
    assert got == 3 and f"offset {at}: pcapng block cut short (28 of 100 bytes)" in error
    with open(path, "rb") as f, pytest.raises(CaptureError, match=f"offset {at}: pcapng block cut short"):
        list(read_pcap(_ReadOnly(f)))  # a stream without read1 (read block by block): the same


class _ReadOnly:
    def __init__(self, f: io.BufferedReader) -> None:
        self.f = f

    def read(self, n: int = -1) -> bytes:
        return self.f.read(n)


@needs_tshark
def test_a_classic_pcap_record_claiming_more_than_a_frame_is_damage_not_held(tmp_path: Path) -> None:
    """A classic pcap record capturing 16 MB (all there): tshark calls the file damaged (no frame is longer than
    262144 bytes); the reader must too, naming the record's offset, without holding the 16 MB. Was: read whole."""
    big = 16 << 20
    header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    path = tmp_path / "big-record.pcap"
    path.write_bytes(header + struct.pack("<IIII", 0, 0, big, big) + bytes(big))
    assert "bigger than maximum of 262144" in _tshark_error(path)
    got, error, peak = _peak_bytes(path)
    assert got == 0 and f"offset 24: pcap record of {big} captured bytes" in error
    assert peak < 4 << 20
