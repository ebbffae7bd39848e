"""TCP byte streams from segments: order by sequence number, drop retransmitted bytes, hold
out-of-order segments until the gap fills, and give up on a gap (reporting it) when too much
data piles up behind it or the stream ends.

Held segments sit in a heap by stream offset (sequence numbers unwrapped against the stream's
start), so releasing them is O(log n) each whatever order they came in: a PDU sent as 1-byte
segments in reverse order reassembles in linear time.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from ..spec.transports import MAX_TCP_PENDING
from .packets import TCP_FIN, TCP_RST, TCP_SYN, Segment

#: bytes held behind a gap before the gap is declared lost
MAX_PENDING = MAX_TCP_PENDING
#: what holding one out-of-order segment costs beyond its bytes (counted against MAX_PENDING, so
#: a flood of 1-byte segments is bounded like a few big ones)
SEGMENT_COST = 64
_HALF = 0x80000000
_MASK = 0xFFFFFFFF


@dataclass(slots=True)
class Chunk:
    """In-order stream bytes, the frame that delivered them, or a gap of lost bytes."""

    frame: int
    time: float
    data: bytes
    gap: int = 0  # bytes missing before ``data`` (0: contiguous)
    frame_len: int = 0  # the delivering frame's length on the wire


@dataclass
class TcpDirection:
    next_seq: int | None = None
    #: (stream offset, arrival order, data, frame, time, frame_len) of segments beyond next_seq
    pending: list[tuple[int, int, bytes, int, float, int]] = field(default_factory=list)
    pending_bytes: int = 0
    closed: bool = False  # a FIN or RST was seen
    offset: int = 0  # stream offset of next_seq (unwrapped)
    isn: int | None = None  # the SYN's sequence number, when the SYN was seen
    _arrivals: int = 0

    def add(self, seg: Segment) -> list[Chunk]:
        out: list[Chunk] = []
        seq, data = seg.seq, seg.payload
        if seg.flags & TCP_SYN:
            seq = (seq + 1) & _MASK
            if self.isn is None:
                self.isn, self.next_seq = seg.seq, seq
            else:  # the SYN again (the reader starts a new connection at any other ISN): the stream goes on
                # where it is, and the SYN's data is not the application's: a receiver past the handshake
                # drops such a segment whole (RFC 5961's challenge ACK), one still in it has it already
                data = b""
        if seg.flags & (TCP_FIN | TCP_RST):
            self.closed = True
        if not data:
            return out
        if self.next_seq is None:  # capture started mid-stream: take the first segment as it is
            self.next_seq = seq
        rel = (seq - self.next_seq) & _MASK
        if rel >= _HALF:  # starts before next_seq: retransmission, maybe with new bytes
            overlap = (self.next_seq - seq) & _MASK
            if overlap >= len(data):
                return out
            data, rel = data[overlap:], 0
        if rel > 0:
            self._arrivals += 1
            heapq.heappush(self.pending, (self.offset + rel, self._arrivals, data, seg.frame, seg.time,
                                          seg.frame_len))
            self.pending_bytes += len(data) + SEGMENT_COST
            if self.pending_bytes > MAX_PENDING:
                out += self.flush_gap()
            return out
        out.append(Chunk(seg.frame, seg.time, data, 0, seg.frame_len))
        self._advance(len(data))
        if self.pending:
            out += self._drain()
        return out

    def _advance(self, n: int) -> None:
        self.next_seq = (self.next_seq + n) & _MASK  # type: ignore[operator]
        self.offset += n

    def _pop(self) -> tuple[int, int, bytes, int, float, int]:
        item = heapq.heappop(self.pending)
        self.pending_bytes -= len(item[2]) + SEGMENT_COST
        return item

    def _drain(self) -> list[Chunk]:
        out = []
        pending = self.pending
        while pending and pending[0][0] <= self.offset:
            at, _, data, frame, t, flen = self._pop()
            overlap = self.offset - at
            if overlap < len(data):
                out.append(Chunk(frame, t, data[overlap:], 0, flen))
                self._advance(len(data) - overlap)
        return out

    def flush_gap(self) -> list[Chunk]:
        """Skip to the earliest held segment (the bytes in between were never captured)."""
        if not self.pending:
            return []
        at, _, data, frame, t, flen = self._pop()
        gap = at - self.offset
        self.offset = at
        self.next_seq = (self.next_seq + gap) & _MASK  # type: ignore[operator]
        self._advance(len(data))
        return [Chunk(frame, t, data, gap, flen), *self._drain()]
