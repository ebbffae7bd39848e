"""Helpers both capture drivers share: tshark on loopback, and the NodePath padding rule."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class CaptureError(RuntimeError):
    pass


@contextmanager
def tshark_capture(tshark: str, bpf: str, path: Path) -> Iterator[None]:
    """Run tshark on lo with a capture filter; stop it with SIGINT (by pid) when the block ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    proc = subprocess.Popen([tshark, "-i", "lo", "-f", bpf, "-w", str(path)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ready = threading.Event()
    lines: list[str] = []

    def reader() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "Capturing on" in line:
                ready.set()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    if not ready.wait(20) or proc.poll() is not None:
        proc.kill()
        proc.wait()
        raise CaptureError("tshark did not start capturing:\n" + "".join(lines))
    time.sleep(0.3)
    try:
        yield
    finally:
        time.sleep(0.5)  # let the last segments / FINs reach the capture
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        t.join(5)
    if not path.exists() or path.stat().st_size == 0:
        raise CaptureError("tshark wrote no capture:\n" + "".join(lines))
    path.chmod(0o644)  # dumpcap creates it 0600
    dropped = [ln for ln in lines if "dropped" in ln and not re.search(r"\b0 packets? dropped", ln)]
    if dropped:
        raise CaptureError("tshark dropped packets: " + "".join(dropped))


def padding_only_diff(a: str, b: str, text: str) -> bool:
    """Godot 3.2.3 leaves NodePath name padding uninitialised: only values holding a NodePath may
    differ between two encodings, and only in length-preserving ways."""
    return len(a) == len(b) and "NodePath(" in text
