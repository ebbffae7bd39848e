"""TCP byte streams from segments: order by sequence number, drop retransmitted bytes, hold
out-of-order segments until the gap fills, and give up on a gap (reporting it) when too much
data piles up behind it or the stream ends."""

from __future__ import annotations

from dataclasses import dataclass, field

from .packets import TCP_FIN, TCP_RST, TCP_SYN, Segment

#: bytes held behind a gap before the gap is declared lost
MAX_PENDING = 4 << 20


@dataclass(slots=True)
class Chunk:
    """In-order stream bytes, the frame that delivered them, or a gap of lost bytes."""

    frame: int
    time: float
    data: bytes
    gap: int = 0  # bytes missing before ``data`` (0: contiguous)


@dataclass
class TcpDirection:
    next_seq: int | None = None
    pending: dict[int, tuple[bytes, int, float]] = field(default_factory=dict)
    pending_bytes: int = 0
    closed: bool = False

    def add(self, seg: Segment) -> list[Chunk]:
        out: list[Chunk] = []
        seq, data = seg.seq, seg.payload
        if seg.flags & TCP_SYN:
            self.next_seq = (seq + 1) & 0xFFFFFFFF
            seq = (seq + 1) & 0xFFFFFFFF
        if seg.flags & (TCP_FIN | TCP_RST):
            self.closed = True
        if not data:
            return out
        if self.next_seq is None:  # capture started mid-stream: take the first segment as it is
            self.next_seq = seq
        rel = (seq - self.next_seq) & 0xFFFFFFFF
        if rel >= 0x80000000:  # starts before next_seq: retransmission, maybe with new bytes
            overlap = (self.next_seq - seq) & 0xFFFFFFFF
            if overlap >= len(data):
                return out
            data, seq = data[overlap:], self.next_seq
            rel = 0
        if rel > 0:
            if seq not in self.pending or len(self.pending[seq][0]) < len(data):
                self.pending_bytes += len(data) - len(self.pending.get(seq, (b"",))[0])
                self.pending[seq] = (data, seg.frame, seg.time)
            if self.pending_bytes > MAX_PENDING:
                out += self.flush_gap()
            return out
        out.append(Chunk(seg.frame, seg.time, data))
        self.next_seq = (seq + len(data)) & 0xFFFFFFFF
        out += self._drain()
        return out

    def _drain(self) -> list[Chunk]:
        out = []
        while self.pending:
            best = None
            for s in list(self.pending):
                rel = (s - self.next_seq) & 0xFFFFFFFF  # type: ignore[operator]
                if rel >= 0x80000000 or rel == 0:
                    data, frame, t = self.pending.pop(s)
                    self.pending_bytes -= len(data)
                    overlap = (self.next_seq - s) & 0xFFFFFFFF  # type: ignore[operator]
                    if overlap < len(data):
                        best = Chunk(frame, t, data[overlap:])
                        break
            if best is None:
                break
            out.append(best)
            self.next_seq = (self.next_seq + len(best.data)) & 0xFFFFFFFF  # type: ignore[operator]
        return out

    def flush_gap(self) -> list[Chunk]:
        """Skip to the earliest held segment (the bytes in between were never captured)."""
        if not self.pending:
            return []
        first = min(self.pending, key=lambda s: (s - self.next_seq) & 0xFFFFFFFF)  # type: ignore[operator]
        gap = (first - self.next_seq) & 0xFFFFFFFF  # type: ignore[operator]
        data, frame, t = self.pending.pop(first)
        self.pending_bytes -= len(data)
        self.next_seq = (first + len(data)) & 0xFFFFFFFF
        return [Chunk(frame, t, data, gap=gap), *self._drain()]
