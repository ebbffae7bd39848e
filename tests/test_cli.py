"""The command line on bundled engine output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "captures" / "samples" / "godot3-game-state.bin"


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "godot_dissect.cli", *args], input=stdin,
                          capture_output=True, cwd=ROOT, timeout=60)


def test_decode_sample_prints_what_the_engine_printed() -> None:
    # captures/samples/*.var2str.txt is Godot 3.2.3's own var2str of the same value
    r = run("decode", "--dialect", "godot3", "-", stdin=SAMPLE.read_bytes())
    assert r.returncode == 0, r.stderr
    expected = (ROOT / "captures" / "samples" / "godot3-game-state.var2str.txt").read_text()
    assert r.stdout.decode().rstrip("\n") == expected.rstrip("\n")


def test_encode_then_decode_json_round_trip() -> None:
    r = run("encode", "--dialect", "godot4", '{"a": Vector2i(1, -2), "b": [&"x", 1.5]}')
    assert r.returncode == 0, r.stderr
    hexdata = r.stdout.decode().strip()
    r2 = run("decode", "--dialect", "godot4", "--format", "json", hexdata)
    out = json.loads(r2.stdout)
    assert out["used"] * 2 == len(hexdata)
    assert out["value"]["items"][0] == ["a", {"type": "Vector2i", "value": [1, -2]}]


def test_decode_error_names_offset_and_exits_nonzero() -> None:
    r = run("decode", "1c000000 02000000 02000000 01000000 04000000 01000000 780000")
    assert r.returncode == 1
    assert b"offset 20 at [1]" in r.stderr and b"ERR_FILE_EOF" in r.stderr


def test_encode_raw_length_prefixed() -> None:
    r = run("encode", "--dialect", "godot3", "--format", "raw", "--length-prefixed", '"abc"')
    assert r.stdout == bytes.fromhex("0c000000 04000000 03000000 61626300")


def test_readme_python_example_runs_as_written(monkeypatch, capsys) -> None:  # noqa: ANN001
    """The README's Python API block, executed as it is written (from the repository root)."""
    import re

    monkeypatch.chdir(ROOT)
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Python API", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks
    ns: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), ns)  # noqa: S102 - our own documentation
    assert ns["used"] == len(ns["data"])  # what the comment says: the prefix is the whole message
    golden = json.loads((ROOT / "captures" / "godot3-udp-all-types.golden.jsonl").read_text().splitlines()[0])
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"1 variant {golden['type_name']} {golden['text']}"
