"""Run one input through every reader as a separate process and measure it: ``godot-dissect read``
in each output format, the scapy layers, tshark with the generated Lua plugin, and ``tscn.load``.

A run is clean when the process exits 0 (or 2, the CLI's "clean error" exit, with a one-line
message), prints no Python traceback and no Lua error, and stays inside the time and peak-RSS
bounds the caller states. Peak RSS is the child's own (``wait4``), not the harness's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

#: output formats of ``read`` a hostile input goes through
READ_FORMATS: tuple[tuple[str, ...], ...] = ((), ("-V",), ("-f", "json"), ("-f", "jsonl"))
#: exits that count as clean: 0, and 2 (the CLI's clear error, e.g. a cut capture)
CLEAN_EXITS = (0, 2)
#: signs of a crash in stderr or stdout
CRASH_MARKS = ("Traceback (most recent call last)", "Lua Error", "Lua:", "lua_script", "Segmentation fault",
               "RecursionError", "MemoryError")

_SCAPY = """
import sys
from scapy.all import IP, UDP, TCP, Raw, PcapReader
import godot_dissect.scapy as G
n = 0
for pkt in PcapReader(sys.argv[1]):
    pkt.show(dump=True)
    payload = bytes(pkt[UDP].payload) if UDP in pkt else b""
    if payload:
        for d in ("godot3", "godot4"):
            G.GodotVariant(payload, dialect=d).show(dump=True)
    n += 1
print(n, "packets")
"""

_TSCN = """
import sys
from godot_dissect import tscn
try:
    scene = tscn.load(sys.argv[1])
except ValueError as e:
    print("error:", e)
    sys.exit(2)
print(len(scene.sections), "sections")
"""


@dataclass
class Outcome:
    """What one process did with one input."""

    tool: str
    rc: int
    seconds: float
    rss_mb: float
    stdout_bytes: int
    crash: str | None  # the first crash mark found, or why the exit is not clean

    @property
    def clean(self) -> bool:
        return self.crash is None


def _run(tool: str, argv: list[str], timeout: float, env: dict[str, str] | None = None) -> Outcome:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        deadline = start + timeout
        status, usage = 0, None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.005)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read().decode("utf-8", "replace")
    rc = proc.returncode
    crash = None
    if seconds > timeout:
        crash = f"timed out after {timeout:g} s"
    elif rc not in CLEAN_EXITS:
        crash = f"exit {rc}: {stderr.strip()[-300:]}"
    else:
        text = stderr + stdout[-4096:].decode("utf-8", "replace") if tool != "tshark" else stderr
        if tool == "tshark":
            text += stdout.decode("utf-8", "replace") if b"Lua" in stdout else ""
        crash = next((m for m in CRASH_MARKS if m in text), None)
        if crash:
            at = text.index(crash)
            crash = text[at:at + 300]
        elif rc == 2 and tool.startswith("read") and len(stderr.strip().splitlines()) != 1:
            crash = f"exit 2 without a one-line error: {stderr[-300:]}"
    rss = usage.ru_maxrss / 1024 if usage is not None else 0.0  # ru_maxrss is KB on Linux
    return Outcome(tool, rc, seconds, rss, len(stdout), crash)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_read(path: Path, args: tuple[str, ...] = (), fmt: tuple[str, ...] = (), timeout: float = 120) -> Outcome:
    argv = [sys.executable, "-m", "godot_dissect", "read", *args, *fmt, str(path)]
    return _run("read " + " ".join(fmt or ("text",)), argv, timeout, _env())


def run_scapy(path: Path, timeout: float = 120) -> Outcome:
    return _run("scapy", [sys.executable, "-c", _SCAPY, str(path)], timeout, _env())


def run_tscn(path: Path, timeout: float = 120) -> Outcome:
    return _run("tscn", [sys.executable, "-c", _TSCN, str(path)], timeout, _env())


def lua_script() -> Path:
    return Path(__file__).resolve().parents[2] / "lua" / "godot.lua"


def run_tshark(path: Path, timeout: float = 300, extra: tuple[str, ...] = ()) -> Outcome:
    """tshark -V with the plugin (the whole tree, so every field is dissected)."""
    argv = ["tshark", "-n", "-X", f"lua_script:{lua_script()}", "-r", str(path), "-V", *extra]
    return _run("tshark", argv, timeout)
