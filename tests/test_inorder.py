"""The reader's compiled in-order TCP step (``pcap/inorder.py``, ``pcap/_stream.c``) against the Python path it
stands for (``TcpDirection.add`` then ``LengthPrefixFramer.feed``): on random segmentations of length-prefixed
streams, hostile ones included (segments reversed, retransmitted, overlapping, lost; length prefixes of 2^32 - 1
and just past ``MAX_PDU``; garbage the framer resynchronises after; sequence numbers wrapping), the same items,
the same state after every segment and the same end; and the reader's output (records and the lines the
compiled writers write) on the Godot 3.2.3 engine's TCP capture cut into random segments, the same with the step
as without it."""

from __future__ import annotations

import random
import struct
from pathlib import Path
from typing import Any

import dpkt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from godot_dissect.detect import plausible
from godot_dissect.pcap import inorder, reader
from godot_dissect.pcap.framing import LengthPrefixFramer
from godot_dissect.pcap.packets import TCP_ACK, TCP_PSH, Segment
from godot_dissect.pcap.reader import PcapReader
from godot_dissect.pcap.tcp import TcpDirection
from godot_dissect.records import variant_line_writer
from godot_dissect.spec.transports import MAX_PDU

ROOT = Path(__file__).resolve().parent.parent
ENGINE_CAPTURE = ROOT / "captures" / "godot3-tcp-stream.pcapng"

pytestmark = pytest.mark.skipif(inorder.in_order is None, reason="the _stream extension is not built or turned off")


def _engine_streams() -> dict[tuple[int, int], bytes]:
    """The TCP payload of every direction of the engine's capture, in sequence order."""
    parts: dict[tuple[int, int], dict[int, bytes]] = {}
    with open(ENGINE_CAPTURE, "rb") as f:
        for _, buf in dpkt.pcapng.Reader(f):
            tcp = dpkt.ethernet.Ethernet(buf).data.data
            if isinstance(tcp, dpkt.tcp.TCP) and tcp.data:
                parts.setdefault((tcp.sport, tcp.dport), {})[tcp.seq] = bytes(tcp.data)
    return {k: b"".join(v[s] for s in sorted(v)) for k, v in parts.items()}


ENGINE = _engine_streams()
#: what the engine sent client to server: real length-prefixed Godot 3 PDUs
ENGINE_BYTES = max(ENGINE.values(), key=len)


def _split(stream: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos + 4 <= len(stream):
        end = pos + 4 + struct.unpack_from("<I", stream, pos)[0]
        out.append(stream[pos:end])
        pos = end
    return out


#: its PDUs but the two of 62 and 100 kB (a state compared after every 1-byte segment would take long)
ENGINE_PDUS = [p for p in _split(ENGINE_BYTES) if len(p) < 1000]
ENGINE_SMALL = b"".join(ENGINE_PDUS)


def _pdu(body: bytes) -> bytes:
    return struct.pack("<I", len(body)) + body


#: pieces a stream is made of: mostly whole PDUs (the compiled step's case), some hostile length prefixes
#: and garbage
_WHOLE = st.one_of(st.binary(max_size=40).map(_pdu), st.sampled_from(ENGINE_PDUS))
PIECES = st.one_of(
    _WHOLE, _WHOLE, _WHOLE, st.integers(0, len(ENGINE_BYTES)).map(lambda i: ENGINE_BYTES[i:i + 200]),
    st.sampled_from([struct.pack("<I", 0xFFFFFFFF), struct.pack("<I", MAX_PDU + 1), struct.pack("<I", MAX_PDU),
                     struct.pack("<I", 300) + b"\x02\x00\x00\x00", b"\x00\x00\x00"]),
    st.binary(min_size=1, max_size=12),
)


@st.composite
def segmentations(draw: Any) -> tuple[int, list[tuple[int, bytes, int]]]:
    """(initial sequence number, [(seq, data, frame_len)]): a stream cut at random points, then some segments
    reversed, repeated (retransmissions, some overlapping their neighbours) or lost."""
    stream = b"".join(draw(st.lists(PIECES, max_size=25)))
    isn = draw(st.sampled_from([0, 1000, 0xFFFFFFFF - 30, draw(st.integers(0, 0xFFFFFFFF))]))
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(stream) - 1)), max_size=30))))
    bounds = [0, *[c for c in cuts if c < len(stream)], len(stream)]
    segs = [((isn + a) & 0xFFFFFFFF, stream[a:b], 54 + b - a) for a, b in zip(bounds, bounds[1:], strict=False)
            if b > a]
    rnd = random.Random(draw(st.integers(0, 2**32)))
    for _ in range(draw(st.integers(0, 4))):
        if len(segs) < 2:
            break
        i = rnd.randrange(len(segs) - 1)
        op = rnd.choice(("swap", "repeat", "overlap", "lose"))
        if op == "swap":
            segs[i], segs[i + 1] = segs[i + 1], segs[i]
        elif op == "repeat":
            segs.insert(i + 1, segs[i])
        elif op == "overlap":  # a retransmission that also carries the next segment's first bytes
            (s, d, _), (_, d2, _) = segs[i], segs[i + 1]
            segs.insert(i + 1, (s, d + d2[:3], 54 + len(d) + 3))
        else:
            del segs[i]
    return isn, segs


def _state(tcp: TcpDirection, framer: LengthPrefixFramer) -> tuple:
    return (tcp.next_seq, tcp.offset, tcp.pending, tcp.pending_bytes, bytes(framer.buf), framer.base, framer.synced,
            framer.frame, framer.time, [list(s) for s in framer.ledger.spans], framer.scanned, framer.alive,
            framer.ends, None if framer.run is None else [getattr(framer.run, k) for k in framer.run.__slots__])


@settings(max_examples=400, deadline=None)
@given(segmentations(), st.booleans())
def test_the_compiled_step_is_the_python_path(case: tuple[int, list[tuple[int, bytes, int]]], aligned: bool) -> None:
    isn, segs = case
    fast_tcp, slow_tcp = TcpDirection(), TcpDirection()
    if aligned:  # the SYN was seen: the stream starts at isn
        fast_tcp.next_seq = slow_tcp.next_seq = isn
    fast_framer, slow_framer = LengthPrefixFramer(plausible, aligned), LengthPrefixFramer(plausible, aligned)
    for frame, (seq, data, frame_len) in enumerate(segs, 1):
        seg = Segment(frame, frame * 0.5, "tcp", "10.0.0.1", 1000, "10.0.0.2", 2000, data, seq, TCP_ACK | TCP_PSH,
                      frame_len)
        want = [item for chunk in slow_tcp.add(seg) for item in slow_framer.feed(chunk)]
        got = inorder.in_order(fast_tcp, fast_framer, seg, None)  # type: ignore[misc]
        if got is None:
            got = [item for chunk in fast_tcp.add(seg) for item in fast_framer.feed(chunk)]
        assert got == want
        assert _state(fast_tcp, fast_framer) == _state(slow_tcp, slow_framer)
    fast_end = [i for c in fast_tcp.flush_gap() for i in fast_framer.feed(c)] + fast_framer.finish()
    assert fast_end == [i for c in slow_tcp.flush_gap() for i in slow_framer.feed(c)] + slow_framer.finish()


def test_the_compiled_step_declines_without_changing_anything() -> None:
    """A segment past a gap, one whose leftover starts with an implausible length, and one for a framer that
    is resynchronising: None, and the objects as they were."""
    cases = ((b"", b"abc", 5), (b"", _pdu(b"\x02\x00\x00\x00") + struct.pack("<I", MAX_PDU + 1), 0),
             (b"\xff" * 9, _pdu(b"\x01\x00\x00\x00"), 0))
    for prime, seg_data, seq_shift in cases:
        tcp, framer = TcpDirection(next_seq=100), LengthPrefixFramer(plausible, not prime)
        for chunk in tcp.add(Segment(1, 0.0, "tcp", "a", 1, "b", 2, prime, 100, TCP_ACK, 60)) if prime else ():
            framer.feed(chunk)
        before = _state(tcp, framer)
        seg = Segment(2, 1.0, "tcp", "a", 1, "b", 2, seg_data, (tcp.next_seq or 0) + seq_shift, TCP_ACK, 60)
        assert inorder.in_order(tcp, framer, seg, None) is None  # type: ignore[misc]
        assert _state(tcp, framer) == before


def _capture(path: Path, segs: list[tuple[int, int, int, bytes]]) -> None:
    """A pcap of the engine's two ports with these (sport, dport, seq, data) segments (no handshake: the
    reader takes the stream from its first segment, as in a capture joined part-way)."""
    with open(path, "wb") as f:
        w = dpkt.pcap.Writer(f, linktype=dpkt.pcap.DLT_EN10MB)
        for i, (sport, dport, seq, data) in enumerate(segs):
            tcp = dpkt.tcp.TCP(sport=sport, dport=dport, seq=seq, flags=TCP_ACK | TCP_PSH, data=data)
            ip = dpkt.ip.IP(src=bytes([127, 0, 0, 1]), dst=bytes([127, 0, 0, 1]), p=dpkt.ip.IP_PROTO_TCP, data=tcp)
            w.writepkt(bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_IP, data=ip)), 1000.0 + i * 0.001)


def _read(path: Path, compiled: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[dict]]:
    """(the jsonl lines ``read`` writes, the records' JSON) with the compiled step or without it."""
    with monkeypatch.context() as m:
        if not compiled:
            m.setattr(reader, "in_order", None)
        lines = list(PcapReader(str(path)).lines(variant_line_writer, lambda r: r.to_jsonl()))
        records = [r.to_json() for r in PcapReader(str(path))]
    return lines, records


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 6))
def test_the_reader_writes_the_same_with_and_without_it(tmp_path_factory: Any, seed: int, hostile: int) -> None:
    """The engine's TCP streams cut into random segments, a few of them reversed, repeated or lost, and a
    length prefix of 2^32 - 1 spliced in: every line and every record the same with the step as without."""
    rnd = random.Random(seed)
    segs = []
    for (sport, dport), stream in ENGINE.items():
        if rnd.random() < 0.5:
            at = rnd.randrange(len(stream))
            stream = stream[:at] + struct.pack("<I", 0xFFFFFFFF) + stream[at:]
        pos, seq = 0, rnd.randrange(2**32)
        while pos < len(stream):
            n = rnd.choice((1, 3, 4, 7, 60, 300, 1400))
            segs.append((sport, dport, (seq + pos) & 0xFFFFFFFF, stream[pos:pos + n]))
            pos += n
    for _ in range(hostile):
        i = rnd.randrange(len(segs) - 1)
        op = rnd.choice(("swap", "repeat", "lose"))
        if op == "swap":
            segs[i], segs[i + 1] = segs[i + 1], segs[i]
        elif op == "repeat":
            segs.insert(i + 1, segs[i])
        else:
            del segs[i]
    path = tmp_path_factory.mktemp("inorder") / "cut.pcap"
    _capture(path, segs)
    mp = pytest.MonkeyPatch()
    try:
        fast_lines, fast_records = _read(path, True, mp)
        slow_lines, slow_records = _read(path, False, mp)
    finally:
        mp.undo()
    assert any(r["kind"] == "variant" for r in fast_records), "no message decoded: nothing compared"
    assert fast_lines == slow_lines
    assert fast_records == slow_records




@pytest.mark.parametrize("size", [1, 3, 5, 64, 1460])
def test_an_engine_stream_in_order_takes_the_step_every_time(size: int) -> None:
    """The engine's stream in segments of ``size`` bytes, in order: every segment is the step's but one that
    comes when the framer holds part of a length prefix (the Python path's), with the Python path's PDUs (the
    engine's, in order) and wire shares."""
    assert len(ENGINE_PDUS) > 10
    fast_tcp, slow_tcp = TcpDirection(next_seq=7), TcpDirection(next_seq=7)
    fast_framer, slow_framer = LengthPrefixFramer(plausible, True), LengthPrefixFramer(plausible, True)
    fast_items, slow_items = [], []
    for i, pos in enumerate(range(0, len(ENGINE_SMALL), size)):
        seg = Segment(i + 1, i * 0.25, "tcp", "a", 1, "b", 2, ENGINE_SMALL[pos:pos + size], 7 + pos, TCP_ACK,
                      66 + size)
        prefix_cut = 0 < len(fast_framer.buf) < 4
        got = inorder.in_order(fast_tcp, fast_framer, seg, None)  # type: ignore[misc]
        assert (got is None) == prefix_cut, f"segment {i}"
        if got is None:
            got = [item for chunk in fast_tcp.add(seg) for item in fast_framer.feed(chunk)]
        fast_items += got
        slow_items += [item for chunk in slow_tcp.add(seg) for item in slow_framer.feed(chunk)]
        assert _state(fast_tcp, fast_framer) == _state(slow_tcp, slow_framer)
    assert fast_items == slow_items
    assert [_pdu(p.data) for p in fast_items] == ENGINE_PDUS
