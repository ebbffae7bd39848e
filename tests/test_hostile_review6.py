"""Review findings on this session's compiled paths, each against real bytes: the engine's TCP capture
(Godot 3.2.3) for the in-order TCP step."""

from __future__ import annotations

import struct
from collections import deque
from pathlib import Path

import dpkt
import pytest

from godot_dissect.detect import plausible
from godot_dissect.pcap import inorder
from godot_dissect.pcap.framing import LengthPrefixFramer
from godot_dissect.pcap.packets import TCP_ACK, TCP_PSH, Segment
from godot_dissect.pcap.tcp import TcpDirection

ROOT = Path(__file__).resolve().parent.parent
ENGINE_CAPTURE = ROOT / "captures" / "godot3-tcp-stream.pcapng"


def _engine_pdus() -> list[bytes]:
    """The length-prefixed PDUs the engine sent, client to server and back, in sequence order."""
    parts: dict[tuple[int, int], dict[int, bytes]] = {}
    with open(ENGINE_CAPTURE, "rb") as f:
        for _, buf in dpkt.pcapng.Reader(f):
            tcp = dpkt.ethernet.Ethernet(buf).data.data
            if isinstance(tcp, dpkt.tcp.TCP) and tcp.data:
                parts.setdefault((tcp.sport, tcp.dport), {})[tcp.seq] = bytes(tcp.data)
    out = []
    for v in parts.values():
        stream = b"".join(v[s] for s in sorted(v))
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
