"""Messages out of byte streams: u32-length-prefixed PDUs (StreamPeer.put_var, PacketPeerStream,
the remote debugger) and WebSocket messages. Framers are fed in-order chunks and return PDUs;
after a gap or a mid-stream start they resynchronise on the next plausible PDU and say how many
bytes they skipped."""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

from .tcp import Chunk

_U32 = struct.Struct("<I")
#: the debugger accepts up to 8 MiB + 4; StreamPeer has no limit of its own but we need one
MAX_PDU = (8 << 20) + 4


@dataclass(slots=True)
class Pdu:
    frame: int
    time: float
    offset: int  # stream offset of the PDU's first byte (its length prefix)
    data: bytes  # the message body
    opcode: int = 2  # WebSocket opcode (1 text, 2 binary); 2 for length-prefixed PDUs


@dataclass(slots=True)
class Skipped:
    frame: int
    time: float
    offset: int
    size: int
    reason: str


class LengthPrefixFramer:
    """u32 little-endian length, then that many bytes."""

    def __init__(self, plausible: Callable[[bytes], bool], aligned: bool) -> None:
        self.buf = bytearray()
        self.base = 0  # stream offset of buf[0]
        self.plausible = plausible
        self.synced = aligned
        self.frame, self.time = 0, 0.0
        self.scanned = 0  # resync: every offset below this is known not to start a PDU
        self.waiting: list[int] = []  # resync: offsets whose PDU body has not fully arrived

    def feed(self, chunk: Chunk) -> list[Pdu | Skipped]:
        out: list[Pdu | Skipped] = []
        if chunk.gap:
            if self.buf:
                out.append(Skipped(chunk.frame, chunk.time, self.base, len(self.buf) + chunk.gap,
                                   f"{chunk.gap} bytes missing from the capture"))
            self.base += len(self.buf) + chunk.gap
            self.buf.clear()
            self.synced = False
            self.scanned, self.waiting = 0, []
        self.buf += chunk.data
        self.frame, self.time = chunk.frame, chunk.time
        self._cut(out)
        return out

    def _cut(self, out: list[Pdu | Skipped]) -> None:
        buf = self.buf
        pos = 0
        while True:
            if not self.synced:
                found, keep = self._resync()
                if found is None:
                    if keep > 0:  # nothing before ``keep`` can start a PDU any more
                        out.append(Skipped(self.frame, self.time, self.base, keep, "no PDU found"))
                        self._drop(keep)
                    return
                if found > 0:
                    out.append(Skipped(self.frame, self.time, self.base, found,
                                       "resynchronised on the next plausible PDU"))
                    self._drop(found)
                self.synced = True
                buf = self.buf
                pos = 0
            if len(buf) - pos < 4:
                break
            n = _U32.unpack_from(buf, pos)[0]
            if n > MAX_PDU:
                self.synced = False
                out.append(Skipped(self.frame, self.time, self.base + pos, 4, f"length {n} is implausible"))
                pos += 4
                self._drop(pos)
                buf, pos = self.buf, 0
                continue
            if len(buf) - pos - 4 < n:
                break
            out.append(Pdu(self.frame, self.time, self.base + pos, bytes(buf[pos + 4:pos + 4 + n])))
            pos += 4 + n
        self._drop(pos)

    def _drop(self, n: int) -> None:
        del self.buf[:n]
        self.base += n
        self.scanned = max(0, self.scanned - n)
        self.waiting = [w - n for w in self.waiting if w >= n]

    def _candidate(self, pos: int) -> str:
        """"no", "wait" (its body is not all here yet) or "yes" for a PDU starting at pos."""
        buf = self.buf
        if len(buf) - pos < 8:
            return "wait"
        n = _U32.unpack_from(buf, pos)[0]
        if n < 4 or n > MAX_PDU or n % 4 or buf[pos + 5] != 0:
            return "no"
        if len(buf) - pos - 4 < n:
            return "wait"
        return "yes" if self.plausible(bytes(buf[pos + 4:pos + 4 + n])) else "no"

    def _resync(self) -> tuple[int | None, int]:
        """(position of the first plausible PDU or None, bytes that can be dropped for sure)."""
        still = []
        for w in self.waiting:  # candidates whose bodies were incomplete before
            c = self._candidate(w)
            if c == "yes":
                self.waiting = []
                return w, 0
            if c == "wait":
                still.append(w)
        self.waiting = still
        while self.scanned < len(self.buf) - 7:
            c = self._candidate(self.scanned)
            if c == "yes":
                pos = self.scanned
                self.waiting = []
                return pos, 0
            if c == "wait":
                self.waiting.append(self.scanned)
            self.scanned += 1
        first = min(self.waiting, default=self.scanned)
        return None, first


class WebSocketFramer:
    """RFC 6455 after the HTTP upgrade: unmask, join continuation frames, one Pdu per message."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.base = 0
        self.handshake_done = False
        self.parts: list[bytes] = []
        self.msg_opcode = 0
        self.msg_offset = 0

    def feed(self, chunk: Chunk) -> list[Pdu | Skipped]:
        out: list[Pdu | Skipped] = []
        if chunk.gap:
            out.append(Skipped(chunk.frame, chunk.time, self.base, len(self.buf) + chunk.gap,
                               f"{chunk.gap} bytes missing from the capture; WebSocket stream lost"))
            self.base += len(self.buf) + chunk.gap
            self.buf.clear()
            self.parts = []
            return out
        self.buf += chunk.data
        buf = self.buf
        pos = 0
        if not self.handshake_done:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return out
            pos = end + 4
            self.handshake_done = True
        while len(buf) - pos >= 2:
            b0, b1 = buf[pos], buf[pos + 1]
            opcode, masked, n = b0 & 0x0F, b1 & 0x80, b1 & 0x7F
            hl = 2
            if n == 126:
                if len(buf) - pos < 4:
                    break
                n, hl = struct.unpack_from("!H", buf, pos + 2)[0], 4
            elif n == 127:
                if len(buf) - pos < 10:
                    break
                n, hl = struct.unpack_from("!Q", buf, pos + 2)[0], 10
            if masked:
                hl += 4
            if len(buf) - pos < hl + n:
                break
            payload = bytes(buf[pos + hl:pos + hl + n])
            if masked:
                key = buf[pos + hl - 4:pos + hl]
                payload = _unmask(payload, bytes(key))
            if opcode in (1, 2):
                self.parts, self.msg_opcode, self.msg_offset = [payload], opcode, self.base + pos
            elif opcode == 0:
                self.parts.append(payload)
            if b0 & 0x80 and opcode in (0, 1, 2) and self.msg_opcode:
                out.append(Pdu(chunk.frame, chunk.time, self.msg_offset, b"".join(self.parts), self.msg_opcode))
                self.parts, self.msg_opcode = [], 0
            pos += hl + n
        del buf[:pos]
        self.base += pos
        return out


def _unmask(data: bytes, key: bytes) -> bytes:
    n = len(data)
    k = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(data, "little") ^ int.from_bytes(k, "little")).to_bytes(n, "little")
