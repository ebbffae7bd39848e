"""Run a Godot 4 project (a .pck) in the official 4.6 web export template inside headless Chromium.

    res = run_in_chromium(pck_bytes, timeout=90)   # -> PageResult(kind, payload, lines, ...)

The page (capture.html), the template's index.js/index.wasm (from godot_dissect.engines'
cache, ``web_engine_dir()``) and the pck are served by a loopback HTTP server on an ephemeral port;
Chromium runs headless with a fresh profile, in its own session so that exactly the processes we
started can be killed.  The page POSTs every line the engine printed to /result when the engine
exits (``OUT ...`` = stdout, ``ERR ...`` = stderr, ``EXIT n``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--disable-default-apps", "--mute-audio", "--no-default-browser-check",
]


@dataclass
class PageResult:
    kind: str  # "exit" | "timeout" | "script_error" | "error" | "no_result"
    payload: object
    lines: list[str] = field(default_factory=list)
    page_ms: float = 0.0
    wall_s: float = 0.0
    chromium_log: str = ""

    @property
    def out(self) -> list[str]:
        return [ln[4:] for ln in self.lines if ln.startswith("OUT ")]

    @property
    def err(self) -> list[str]:
        return [ln[4:] for ln in self.lines if ln.startswith("ERR ")]


def find_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def run_in_chromium(pck: bytes, engine_dir: Path, *, timeout: float = 90.0, chromium: str | None = None,
                    live_log: Path | None = None) -> PageResult:
    chromium = chromium or find_chromium()
    if chromium is None:
        raise RuntimeError("chromium not found (apt-get install -y chromium)")
    files = {
        "/capture.html": ((HERE / "capture.html").read_bytes(), "text/html; charset=utf-8"),
        "/index.js": ((engine_dir / "index.js").read_bytes(), "text/javascript"),
        "/index.wasm": ((engine_dir / "index.wasm").read_bytes(), "application/wasm"),
        "/game.pck": (pck, "application/octet-stream"),
    }
    result: dict = {}
    done = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt: str, *args: object) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802
            f = files.get(urlsplit(self.path).path)
            if f is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body, ctype = f
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(204)
            self.end_headers()
            path = urlsplit(self.path).path
            if path == "/log" and live_log is not None:
                with live_log.open("ab") as fh:
                    fh.write(body + b"\n")
            elif path == "/result" and not done.is_set():
                result.update(json.loads(body))
                done.set()

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    page_timeout_ms = int(timeout * 1000) - 3000
    url = f"http://127.0.0.1:{port}/capture.html?pck=game.pck&timeout={page_timeout_ms}"
    if live_log:
        url += "&live=1"
    profile = tempfile.mkdtemp(prefix="gdx-chromium-")
    log_path = Path(profile + ".log")
    t0 = time.monotonic()
    with log_path.open("wb") as log:
        proc = subprocess.Popen([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", url],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            ok = done.wait(timeout)
        finally:
            _stop(proc)
            srv.shutdown()
            srv.server_close()
    wall = time.monotonic() - t0
    chromium_log = log_path.read_text(encoding="utf-8", errors="replace")
    log_path.unlink(missing_ok=True)
    shutil.rmtree(profile, ignore_errors=True)
    if not ok:
        return PageResult("no_result", None, wall_s=wall, chromium_log=chromium_log)
    return PageResult(result.get("kind", "?"), result.get("payload"), list(result.get("lines", [])),
                      float(result.get("ms") or 0), wall, chromium_log)


def _stop(proc: subprocess.Popen) -> None:
    """Stop the Chromium we started: its own process group (start_new_session), by its pid."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    # helpers that outlived the browser process (same group)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
