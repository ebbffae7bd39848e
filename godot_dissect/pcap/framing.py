"""Framing stage: messages out of byte streams -- u32-length-prefixed PDUs (StreamPeer.put_var,
PacketPeerStream, the remote debugger) and WebSocket messages. Framers are fed in-order chunks
and return PDUs; after a gap or a mid-stream start they resynchronise on the next plausible PDU and
report each run of skipped bytes once. ``finish()`` reports what the end of the capture cut off.

Layouts and limits come from ``spec.transports``; every item carries its share of the wire bytes
of the frames that delivered it (``WireLedger``).
"""

from __future__ import annotations

import heapq
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ..detect import TYPE_ID_LIMIT
from ..spec.transports import (
    BODY_ALIGN,
    LENGTH_PREFIX,
    MAX_HTTP_HEAD_HELD,
    MAX_PDU,
    MAX_RESYNC_CANDIDATES,
    MAX_WS_MESSAGE,
    MIN_BODY,
    PREFIX_SIZE,
    WS_BINARY,
    WS_CONTINUATION,
    WS_CONTROL_MIN,
    WS_TEXT,
    parse_ws_header,
    unmask,
)
from .tcp import Chunk

__all__ = ["MAX_PDU", "LengthPrefixFramer", "Pdu", "Skipped", "WebSocketFramer", "WireLedger"]
_U32 = LENGTH_PREFIX


#: offsets where a PDU could start: its body's first byte (the type id) below detect.TYPE_ID_LIMIT and
#: the second 0 (what ``_candidate`` checks first), found by the regex engine instead of a Python loop
_CANDIDATE_AT = re.compile(b"(?=.{%d}[\\x00-\\x%02x]\\x00)" % (PREFIX_SIZE, TYPE_ID_LIMIT - 1), re.S)


@dataclass(slots=True)
class Pdu:
    frame: int
    time: float
    offset: int  # stream offset of the PDU's first byte (its length prefix)
    data: bytes  # the message body
    opcode: int = WS_BINARY  # WebSocket opcode (1 text, 2 binary); 2 for length-prefixed PDUs
    wire: float = 0.0  # its share of the wire bytes of the frames that carried it


@dataclass(slots=True)
class Skipped:
    frame: int
    time: float
    offset: int
    size: int
    reason: str
    wire: float = 0.0


#: what one ledger span costs in memory beyond the stream bytes it stands for (a 5-item list and its
#: numbers, ~230 bytes measured): counted in a framer's held bytes, so a PDU held over a trickle of
#: 1-byte segments meets the capture's held-bytes budget as its memory does, not as its few bytes
SPAN_COST = 200


class WireLedger:
    """Which frames the not-yet-framed stream bytes came from, to give each message its share of
    those frames' wire bytes: a frame's length is spread over the bytes of it that end up in
    messages (dropped bytes, e.g. an HTTP upgrade or WebSocket control frames, get none)."""

    __slots__ = ("spans",)

    def __init__(self) -> None:
        # [start, end, frame_len, bytes still counted, wire bytes per stream byte (0: not fixed yet)]
        self.spans: deque[list] = deque()

    def add(self, start: int, n: int, frame_len: int) -> None:
        if n:
            self.spans.append([start, start + n, frame_len, n, 0.0])

    def take(self, a: int, b: int) -> float:
        """The wire bytes of stream bytes [a, b), which become one message."""
        spans = self.spans
        total = 0.0
        for s in spans:
            if s[0] >= b:
                break
            ov = min(b, s[1]) - max(a, s[0])
            if ov > 0:
                if not s[4]:
                    s[4] = s[2] / s[3] if s[3] > 0 else 0.0
                total += s[4] * ov
        while spans and spans[0][1] <= b:
            spans.popleft()
        return total

    def drop(self, a: int, b: int) -> None:
        """Stream bytes [a, b) carry no message."""
        spans = self.spans
        for s in spans:
            if s[0] >= b:
                break
            ov = min(b, s[1]) - max(a, s[0])
            if ov > 0 and not s[4]:
                s[3] -= ov
        while spans and spans[0][1] <= b:
            spans.popleft()

    def held(self) -> int:
        return len(self.spans)


class _SkipRun:
    """Consecutive skipped bytes, reported as one item when the run ends."""

    __slots__ = ("frame", "time", "offset", "size", "reason", "wire")

    def __init__(self, frame: int, time: float, offset: int, reason: str) -> None:
        self.frame, self.time, self.offset, self.size, self.reason, self.wire = frame, time, offset, 0, reason, 0.0

    def item(self) -> Skipped:
        return Skipped(self.frame, self.time, self.offset, self.size, self.reason, self.wire)


class LengthPrefixFramer:
    """u32 little-endian length, then that many bytes."""

    def __init__(self, plausible: Callable[[bytes], bool], aligned: bool) -> None:
        self.buf = bytearray()
        self.base = 0  # stream offset of buf[0]
        self.plausible = plausible
        self.synced = aligned
        self.frame, self.time = 0, 0.0
        self.scanned = 0  # resync: every offset below this is known not to start a PDU (buffer index)
        # resync candidates whose body had not all arrived: stream offset -> body end (scan order),
        # and a heap of (body end, offset) to find the complete ones
        self.alive: dict[int, int] = {}
        self.ends: list[tuple[int, int]] = []
        self.ledger = WireLedger()
        self.run: _SkipRun | None = None  # bytes skipped since synchronisation was lost

    @property
    def held_bytes(self) -> int:
        return len(self.buf) + SPAN_COST * len(self.ledger.spans)

    def feed(self, chunk: Chunk) -> list[Pdu | Skipped]:
        data = chunk.data
        if self.synced and self.run is None and not chunk.gap and type(data) is bytes and data:
            # an in-order stream's common case, what _cut does without copying the chunk into the buffer
            buf = self.buf
            if not buf and not self.ledger.spans:  # the chunk starts a PDU
                self.frame, self.time = chunk.frame, chunk.time
                return self._cut_chunk(chunk, self.base, 0, [])
            if len(buf) >= PREFIX_SIZE and (n := _U32.unpack_from(buf)[0]) <= MAX_PDU:  # it ends one
                start = self.base + len(buf)  # stream offset of the chunk
                self.ledger.add(start, len(data), chunk.frame_len)
                self.frame, self.time = chunk.frame, chunk.time
                end = PREFIX_SIZE + n
                need = end - len(buf)
                if need > len(data):
                    buf += data
                    return []
                base = self.base
                ended = Pdu(chunk.frame, chunk.time, base, bytes(buf[PREFIX_SIZE:]) + data[:need], WS_BINARY,
                            self.ledger.take(base, base + end))
                buf.clear()
                return self._cut_chunk(chunk, start, need, [ended])
        out: list[Pdu | Skipped] = []
        if chunk.gap:
            self._end_run(out)
            end = self.base + len(self.buf) + chunk.gap
            out.append(Skipped(chunk.frame, chunk.time, self.base, len(self.buf) + chunk.gap,
                               f"{chunk.gap} bytes missing from the capture", self.ledger.take(self.base, end)))
            self.base += len(self.buf) + chunk.gap
            self.buf.clear()
            self.synced = False
            self.scanned, self.alive, self.ends = 0, {}, []
        self.ledger.add(self.base + len(self.buf), len(chunk.data), chunk.frame_len)
        self.buf += chunk.data
        self.frame, self.time = chunk.frame, chunk.time
        self._cut(out)
        return out

    def _cut_chunk(self, chunk: Chunk, start: int, pos: int, out: list[Pdu | Skipped]) -> list[Pdu | Skipped]:
        """The PDUs of ``chunk.data`` (stream offset ``start``) from its index ``pos`` on, which starts a
        PDU, with nothing held before it: each with the wire share ``WireLedger.take`` gives (the chunk's
        frame length over its bytes, times the PDU's). The ledger holds the chunk's span when ``pos``
        (a PDU that ended in it was taken: its rate is fixed); what is left goes to the buffer, its
        span to the ledger, as ``feed`` and ``_cut`` leave them, and ``_cut`` looks at it."""
        data, frame, time = chunk.data, chunk.frame, chunk.time
        size = len(data)
        rate = chunk.frame_len / size
        unpack = _U32.unpack_from
        first = pos
        while size - pos >= PREFIX_SIZE:
            n = unpack(data, pos)[0]
            end = pos + PREFIX_SIZE + n
            if n > MAX_PDU or end > size:
                break
            out.append(Pdu(frame, time, start + pos, data[pos + PREFIX_SIZE:end], WS_BINARY, rate * (end - pos)))
            pos = end
        self.base = start + pos
        if pos < size:  # the rest: a PDU cut short, or a length _cut rejects
            if not first:
                self.ledger.spans.append([start, start + size, chunk.frame_len, size, rate if pos else 0.0])
            self.buf += memoryview(data)[pos:]
            self._cut(out)
        elif first:
            self.ledger.spans.clear()  # the chunk's span, all taken (take drops the spans before it)
        return out

    @property
    def quiet(self) -> bool:
        """Nothing held and nothing left to report."""
        return not self.buf and self.run is None

    def finish(self, why: str | None = None) -> list[Pdu | Skipped]:
        """The end of the stream (the capture's, or ``why``): what is left is a PDU cut off."""
        out: list[Pdu | Skipped] = []
        why = why or "the capture ends"
        if self.buf and not self.synced:
            self._skip(len(self.buf), f"no PDU found before the end ({why})")
        self._end_run(out)
        if self.buf:
            n = _U32.unpack_from(self.buf)[0] if len(self.buf) >= PREFIX_SIZE else None
            out.append(_leftover(self, f"a PDU of {n + PREFIX_SIZE} bytes" if n is not None else "a length prefix",
                                 why))
        return out

    def _skip(self, n: int, reason: str) -> None:
        """Drop the first n buffered bytes as part of the current run of skipped bytes."""
        if self.run is None:
            self.run = _SkipRun(self.frame, self.time, self.base, reason)
        run = self.run
        run.size += n
        run.frame, run.time = self.frame, self.time
        run.wire += self.ledger.take(self.base, self.base + n)
        self._drop(n)

    def _end_run(self, out: list[Pdu | Skipped]) -> None:
        if self.run is not None:
            out.append(self.run.item())
            self.run = None

    def _cut(self, out: list[Pdu | Skipped]) -> None:
        buf = self.buf
        pos = 0
        while True:
            if not self.synced:
                found, keep = self._resync()
                if found is None:
                    if keep > 0:  # nothing before ``keep`` can start a PDU any more
                        self._skip(keep, "no PDU found")
                    return
                if found > 0:
                    self._skip(found, "resynchronised on the next plausible PDU")
                if self.run is not None:
                    self.run.reason = "resynchronised on the next plausible PDU"
                self._end_run(out)
                self.synced = True
                buf = self.buf
                pos = 0
            if len(buf) - pos < PREFIX_SIZE:
                break
            n = _U32.unpack_from(buf, pos)[0]
            if n > MAX_PDU:
                self._drop(pos)
                self.synced = False
                self._skip(PREFIX_SIZE, f"length {n} is implausible (more than {MAX_PDU})")
                buf, pos = self.buf, 0
                continue
            end = pos + PREFIX_SIZE + n
            if len(buf) < end:
                break
            at = self.base + pos
            out.append(Pdu(self.frame, self.time, at, bytes(buf[pos + PREFIX_SIZE:end]), WS_BINARY,
                           self.ledger.take(at, at + PREFIX_SIZE + n)))
            pos = end
        self._drop(pos)

    def _drop(self, n: int) -> None:
        if not n:
            return
        del self.buf[:n]
        self.base += n
        self.scanned = max(0, self.scanned - n)

    def _candidate(self, pos: int) -> int:
        """For a PDU starting at buffer index pos: -1 no, 0 can't tell yet, else its end (buffer index)."""
        buf = self.buf
        if len(buf) - pos < PREFIX_SIZE + 2:
            return 0
        n = _U32.unpack_from(buf, pos)[0]
        if n < MIN_BODY or n > MAX_PDU or n % BODY_ALIGN or buf[pos + 5] != 0 or buf[pos + 4] >= TYPE_ID_LIMIT:
            return -1
        return pos + PREFIX_SIZE + n

    def _resync(self) -> tuple[int | None, int]:
        """(buffer index of the first plausible PDU or None, bytes that can be dropped for sure).

        Each offset is looked at once; an offset whose body has not all arrived waits (by where its
        body ends) and is decoded once, when it has."""
        buf, base = self.buf, self.base
        alive, ends = self.alive, self.ends
        search = _CANDIDATE_AT.search
        while True:
            m = search(buf, self.scanned)  # the next offset whose body header could be a Variant's
            if m is None:
                self.scanned = max(self.scanned, len(buf) - (PREFIX_SIZE + 1))
                break
            pos = m.start()
            self.scanned = pos + 1
            end = self._candidate(pos)
            if end < 0:
                continue
            alive[base + pos] = base + end
            heapq.heappush(ends, (base + end, base + pos))
            if len(alive) > MAX_RESYNC_CANDIDATES:  # give up the earliest candidate
                del alive[next(iter(alive))]
                if len(ends) > 4 * MAX_RESYNC_CANDIDATES:  # drop the heap's given-up entries
                    ends[:] = [(e, st) for st, e in alive.items()]
                    heapq.heapify(ends)
        limit = base + len(buf)
        done = []
        while ends and ends[0][0] <= limit:
            end, start = heapq.heappop(ends)
            if alive.get(start) == end:
                del alive[start]
                done.append(start)
        for start in sorted(done):  # the earliest plausible PDU wins
            p = start - base
            if self.plausible(bytes(buf[p + PREFIX_SIZE:_pdu_end(buf, p)])):
                self.alive, self.ends, self.scanned = {}, [], 0
                return p, 0
        first = next(iter(alive), None)
        return None, self.scanned if first is None else min(first - base, self.scanned)


def _pdu_end(buf: bytearray, p: int) -> int:
    return p + PREFIX_SIZE + _U32.unpack_from(buf, p)[0]


class WebSocketFramer:
    """RFC 6455 after the HTTP upgrade: unmask, join continuation frames, one Pdu per message.

    A frame or message claiming more than ``MAX_WS_MESSAGE`` is no message a Godot peer reads:
    it is reported once and the rest of the direction is counted, not held."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.base = 0
        self.handshake_done = False
        self.parts: list[bytes] = []
        self.parts_size = 0
        self.msg_opcode = 0
        self.msg_offset = 0
        self.frame, self.time = 0, 0.0
        self.ledger = WireLedger()
        self.lost: _SkipRun | None = None  # the direction lost its framing: everything is counted here
        #: the current message passed MAX_WS_MESSAGE: where its rest starts (counted, not kept)
        self.rest_at: int | None = None

    @property
    def held_bytes(self) -> int:
        return len(self.buf) + self.parts_size + SPAN_COST * len(self.ledger.spans)

    def feed(self, chunk: Chunk) -> list[Pdu | Skipped]:
        out: list[Pdu | Skipped] = []
        self.frame, self.time = chunk.frame, chunk.time
        if chunk.gap:
            if self.lost is None:
                end = self.base + len(self.buf) + chunk.gap
                out.append(Skipped(chunk.frame, chunk.time, self.base, len(self.buf) + chunk.gap,
                                   f"{chunk.gap} bytes missing from the capture; WebSocket stream lost",
                                   self.ledger.take(self.base, end)))
            self.base += len(self.buf) + chunk.gap
            self.buf.clear()
            self.parts, self.parts_size, self.msg_opcode = [], 0, 0
            if self.lost is not None:
                self.lost.size += chunk.gap
            return out
        if self.lost is not None:
            self.ledger.add(self.base, len(chunk.data), chunk.frame_len)
            self.lost.size += len(chunk.data)
            self.lost.frame, self.lost.time = chunk.frame, chunk.time
            self.lost.wire += self.ledger.take(self.base, self.base + len(chunk.data))
            self.base += len(chunk.data)
            return out
        self.ledger.add(self.base + len(self.buf), len(chunk.data), chunk.frame_len)
        self.buf += chunk.data
        buf = self.buf
        pos = 0
        if not self.handshake_done:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > MAX_HTTP_HEAD_HELD:
                    self._lose(out, "no end of the HTTP upgrade header")
                return out
            pos = end + 4
            self.ledger.drop(self.base, self.base + pos)
            self.handshake_done = True
        while True:
            h = parse_ws_header(buf, pos)
            if h is None:
                break
            if h.length > MAX_WS_MESSAGE:
                del buf[:pos]
                self.base += pos
                self._lose(out, f"frame claims {h.length} bytes, more than a Godot peer takes "
                                   f"({MAX_WS_MESSAGE})")
                return out
            end = pos + h.size + h.length
            if len(buf) < end:
                break
            op = h.opcode
            at = self.base + pos
            if op >= WS_CONTROL_MIN or op not in (WS_CONTINUATION, WS_TEXT, WS_BINARY):
                self.ledger.drop(at, self.base + end)
                pos = end
                continue
            if op != WS_CONTINUATION:
                if self.rest_at is not None:  # the oversized message ends without FIN
                    out.append(self._rest(at))
                elif self.msg_opcode:  # a new message before the last one's FIN
                    out.append(self._cut_message(f"message never finished ({self.parts_size} bytes, no FIN)",
                                                 at))
                self.parts, self.parts_size, self.msg_opcode, self.msg_offset = [], 0, op, at
            if self.msg_opcode and self.rest_at is None:
                payload = bytes(buf[pos + h.size:end])
                self.parts.append(unmask(payload, h.key) if h.masked else payload)
                self.parts_size += h.length
                if self.parts_size > MAX_WS_MESSAGE:
                    out.append(self._cut_message(f"message longer than a Godot peer takes ({MAX_WS_MESSAGE}"
                                                 f" bytes) so far without FIN; the rest of it is skipped",
                                                 self.base + end))
                    self.rest_at = self.base + end
            elif not self.msg_opcode:  # a continuation frame with no message: skipped
                out.append(Skipped(self.frame, self.time, at, end - pos, "continuation frame without a message",
                                   self.ledger.take(at, self.base + end)))
            if h.fin and self.msg_opcode:
                if self.rest_at is not None:
                    out.append(self._rest(self.base + end))
                else:
                    out.append(Pdu(chunk.frame, chunk.time, self.msg_offset, b"".join(self.parts), self.msg_opcode,
                                   self.ledger.take(self.msg_offset, self.base + end)))
                self.parts, self.parts_size, self.msg_opcode = [], 0, 0
            pos = end
        del buf[:pos]
        self.base += pos
        return out

    def _rest(self, end: int) -> Skipped:
        """The rest of an oversized message, up to ``end``."""
        at, self.rest_at = self.rest_at or 0, None
        return Skipped(self.frame, self.time, at, end - at, f"the rest of a message longer than {MAX_WS_MESSAGE} bytes",
                       self.ledger.take(at, end))

    def _cut_message(self, reason: str, end: int) -> Skipped:
        item = Skipped(self.frame, self.time, self.msg_offset, end - self.msg_offset, reason,
                       self.ledger.take(self.msg_offset, end))
        self.parts, self.parts_size = [], 0
        return item

    def _lose(self, out: list[Pdu | Skipped], reason: str) -> None:
        """The framing is lost for good: from buf[0] on, count the direction's bytes under one error."""
        if self.rest_at is not None:
            out.append(self._rest(self.base))
        elif self.msg_opcode and self.parts_size:
            out.append(self._cut_message(f"message never finished ({self.parts_size} bytes, no FIN)", self.base))
        self.msg_opcode = 0
        run = self.lost = _SkipRun(self.frame, self.time, self.base, reason + "; the rest of the direction is skipped")
        run.size = len(self.buf)
        run.wire = self.ledger.take(self.base, self.base + len(self.buf))
        self.base += len(self.buf)
        self.buf.clear()

    @property
    def quiet(self) -> bool:
        """Nothing held and nothing left to report."""
        return not self.buf and self.lost is None and not self.msg_opcode and self.rest_at is None

    def finish(self, why: str | None = None) -> list[Pdu | Skipped]:
        """The end of the stream (the capture's, or ``why``): report what it cut off."""
        out: list[Pdu | Skipped] = []
        why = why or "the capture ends"
        if self.lost is not None:
            out.append(self.lost.item())
            self.lost = None
            return out
        if self.rest_at is not None:
            out.append(self._rest(self.base))
        elif self.msg_opcode:
            out.append(self._cut_message(f"message of {self.parts_size} bytes so far never finished (no FIN): {why}",
                                         self.base))
        self.msg_opcode = 0
        if self.buf and self.handshake_done:
            h = parse_ws_header(self.buf)
            out.append(_leftover(self, f"a frame of {h.size + h.length} bytes" if h is not None else "a frame header",
                                 why))
        return out


def _leftover(framer: LengthPrefixFramer | WebSocketFramer, what: str, why: str) -> Skipped:
    """The framer's buffered bytes, ``what`` the stream ended inside, as one skipped item."""
    n = len(framer.buf)
    end = framer.base + n
    item = Skipped(framer.frame, framer.time, framer.base, n, f"{n} bytes of {what}, never completed: {why}",
                   framer.ledger.take(framer.base, end))
    framer.base = end
    framer.buf.clear()
    return item
