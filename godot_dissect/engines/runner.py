"""Engine base class: run the driver in a throw-away project, parse it, survive crashes.

Crash policy: a crash (non-zero exit, signal or timeout before the driver's END line) is pinned on
the case that was in progress (its start marker was printed, its result line was not).  That case
is reported as crashed and the engine is started again on the cases not done yet, up to
``max_crashes`` times; past that, or when a crash cannot be pinned on a case, EngineCrashed is
raised with the partial results.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .model import DecodeCase, DecodeResult, EncodeCase, EncodeResult, EngineCrashed, ProbeResult
from .protocol import build_cases_file, parse_output

HERE = Path(__file__).resolve().parent


@dataclass
class ProcessOutput:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool


def run_process(argv: Sequence[str], cwd: Path, env: dict[str, str], timeout: float) -> ProcessOutput:
    # Own session, so that on timeout we can kill exactly the process group we started.
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    return ProcessOutput(
        returncode=proc.returncode,
        stdout=out.decode("utf-8", errors="replace"),
        stderr=err.decode("utf-8", errors="replace"),
        timed_out=timed_out,
    )


def isolated_env(workdir: Path) -> dict[str, str]:
    """The caller's environment with HOME and XDG dirs inside the temp dir (Godot writes there)."""
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    for sub in ("data", "config", "cache"):
        (home / sub).mkdir(exist_ok=True)
    env = dict(os.environ)
    env.update(
        LANG="en_US.UTF-8",  # Godot 3 reads the locale from $LANG and warns about "C"
        HOME=str(home),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_CACHE_HOME=str(home / "cache"),
    )
    return env


def driver_source(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


class Engine(ABC):
    """A Godot engine that can run the oracle driver.  Subclasses say how to lay out and start it."""

    name: str
    base_class: str  # what the generated case scripts extend
    startup_seconds = 10.0  # part of the default timeout

    def __init__(self) -> None:
        self._version: str | None = None

    @property
    def version(self) -> str:
        """The version string the engine reports, e.g. "3.2.3.stable.custom_build"."""
        if self._version is None:
            self.probe()
        assert self._version is not None
        return self._version

    @abstractmethod
    def _command(self, workdir: Path, cases: bytes, timeout: float) -> list[str]:
        """Write the project for ``cases`` into ``workdir``; return the command line to run it."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._version or '?'}>"

    def probe(
        self,
        encode: Iterable[EncodeCase] = (),
        decode: Iterable[DecodeCase] = (),
        *,
        timeout: float | None = None,
        max_crashes: int = 20,
    ) -> ProbeResult:
        """Run every case in one engine process (more only after crashes) and return the results.

        ``timeout`` bounds each engine process, in seconds (a hanging case costs that much); the
        default allows for start-up and grows with the number and size of the cases.
        """
        enc = list(encode)
        dec = list(decode)
        names = {i: c.name for i, c in enumerate(enc)}
        if len(set(names.values())) != len(enc):
            raise ValueError("encode case names must be unique")
        if timeout is None:
            size = len(enc) + len(dec) + sum(len(c.data) for c in dec) / 1000
            timeout = self.startup_seconds + 60.0 + 0.01 * size
        enc_done: dict[int, EncodeResult] = {}
        dec_done: dict[int, DecodeResult] = {}
        result = ProbeResult(version=self._version or "")
        stderr_parts: list[str] = []
        stdout_parts: list[str] = []
        crashes = 0
        started = time.monotonic()

        def finish() -> ProbeResult:
            result.encoded = {enc[i].name: enc_done[i] for i in range(len(enc)) if i in enc_done}
            result.decoded = [dec_done[i] for i in range(len(dec)) if i in dec_done]
            result.stderr = "\n".join(stderr_parts)
            result.stdout = "\n".join(stdout_parts)
            result.seconds = time.monotonic() - started
            return result

        while True:
            todo_enc = [(i, enc[i]) for i in range(len(enc)) if i not in enc_done]
            todo_dec = [(i, dec[i]) for i in range(len(dec)) if i not in dec_done]
            cases = build_cases_file(self.base_class, todo_enc, todo_dec)
            with tempfile.TemporaryDirectory(prefix="godot-dissect-") as tmp:
                workdir = Path(tmp)
                argv = self._command(workdir, cases, timeout)
                proc = run_process(argv, workdir, isolated_env(workdir), timeout)
            result.runs += 1
            parsed = parse_output(proc.stderr, names)
            if result.runs > 1:
                stderr_parts.append(f"--- godot-dissect: engine run {result.runs} ---")
            stderr_parts.append("\n".join(parsed.other_lines))
            stdout_parts.append(proc.stdout)
            if parsed.version:
                self._version = result.version = parsed.version
            enc_done.update(parsed.encoded)
            dec_done.update(parsed.decoded)
            if parsed.fatal:
                raise EngineCrashed(f"{self.name}: driver failed: {parsed.fatal}", finish())
            if parsed.ended:
                return finish()

            reason = "timeout" if proc.timed_out else f"exit status {proc.returncode}"
            if parsed.version is None:
                tail = "\n".join((proc.stderr + proc.stdout).splitlines()[-20:])
                raise EngineCrashed(f"{self.name}: engine did not start ({reason}):\n{tail}", finish())
            if parsed.unfinished is None:
                raise EngineCrashed(f"{self.name}: engine died outside any case ({reason})", finish())
            kind, index, messages = parsed.unfinished
            messages = (*messages, f"[godot-dissect] engine died on this case: {reason}")
            if kind == "e":
                error = "timeout" if proc.timed_out else "crash"
                enc_done[index] = EncodeResult(name=names[index], error=error, messages=messages)
            else:
                dec_done[index] = DecodeResult(index=index, ok=False, error=None, crashed=True, messages=messages)
            crashes += 1
            if len(enc_done) == len(enc) and len(dec_done) == len(dec):
                return finish()
            if crashes > max_crashes:
                raise EngineCrashed(f"{self.name}: {crashes} cases crashed the engine; giving up", finish())
