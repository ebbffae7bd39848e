"""Review findings on this session's compiled paths, each against real bytes: the engine's TCP capture
(Godot 3.2.3) for the in-order TCP step and for export through it."""

from __future__ import annotations

import struct
from collections import deque
from pathlib import Path

import dpkt
import pytest

from godot_dissect.dataset.arrow import capture_batches
from godot_dissect.detect import plausible
from godot_dissect.pcap import inorder, reader
from godot_dissect.pcap.framing import LengthPrefixFramer
from godot_dissect.pcap.packets import TCP_ACK, TCP_PSH, Segment
from godot_dissect.pcap.tcp import TcpDirection

from .test_inorder import _engine_streams

ROOT = Path(__file__).resolve().parent.parent
ENGINE_CAPTURE = ROOT / "captures" / "godot3-tcp-stream.pcapng"


def _engine_pdus() -> list[bytes]:
    """The length-prefixed PDUs the engine sent, client to server and back, in sequence order."""
    out = []
    for stream in _engine_streams().values():
        pos = 0
        while pos + 4 <= len(stream):
            end = pos + 4 + struct.unpack_from("<I", stream, pos)[0]
            out.append(stream[pos:end])
            pos = end
    return out


class _IndexCountingDeque(deque):
    """The ledger's deque, counting reads by index (each costs up to len/64 steps in CPython)."""

    indexed = 0

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        type(self).indexed += 1
        return super().__getitem__(i)


@pytest.mark.skipif(inorder.in_order is None, reason="the _stream extension is not built or turned off")
def test_a_pdu_held_over_one_byte_segments_is_taken_in_linear_time() -> None:
    """The engine's largest PDU (about 100 kB) sent as 1-byte segments: the compiled step holds one ledger
    span per segment and, when the last byte comes, takes the PDU's wire share over all of them. It walked
    the deque by index (O(n) per read, O(n^2) in all: 1.6 million spans took 90 s for the one segment);
    now it reads it as the Python ledger does, by iterating, with the Python path's items and state."""
    big = max(_engine_pdus(), key=len)
    assert len(big) > 50_000
    fast_tcp, slow_tcp = TcpDirection(next_seq=1), TcpDirection(next_seq=1)
    fast, slow = LengthPrefixFramer(plausible, True), LengthPrefixFramer(plausible, True)
    fast.ledger.spans = _IndexCountingDeque()
    cuts = [0, 8, *range(9, len(big) + 1)]  # the length prefix and the type word in one segment, then bytes
    got: list = []
    want: list = []
    for i, (a, b) in enumerate(zip(cuts, cuts[1:], strict=False)):
        seg = Segment(i + 1, i * 0.001, "tcp", "a", 1, "b", 2, big[a:b], 1 + a, TCP_ACK | TCP_PSH, 54 + b - a)
        step = inorder.in_order(fast_tcp, fast, seg, None)  # type: ignore[misc]
        assert step is not None, f"segment {i} left to the Python path"
        got += step
        want += [item for chunk in slow_tcp.add(seg) for item in slow.feed(chunk)]
    assert len(got) == 1 and got == want
    assert got[0].data == big[4:]
    assert list(fast.ledger.spans) == list(slow.ledger.spans) == []
    assert _IndexCountingDeque.indexed < 10, f"the ledger was read by index {_IndexCountingDeque.indexed} times"


def _cut_capture(path: Path, size: int) -> None:
    """The engine's TCP capture with every data segment cut into ``size``-byte segments (its handshakes,
    ACKs and FINs kept), as a pcap."""
    with open(ENGINE_CAPTURE, "rb") as f, open(path, "wb") as out:
        w = dpkt.pcap.Writer(out, linktype=dpkt.pcap.DLT_EN10MB)
        for ts, buf in dpkt.pcapng.Reader(f):
            eth = dpkt.ethernet.Ethernet(buf)
            tcp = eth.data.data
            if not isinstance(tcp, dpkt.tcp.TCP) or not tcp.data:
                w.writepkt(buf, ts)
                continue
            data = bytes(tcp.data)
            for at in range(0, len(data), size):
                tcp.seq, tcp.data, tcp.sum = (tcp.seq + (at and size)) & 0xFFFFFFFF, data[at:at + size], 0
                eth.data.len, eth.data.sum = 0, 0
                w.writepkt(bytes(dpkt.ethernet.Ethernet(src=eth.src, dst=eth.dst, type=eth.type,
                                                        data=dpkt.ip.IP(src=eth.data.src, dst=eth.data.dst,
                                                                        p=eth.data.p, data=tcp))), ts)


@pytest.mark.skipif(inorder.in_order is None, reason="the _stream extension is not built or turned off")
@pytest.mark.parametrize("size", [None, 7, 1460])
def test_export_rows_are_the_same_with_the_compiled_step(tmp_path: Path, size: int | None) -> None:
    """Export hands the reader a row writer (``variant_row_writer``: tuples), read a line writer (strs): the
    compiled step refused anything but a str ("TypeError: a line writer returns a str or None"), so exporting
    any length-prefixed TCP capture failed. The table, with the step and without it, the same (a row may come
    from a record on one path and from the row writer on the other: the step leaves the rest of a segment to
    the reader once the writer leaves it one PDU)."""
    path = ENGINE_CAPTURE
    if size is not None:
        path = tmp_path / f"cut{size}.pcap"
        _cut_capture(path, size)
    fast = _table(path)
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(reader, "in_order", None)
        slow = _table(path)
    finally:
        mp.undo()
    assert sum(1 for r in slow if r["type"] is not None) > 100  # rows with a type name: messages decoded
    assert fast == slow


def _table(path: Path) -> list[dict]:
    return [r for b in capture_batches(str(path), "engine") for r in b.to_pylist()]


def _compressed_bodies() -> list[bytes]:
    """The range-coded bodies of Godot 3's compressed ENet capture (the header's compressed flag set)."""
    from godot_dissect.pcap.packets import segments
    from godot_dissect.spec import enet as spec

    out = []
    for s in segments(str(ROOT / "captures" / "godot3-enet-compressed.pcapng")):
        if s.proto == "udp" and len(s.payload) >= 4:
            word = struct.unpack_from(">H", s.payload)[0]
            if (word >> spec.FLAG_COMPRESSED.shift) & 1:
                out.append(s.payload[4 if (word >> spec.FLAG_SENT_TIME.shift) & 1 else 2:])
    return out


def test_the_compiled_range_coder_takes_any_output_limit() -> None:
    """``decompress(data, limit)``: the limit is a bound, not a size. The compiled port allocated all of it up
    front (MemoryError for 2^62, gigabytes for 2^33, where the pure port returns the bytes); it grows its
    output as it comes."""
    from godot_dissect.enet import rangecoder

    if rangecoder._rangecoder is None:
        pytest.skip("the compiled range coder is not built")
    decoded = 0
    for body in _compressed_bodies():
        try:
            want = rangecoder.decompress_pure(body, 1 << 62)
        except rangecoder.RangeCoderError as e:
            assert rangecoder._rangecoder.decompress(body, 1 << 62) == (e.offset, e.reason)
            continue
        assert rangecoder._rangecoder.decompress(body, 1 << 62) == want
        assert rangecoder._rangecoder.decompress(body, len(want)) == want
        decoded += 1
    assert decoded >= 20
