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

    def feed(self, chunk: Chunk) -> list[Pdu | Skipped]:
        out: list[Pdu | Skipped] = []
        if chunk.gap:
            if self.buf:
                out.append(Skipped(chunk.frame, chunk.time, self.base, len(self.buf) + chunk.gap,
                                   f"{chunk.gap} bytes missing from the capture"))
            self.base += len(self.buf) + chunk.gap
            self.buf.clear()
            self.synced = False
        self.buf += chunk.data
        self.frame, self.time = chunk.frame, chunk.time
        self._cut(out)
        return out

    def _cut(self, out: list[Pdu | Skipped]) -> None:
        buf = self.buf
        pos = 0
        while True:
            if not self.synced:
                found = self._resync(pos)
                if found is None:
                    # keep the tail that could still start a PDU
                    keep = max(pos, len(buf) - (MAX_PDU + 4))
                    if keep > pos:
                        out.append(Skipped(self.frame, self.time, self.base + pos, keep - pos, "no PDU found"))
                    pos = keep
                    break
                if found > pos:
                    out.append(Skipped(self.frame, self.time, self.base + pos, found - pos,
                                       "resynchronised on the next plausible PDU"))
                pos = found
                self.synced = True
            if len(buf) - pos < 4:
                break
            n = _U32.unpack_from(buf, pos)[0]
            if n > MAX_PDU:
                self.synced = False
                out.append(Skipped(self.frame, self.time, self.base + pos, 4, f"length {n} is implausible"))
                pos += 4
                continue
            if len(buf) - pos - 4 < n:
                break
            out.append(Pdu(self.frame, self.time, self.base + pos, bytes(buf[pos + 4:pos + 4 + n])))
            pos += 4 + n
        del buf[:pos]
        self.base += pos

    def _resync(self, start: int) -> int | None:
        buf = self.buf
        for pos in range(start, len(buf) - 7):
            n = _U32.unpack_from(buf, pos)[0]
            if n < 4 or n > MAX_PDU or n % 4 or buf[pos + 5] != 0:
                continue
            if len(buf) - pos - 4 < n:
                return pos if pos == start else None  # wait for the rest before judging
            if self.plausible(bytes(buf[pos + 4:pos + 4 + n])):
                return pos
        return None


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
