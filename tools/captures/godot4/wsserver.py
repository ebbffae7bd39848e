"""A small RFC 6455 WebSocket server (standard library only) for the Godot 4 captures.

It never accepts ``permessage-deflate`` (or any extension), so every frame on the wire carries the
message bytes as they are.  It echoes the client's first subprotocol if the client offers any
(browsers fail the handshake otherwise).  Every message and control frame is logged with its
direction, opcode and (unmasked) payload, so the driver can compare the log with the pcap.

    srv = WsServer(port, handler)    # handler(conn: WsConn) runs in a thread per connection
    srv.start(); ...; srv.stop()
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0, 1, 2, 8, 9, 10


class WsClosed(Exception):
    pass


@dataclass
class Event:
    direction: str  # "in" (client -> server) | "out"
    opcode: int  # 1 text, 2 binary, 8 close, 9 ping, 10 pong (messages: opcode of the first frame)
    payload: bytes
    t: float
    frames: int = 1  # data messages: number of frames (>1 when fragmented)


@dataclass
class WsConn:
    sock: socket.socket
    peer: tuple[str, int]
    deadline: float
    request: bytes = b""
    events: list[Event] = field(default_factory=list)
    closed: bool = False
    _buf: bytes = b""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # ---- reading

    def _read(self, n: int) -> bytes:
        while len(self._buf) < n:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("WebSocket connection deadline")
            self.sock.settimeout(min(left, 1.0))
            try:
                chunk = self.sock.recv(1 << 20)
            except TimeoutError:
                continue
            if not chunk:
                raise WsClosed("peer closed the TCP connection")
            self._buf += chunk
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def handshake(self) -> None:
        while b"\r\n\r\n" not in self._buf:
            self.sock.settimeout(max(0.1, self.deadline - time.monotonic()))
            chunk = self.sock.recv(65536)
            if not chunk:
                raise WsClosed("closed during the handshake")
            self._buf += chunk
        head, self._buf = self._buf.split(b"\r\n\r\n", 1)
        self.request = head + b"\r\n\r\n"
        headers = {}
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            headers[k.strip().lower()] = v.strip()
        key = headers.get(b"sec-websocket-key")
        if key is None or headers.get(b"upgrade", b"").lower() != b"websocket":
            self.sock.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            raise WsClosed("not a WebSocket upgrade")
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
        resp = (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                b"Sec-WebSocket-Accept: " + accept + b"\r\n")
        protos = headers.get(b"sec-websocket-protocol")
        if protos:
            resp += b"Sec-WebSocket-Protocol: " + protos.split(b",")[0].strip() + b"\r\n"
        self.sock.sendall(resp + b"\r\n")  # no Sec-WebSocket-Extensions: no permessage-deflate

    def _frame(self) -> tuple[bool, int, bytes]:
        b0, b1 = self._read(2)
        if b0 & 0x70:
            raise WsClosed(f"RSV bits set ({b0:#x}): an extension we did not accept")
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", self._read(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", self._read(8))
        mask = self._read(4) if b1 & 0x80 else b""
        data = self._read(n)
        if mask:
            data = _unmask(data, mask)
        return bool(b0 & 0x80), b0 & 0x0F, data

    def recv(self) -> Event:
        """The next data message (text/binary) or close; pings are answered, pongs logged."""
        parts: list[bytes] = []
        first_op = None
        frames = 0
        while True:
            fin, op, data = self._frame()
            now = time.monotonic()
            if op >= 8:
                ev = Event("in", op, data, now)
                self.events.append(ev)
                if op == OP_PING:
                    self._send_frame(True, OP_PONG, data)
                elif op == OP_CLOSE:
                    if not self.closed:
                        self._send_frame(True, OP_CLOSE, data[:2])
                        self.closed = True
                    return ev
                continue
            if first_op is None:
                if op == OP_CONT:
                    raise WsClosed("continuation frame without a start")
                first_op = op
            parts.append(data)
            frames += 1
            if fin:
                ev = Event("in", first_op, b"".join(parts), now, frames)
                self.events.append(ev)
                return ev

    # ---- writing (server frames are not masked)

    def _send_frame(self, fin: bool, op: int, data: bytes) -> None:
        b0 = (0x80 if fin else 0) | op
        n = len(data)
        if n < 126:
            head = struct.pack("!BB", b0, n)
        elif n < 65536:
            head = struct.pack("!BBH", b0, 126, n)
        else:
            head = struct.pack("!BBQ", b0, 127, n)
        with self._lock:
            self.sock.sendall(head + data)
        if op >= 8:
            self.events.append(Event("out", op, data, time.monotonic()))

    def send(self, data: bytes | str) -> None:
        op = OP_TEXT if isinstance(data, str) else OP_BINARY
        raw = data.encode("utf-8") if isinstance(data, str) else data
        self._send_frame(True, op, raw)
        self.events.append(Event("out", op, raw, time.monotonic()))

    def send_fragmented(self, data: bytes, cuts: list[int], ping_after: int | None = None) -> None:
        """One binary message as len(cuts)+1 frames (cut at the given offsets); with ping_after=k a
        ping goes between frame k and k+1 (control frames may interleave, RFC 6455 section 5.4)."""
        bounds = [0, *cuts, len(data)]
        pieces = [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
        for i, piece in enumerate(pieces):
            self._send_frame(i == len(pieces) - 1, OP_BINARY if i == 0 else OP_CONT, piece)
            if ping_after is not None and i == ping_after:
                self._send_frame(True, OP_PING, b"gdx-ping")
        self.events.append(Event("out", OP_BINARY, data, time.monotonic(), len(pieces)))

    def close(self, code: int = 1000, reason: str = "") -> None:
        if not self.closed:
            self._send_frame(True, OP_CLOSE, struct.pack("!H", code) + reason.encode())
            self.closed = True

    @property
    def messages(self) -> list[Event]:
        return [e for e in self.events if e.opcode in (OP_TEXT, OP_BINARY)]


def _unmask(data: bytes, mask: bytes) -> bytes:
    n = len(data)
    m = int.from_bytes((mask * (n // 4 + 1))[:n], "little")
    return (int.from_bytes(data, "little") ^ m).to_bytes(n, "little")


class WsServer:
    """Listen on 127.0.0.1:port; run ``handler(conn)`` for each connection until ``deadline_s``."""

    def __init__(self, port: int, handler: Callable[[WsConn], None], deadline_s: float = 60.0) -> None:
        self.port = port
        self.handler = handler
        self.deadline = time.monotonic() + deadline_s
        self.conns: list[WsConn] = []
        self.errors: list[str] = []
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port))
        self._sock.listen(8)
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._accept_thread = threading.Thread(target=self._accept, daemon=True)

    def start(self) -> WsServer:
        self._accept_thread.start()
        return self

    def _accept(self) -> None:
        self._sock.settimeout(0.2)
        while not self._stop.is_set() and time.monotonic() < self.deadline:
            try:
                s, addr = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn = WsConn(s, addr, self.deadline)
            self.conns.append(conn)
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _serve(self, conn: WsConn) -> None:
        try:
            conn.handshake()
            self.handler(conn)
        except Exception as e:  # reported by the driver
            self.errors.append(f"{conn.peer}: {type(e).__name__}: {e}")
        finally:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(socket.SHUT_WR)
            # Wait (bounded) for the client to close its side so that the FINs make it into the capture.
            with contextlib.suppress(OSError):
                conn.sock.settimeout(max(0.1, min(3.0, self.deadline - time.monotonic())))
                while conn.sock.recv(65536):
                    pass
            conn.sock.close()

    def wait(self, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.conns and not any(t.is_alive() for t in self._threads):
                return True
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._sock.close()
        self._accept_thread.join(2)
        for t in self._threads:
            t.join(max(0.0, self.deadline - time.monotonic()) + 1)
