"""A fuzz finding reads right: the README's run against the real Godot 3.2.3 TCP server, then

- ``read`` on its exchange/minimised pcapng with no options shows the killing message as a Godot 3
  error record (nesting depth), because the pcapng comment names dialect, framing, target and case;
- ``finding.json``'s replay command is complete (no placeholder, ``--cmd`` included), the run's summary
  prints it, and running it as written kills a fresh server (SIGSEGV) again;
- ``replay FOLDER`` with no ``--target`` goes to the recorded target.
"""

from __future__ import annotations

import json
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

from godot_dissect.fuzz.pcapout import COMMENT_TITLE, capture_hint

from .test_fuzz import ROOT, free_port, godot_server, needs_godot3


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "godot_dissect", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)


@needs_godot3
def test_readme_fuzz_run_then_read_and_replay_as_written(tmp_path: Path) -> None:
    port = free_port(socket.SOCK_STREAM)
    home = tmp_path / "home"
    home.mkdir()
    out = tmp_path / "findings"
    # the README's command (port and folders of this test)
    cmd = f"HOME={home} godot3-server --path tools/fuzz_targets -s tcp_server.gd --port={{port}}"
    run = cli("fuzz", "--target", f"tcp://127.0.0.1:{port}", "--dialect", "godot3", "--out", str(out), "--cmd", cmd)
    assert run.returncode == 1, run.stderr[-2000:]
    folder = out / "finding-001-crash"
    info = json.loads((folder / "finding.json").read_text())

    # the replay command: complete, printed by the summary, runnable as written
    replay = info["replay"]
    words = shlex.split(replay)
    assert words[:3] == ["godot-dissect", "replay", str(folder)] and "FOLDER" not in replay
    assert words[words.index("--cmd") + 1] == cmd and words[words.index("--target") + 1] == f"tcp://127.0.0.1:{port}"
    assert f"replay: {replay}" in run.stdout
    again = subprocess.run([sys.executable, "-m", "godot_dissect", *words[1:]], capture_output=True, text=True,
                           cwd=ROOT, timeout=300)
    assert again.returncode == 1 and "SIGSEGV" in again.stdout, again.stdout + again.stderr[-2000:]

    # read with no options: the killing message is a Godot 3 error record (depth), then the probe
    for name in ("exchange.pcapng", "minimised.pcapng"):
        pcap = folder / name
        hint = capture_hint(str(pcap))
        assert hint is not None and hint.dialect == "godot3" and hint.ports == (port,)
        r = cli("read", str(pcap), "--format", "jsonl")
        assert r.returncode == 0, r.stderr
        recs = [json.loads(line) for line in r.stdout.splitlines()]
        assert recs, f"{name}: no record"
        first = recs[0]
        assert (first["kind"], first["dialect"], first["dport"]) == ("error", "godot3", port)
        assert "nesting deeper than 1024 levels" in first["error"]
        assert recs[1]["kind"] == "variant" and recs[1]["text"] == '"godot-dissect-probe"'
        text = cli("read", str(pcap), "--evidence").stdout
        assert "godot-dissect comment" in text and "godot3 error [malformed]" in text
        # without the comment (classic pcap, as editcap writes it) the detection alone gets there too:
        # a reading that fails only on our depth limit counts as a full Godot 3 reading
        if shutil.which("editcap"):
            bare = tmp_path / f"{name}.pcap"
            subprocess.run(["editcap", "-F", "pcap", str(pcap), str(bare)], check=True, capture_output=True)
            assert capture_hint(str(bare)) is None
            plain = [json.loads(x) for x in cli("read", str(bare), "--format", "jsonl").stdout.splitlines()]
            assert [(r["kind"], r["dialect"], r.get("error")) for r in plain[:2]] == \
                [(r["kind"], r["dialect"], r.get("error")) for r in recs[:2]]
    # Wireshark's tools see the same comment
    capinfos = subprocess.run(["capinfos", str(folder / "exchange.pcapng")], capture_output=True, text=True)
    if capinfos.returncode == 0:
        assert COMMENT_TITLE in capinfos.stdout and "dialect: godot3" in capinfos.stdout

    # replay FOLDER with no --target: the recorded one
    with godot_server(tmp_path, "tcp_server.gd", port) as p:
        r = cli("replay", str(folder))
        assert r.returncode == 1 and "went down" in r.stdout, r.stdout + r.stderr[-2000:]
        assert p.wait(timeout=20) in (-signal.SIGSEGV, 128 + signal.SIGSEGV)
