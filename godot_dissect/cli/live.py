"""Live capture: Wireshark's ``dumpcap`` writes pcapng to a pipe, the reader decodes it as it comes.

``dumpcap`` (not a capture library of our own) because it is what Wireshark users already have, with
the capture privileges set up (the ``wireshark`` group or ``cap_net_raw``), and it flushes each
packet to a pipe. It runs in its own session, so Ctrl-C reaches only us: the first Ctrl-C asks
dumpcap to stop, the pipe ends, and the reader finishes with every record it still held.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import signal
import subprocess
import threading
from types import FrameType
from typing import BinaryIO

#: what to do when dumpcap is not installed
INSTALL_HINT = ("live capture runs Wireshark's dumpcap, which is not on PATH: install it "
                "(Debian/Ubuntu: apt install tshark; Fedora: dnf install wireshark-cli; macOS: brew install wireshark)")
_AUTOSTOP = re.compile(r"^(duration|packets):(\d+(\.\d+)?)$")


class LiveError(Exception):
    """Live capture cannot start or dumpcap failed; the message is one line for the user."""


def parse_autostop(spec: str) -> tuple[str, str]:
    """``duration:SECONDS`` or ``packets:N`` -> (condition, number)."""
    m = _AUTOSTOP.match(spec)
    if not m or (m.group(1) == "packets" and m.group(3)):
        raise LiveError(f"-a {spec}: expected duration:SECONDS or packets:N")
    return m.group(1), m.group(2)


class _Tee:
    """A readable pipe that also writes every byte it hands out to a file (``-w``)."""

    def __init__(self, src: BinaryIO, save: BinaryIO | None) -> None:
        self.src = src
        self.save = save

    def read(self, n: int = -1) -> bytes:
        data = self.src.read(n)
        if self.save is not None and data:
            self.save.write(data)
            self.save.flush()
        return data

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self.src.close()
        if self.save is not None:
            self.save.close()


class LiveCapture:
    """``dumpcap -i IFACE [-f FILTER] [-a ...] -w -`` as a binary stream (pcapng)."""

    def __init__(self, interface: str, capture_filter: str | None = None, autostop: list[str] | None = None,
                 save: str | None = None) -> None:
        self.interface = interface
        exe = shutil.which("dumpcap")
        if exe is None:
            raise LiveError(INSTALL_HINT)
        cmd = [exe, "-i", interface, "-q", "-w", "-"]
        if capture_filter:
            cmd += ["-f", capture_filter]
        for spec in autostop or ():
            cond, num = parse_autostop(spec)
            cmd += ["-a", f"{cond}:{num}"]
        try:  # before dumpcap starts: a -w that cannot be written must not leave it running
            saved = open(save, "wb") if save else None  # noqa: SIM115 - closed with the stream
        except OSError as e:
            raise LiveError(f"-w {save}: {e.strerror or e}") from None
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True)
        self.stderr: list[str] = []
        self._err_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._err_reader.start()
        self.stream = _Tee(self.proc.stdout, saved)  # type: ignore[arg-type]
        self._old_handler: object = None
        self.interrupted = False

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:  # type: ignore[union-attr]
            self.stderr.append(line.decode("utf-8", "replace").rstrip())

    # -- Ctrl-C: stop dumpcap, let the reader drain the pipe --------------------------------------
    def __enter__(self) -> LiveCapture:
        if threading.current_thread() is threading.main_thread():
            self._old_handler = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.interrupted or self.proc.poll() is not None:
            raise KeyboardInterrupt  # second Ctrl-C: stop at once
        self.interrupted = True
        self.stop()

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGINT)  # dumpcap ends its pcapng cleanly on SIGINT

    def __exit__(self, *exc: object) -> None:
        if self._old_handler is not None:
            signal.signal(signal.SIGINT, self._old_handler)  # type: ignore[arg-type]
        self.stop()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._err_reader.join(timeout=2)
        self.stream.close()

    def failure(self, wait: float = 5.0) -> str | None:
        """One line for the user when dumpcap failed (None when it ended normally or by Ctrl-C); waits up
        to ``wait`` seconds for it to end (its stream ended, so it is ending)."""
        try:
            code = self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None
        self._err_reader.join(timeout=2)
        if code in (0, None) or self.interrupted or code == -signal.SIGINT:
            return None
        return describe_failure(self.interface, code, self.stderr)


def describe_failure(interface: str, code: int, stderr: list[str]) -> str:
    """dumpcap's complaint in one line, with what to change when it is about privileges."""
    text = " ".join(s.strip() for s in stderr if s.strip())
    low = text.lower()
    if "permission" in low or "operation not permitted" in low or "don't have permission" in low:
        return (f"no permission to capture on {interface}: run as root, add your user to the 'wireshark' group "
                f"(then log in again), or give dumpcap the capabilities: "
                f"sudo setcap cap_net_raw,cap_net_admin+eip {shutil.which('dumpcap') or 'dumpcap'}")
    first = next((s for s in stderr if s.strip() and not s.startswith("Capturing on")), "") or f"exit status {code}"
    return f"dumpcap failed on {interface}: {first.strip()}"




def start_live(args: argparse.Namespace) -> LiveCapture | None:
    """The running dumpcap for ``-i`` (entered; the caller exits it), or None when reading a file
    (the options: ``options.add_live_options``).

    Raises LiveError when dumpcap cannot start."""
    if not args.interface:
        return None
    live = LiveCapture(args.interface, args.capture_filter, args.autostop, args.write)
    live.__enter__()
    return live
