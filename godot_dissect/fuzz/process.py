"""A target the fuzzer starts itself (``--cmd``): start, wait until it answers, watch it die.

The command runs under ``/bin/sh -c`` in its own session (so ``VAR=x prog ...`` works and the
whole process group can be stopped); ``{host}`` and ``{port}`` in it are replaced by the target's.
Its output goes to a log file. A shell that did not ``exec`` its command reports a signal death as
status 128+N: that is reported as the signal too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def describe_status(rc: int) -> tuple[str, int | None]:
    """("killed by signal 11 (SIGSEGV)", 11) or ("exited with status 1", None)."""
    sig = -rc if rc < 0 else (rc - 128 if 128 < rc < 128 + 65 else None)
    if sig is not None:
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        via = "" if rc < 0 else f" (shell status {rc})"
        return f"killed by signal {sig} ({name}){via}", sig
    return f"exited with status {rc}", None


class TargetProcess:
    def __init__(self, cmd: str, host: str, port: int, log_path: Path, ready_timeout: float = 20.0,
                 env: dict[str, str] | None = None) -> None:
        self.cmd = cmd.replace("{host}", host).replace("{port}", str(port))
        self.log_path = log_path
        self.ready_timeout = ready_timeout
        self.env = env
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def start(self, ready: Callable[[], bool]) -> None:
        """Start the command and wait until ``ready()`` (a liveness probe) is True."""
        self.stop()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        log.write(f"--- godot-dissect: start #{self.starts + 1}: {self.cmd}\n".encode())
        log.flush()
        self.proc = subprocess.Popen(["/bin/sh", "-c", self.cmd], stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, start_new_session=True,
                                     env=None if self.env is None else {**os.environ, **self.env})
        log.close()
        self.starts += 1
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                what, _ = describe_status(self.proc.returncode)
                raise RuntimeError(f"target command {what} before it was ready (log: {self.log_path})")
            if ready():
                return
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"target not ready within {self.ready_timeout:g} s (log: {self.log_path})")

    def poll(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def wait_exit(self, timeout: float) -> int | None:
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def stop(self) -> None:
        """Stop the process group we started (TERM, then KILL)."""
        p = self.proc
        if p is None:
            return
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout=2)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        else:  # the leader is gone; children of the shell may not be
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)
        self.proc = None

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])
