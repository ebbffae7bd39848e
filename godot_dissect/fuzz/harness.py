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
READ_FORMATS: tuple[tuple[str, ...], ...] = ((), ("-V",), ("-T", "json"), ("-T", "jsonl"))
#: exits that count as clean: 0, and 2 (the CLI's clear error, e.g. a cut capture)
CLEAN_EXITS = (0, 2)
#: signs of a crash in stderr or stdout
CRASH_MARKS = ("Traceback (most recent call last)", "Lua Error", "Lua:", "lua_script", "Segmentation fault",
               "RecursionError", "MemoryError")

_SCAPY = """
import sys
from scapy.all import UDP, PcapReader
import godot_dissect.scapy as G


def value(layer):
    try:
        layer.to_value()
    except ValueError:  # a DecodeError naming offset and reason: malformed bytes, a clean answer
        return 1
    return 0


n = bad = 0
for pkt in PcapReader(sys.argv[1]):  # every layer is dissected as the packet is read
    bad += sum(value(layer) for layer in pkt.iterpayloads() if hasattr(layer, "to_value"))
    payload = bytes(pkt[UDP].payload) if UDP in pkt else b""
    if payload:
        bad += sum(value(G.GodotVariant(payload, dialect=d)) for d in ("godot3", "godot4"))
    n += 1
print(n, "packets,", bad, "malformed values")
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
    error_records: int = 0  # records of kind "error" (read --format json/jsonl)
    cpu_seconds: float = 0.0  # the child's user + system time: what scaling checks compare (other jobs on
    # the machine stretch wall time, not this)
    system_seconds: float = 0.0  # the part of cpu_seconds spent in the kernel (page faults, reclaim, writes)

    @property
    def clean(self) -> bool:
        return self.crash is None


# Peak RSS: Linux keeps a process's RSS high-water mark across fork and exec, so a child forked
# from a big harness would report the harness's size. A small process in between (this wrapper,
# started fresh) forks the real child, whose mark then starts from the wrapper's few MB, and
# writes the child's wait4 figures to a file.
_WRAPPER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime} {usage.ru_stime}")
"""


def _run(tool: str, argv: list[str], timeout: float, env: dict[str, str] | None = None) -> Outcome:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".rusage") as report:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-S", "-c", _WRAPPER, report.name, *argv], stdout=out, stderr=err,
                                env=env, start_new_session=True)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
        seconds = time.perf_counter() - start
        figures = report.read().split()
        rc, rss_kb, cpu, sys_cpu = ((int(figures[0]), int(figures[1]), float(figures[2]), float(figures[3]))
                                    if len(figures) == 4 else (-9, 0, 0.0, 0.0))
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read().decode("utf-8", "replace")
    crash = None
    if seconds > timeout:
        crash = f"timed out after {timeout:g} s"
    elif rc not in CLEAN_EXITS:
        crash = f"exit {rc}: {stderr.strip()[-300:]}"
    else:
        # a Python traceback goes to stderr (stdout holds decoded values, which may say anything);
        # a Lua error shows in tshark's tree on stdout
        text = stderr
        if tool == "tshark" and b"Lua Error" in stdout:
            text += stdout.decode("utf-8", "replace")
        crash = next((m for m in CRASH_MARKS if m in text), None)
        if crash:
            at = text.index(crash)
            crash = text[at:at + 300]
        elif rc == 2 and tool.startswith("read") and len(stderr.strip().splitlines()) != 1:
            crash = f"exit 2 without a one-line error: {stderr[-300:]}"
    errors = stdout.count(b'"kind": "error"')
    # ru_maxrss is KB on Linux
    return Outcome(tool, rc, seconds, rss_kb / 1024, len(stdout), crash, errors, cpu, sys_cpu)


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


def run_tshark(path: Path, timeout: float = 300, extra: tuple[str, ...] = (), tree: bool = True) -> Outcome:
    """tshark -V with the plugin (the whole tree, so every field is dissected; ``tree`` False: the summary
    lines only, as a plain ``tshark -r``)."""
    argv = ["tshark", "-n", "-X", f"lua_script:{lua_script()}", "-r", str(path), *(("-V",) if tree else ()), *extra]
    return _run("tshark", argv, timeout)
