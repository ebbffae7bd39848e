"""Targets: ``udp://HOST:PORT`` / ``tcp://HOST:PORT``, the loopback-only rule, and the senders.

A sender sends a case's frames and says what happened (connection refused or reset, a send that
timed out, whether the in-band probe was answered), and checks that the target is alive with a
known-good probe. Everything sent and received since the last good probe is recorded, so a finding
comes with the exchange that led to it (``pcapout.py`` writes it as a pcap).
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import select
import socket
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit


class UnsafeTarget(ValueError):
    """A target that is not on this machine while --allow-remote was not given."""


@dataclass(frozen=True)
class Target:
    scheme: str  # "udp" | "tcp"
    host: str
    port: int
    address: tuple  # the resolved sockaddr used
    family: int

    def __str__(self) -> str:
        h = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{h}:{self.port}"


def parse_target(url: str, allow_remote: bool = False) -> Target:
    """Parse and resolve a target URL; refuse non-loopback addresses unless ``allow_remote``."""
    parts = urlsplit(url)
    if parts.scheme not in ("udp", "tcp"):
        raise ValueError(f"target {url!r}: the scheme must be udp:// or tcp://")
    if not parts.hostname or parts.port is None:
        raise ValueError(f"target {url!r}: expected udp://HOST:PORT or tcp://HOST:PORT")
    kind = socket.SOCK_DGRAM if parts.scheme == "udp" else socket.SOCK_STREAM
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port, type=kind)
    except socket.gaierror as e:
        raise ValueError(f"target {url!r}: cannot resolve {parts.hostname!r}: {e}") from None
    if not allow_remote:
        for info in infos:
            addr = ipaddress.ip_address(info[4][0].split("%")[0])
            if not addr.is_loopback:
                raise UnsafeTarget(f"target {url!r} resolves to {addr}, which is not a loopback address; "
                                   "pass --allow-remote to fuzz another machine (only one you own)")
    family, _, _, _, sockaddr = infos[0]
    return Target(parts.scheme, parts.hostname, parts.port, sockaddr, family)


# -- recording -----------------------------------------------------------------------------------------

@dataclass
class Event:
    time: float
    conn: int  # connection number (TCP) or 0 (UDP)
    kind: str  # "open" | "data" | "close" | "reset"
    direction: str  # "c2s" | "s2c"
    data: bytes = b""
    local: tuple = ()  # our address (host, port)


@dataclass
class Recorder:
    """What went over the wire since ``clear()``, bounded in bytes."""

    max_bytes: int = 64 << 20
    events: list[Event] = field(default_factory=list)
    size: int = 0
    dropped: int = 0

    def add(self, ev: Event) -> None:
        if self.size + len(ev.data) > self.max_bytes:
            self.dropped += 1
            return
        self.events.append(ev)
        self.size += len(ev.data)

    def clear(self) -> None:
        self.events = []
        self.size = 0
        self.dropped = 0

    def take(self) -> list[Event]:
        ev = self.events
        self.clear()
        return ev


@dataclass
class Outcome:
    """What sending one case showed."""

    error: str | None = None  # "refused" | "reset" | "send timeout" | "closed" | "no reply" | OS error text
    answered: bool | None = None  # in-band probe answered (stream), None when there was none

    @property
    def suspicious(self) -> bool:
        return self.error is not None or self.answered is False


class Sender:
    target: Target
    recorder: Recorder

    def send_case(self, frames: list[bytes], probe: bytes | None) -> Outcome:
        raise NotImplementedError

    def alive(self, probe: bytes, timeout: float, expect_reply: bool = True) -> tuple[bool, str]:
        raise NotImplementedError

    def close(self) -> None:
        pass


class UdpSender(Sender):
    """One connected UDP socket: a closed port shows as ECONNREFUSED on the next send."""

    def __init__(self, target: Target, send_timeout: float = 2.0, record: bool = True) -> None:
        self.target = target
        self.recorder = Recorder()
        self.record = record
        self.send_timeout = send_timeout
        self._open()

    def _open(self) -> None:
        self.sock = socket.socket(self.target.family, socket.SOCK_DGRAM)
        with contextlib.suppress(OSError):
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
        self.sock.connect(self.target.address)
        self.sock.settimeout(self.send_timeout)
        self.local = self.sock.getsockname()[:2]

    def send_case(self, frames: list[bytes], probe: bytes | None = None) -> Outcome:
        send = self.sock.send
        for f in frames:
            if self.record:
                self.recorder.add(Event(time.time(), 0, "data", "c2s", f, self.local))
            try:
                send(f)
            except ConnectionRefusedError:
                return Outcome("refused")
            except TimeoutError:
                return Outcome("send timeout")
            except OSError as e:
                if e.errno in (errno.EMSGSIZE,):
                    return Outcome()  # too big for a datagram: not sent, not the target's fault
                if e.errno == errno.ENOBUFS:
                    time.sleep(0.001)
                    continue
                return Outcome(f"send failed: {e}")
        return Outcome()

    def _drain(self) -> None:
        self.sock.setblocking(False)
        try:
            while True:
                data = self.sock.recv(70000)
                if self.record:
                    self.recorder.add(Event(time.time(), 0, "data", "s2c", data, self.local))
        except (BlockingIOError, ConnectionRefusedError):
            pass
        except OSError:
            pass
        finally:
            self.sock.settimeout(self.send_timeout)

    def alive(self, probe: bytes, timeout: float, expect_reply: bool = True) -> tuple[bool, str]:
        self._drain()
        try:
            self.recorder.add(Event(time.time(), 0, "data", "c2s", probe, self.local))
            self.sock.send(probe)
        except ConnectionRefusedError:
            return False, "refused (ICMP port unreachable)"
        except OSError as e:
            return False, f"probe not sent: {e}"
        if not expect_reply:
            time.sleep(min(timeout, 0.05))
            try:
                self.sock.send(probe)
            except ConnectionRefusedError:
                return False, "refused (ICMP port unreachable)"
            return True, "no refusal"
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False, f"no reply to the probe within {timeout:g} s"
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                continue
            try:
                data = self.sock.recv(70000)
            except ConnectionRefusedError:
                return False, "refused (ICMP port unreachable)"
            except OSError as e:
                return False, f"probe failed: {e}"
            self.recorder.add(Event(time.time(), 0, "data", "s2c", data, self.local))
            return True, "reply"

    def reset(self) -> None:
        """A new socket (after the target was restarted)."""
        self.close()
        self._open()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class TcpSender(Sender):
    """One connection per case; the in-band probe follows the case on the same connection."""

    def __init__(self, target: Target, connect_timeout: float = 2.0, reply_timeout: float = 1.0,
                 record: bool = True) -> None:
        self.target = target
        self.recorder = Recorder()
        self.record = record
        self.connect_timeout = connect_timeout
        self.reply_timeout = reply_timeout
        self.conn_no = 0

    def _connect(self) -> tuple[socket.socket | None, str | None]:
        s = socket.socket(self.target.family, socket.SOCK_STREAM)
        s.settimeout(self.connect_timeout)
        try:
            s.connect(self.target.address)
        except ConnectionRefusedError:
            s.close()
            return None, "refused"
        except TimeoutError:
            s.close()
            return None, "connect timeout"
        except OSError as e:
            s.close()
            return None, f"connect failed: {e}"
        with contextlib.suppress(OSError):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.conn_no += 1
        if self.record:
            self.recorder.add(Event(time.time(), self.conn_no, "open", "c2s", b"", s.getsockname()[:2]))
        return s, None

    def _rec(self, direction: str, data: bytes, kind: str = "data") -> None:
        if self.record:
            self.recorder.add(Event(time.time(), self.conn_no, kind, direction, data))

    def _wait_reply(self, s: socket.socket, timeout: float) -> str | None:
        """None when bytes came back, else what happened instead."""
        s.settimeout(timeout)
        try:
            data = s.recv(65536)
        except TimeoutError:
            return "no reply"
        except ConnectionResetError:
            self._rec("s2c", b"", "reset")
            return "reset"
        except OSError as e:
            return f"recv failed: {e}"
        if not data:
            self._rec("s2c", b"", "close")
            return "closed"
        self._rec("s2c", data)
        return None

    def _close(self, s: socket.socket, abort: bool) -> None:
        if abort:  # RST: no TIME_WAIT left behind when thousands of cases are sent
            with contextlib.suppress(OSError):
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
        self._rec("c2s", b"", "reset" if abort else "close")
        with contextlib.suppress(OSError):
            s.close()

    def send_case(self, frames: list[bytes], probe: bytes | None) -> Outcome:
        s, err = self._connect()
        if s is None:
            return Outcome(err)
        data = b"".join(frames)
        try:
            s.settimeout(max(self.connect_timeout, len(data) / 50e6 + 1))
            self._rec("c2s", data)
            s.sendall(data)
            if probe is not None:
                self._rec("c2s", probe)
                s.sendall(probe)
        except (ConnectionResetError, BrokenPipeError):
            self._close(s, False)
            return Outcome("reset")
        except TimeoutError:
            self._close(s, False)
            return Outcome("send timeout")
        except OSError as e:
            self._close(s, False)
            return Outcome(f"send failed: {e}")
        if probe is None:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_WR)
            self._close(s, False)
            return Outcome()
        why = self._wait_reply(s, self.reply_timeout)
        self._close(s, why is None)
        if why is None:
            return Outcome(answered=True)
        if why == "no reply":
            return Outcome(answered=False)
        return Outcome(why, answered=False)

    def alive(self, probe: bytes, timeout: float, expect_reply: bool = True) -> tuple[bool, str]:
        s, err = self._connect()
        if s is None:
            return False, err or "connect failed"
        try:
            s.settimeout(timeout)
            self._rec("c2s", probe)
            s.sendall(probe)
        except OSError as e:
            self._close(s, False)
            return False, f"probe not sent: {e}"
        if not expect_reply:
            # the connection was accepted: give the target a moment to reset it
            why = self._wait_reply(s, min(timeout, 0.05))
            self._close(s, False)
            if why in ("reset",):
                return False, why
            return True, "connected"
        why = self._wait_reply(s, timeout)
        self._close(s, why is None)
        if why is None:
            return True, "reply"
        if why == "no reply":
            return False, f"no reply to the probe within {timeout:g} s"
        return False, why

    def reset(self) -> None:
        pass


def make_sender(target: Target, timeout: float = 2.0, reply_timeout: float = 1.0) -> UdpSender | TcpSender:
    if target.scheme == "udp":
        return UdpSender(target, send_timeout=timeout)
    return TcpSender(target, connect_timeout=timeout, reply_timeout=reply_timeout)
