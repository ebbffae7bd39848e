"""Review findings on the paths changed this session (export of a folder, ...), each against real bytes:
the committed captures, through the real CLI and the real pyarrow / DuckDB readers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from godot_dissect.dataset.frames import to_pandas
from godot_dissect.pcap.reader import read_pcap

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "captures"


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "godot_dissect", *args], capture_output=True, text=True,
                          errors="replace", env=env, timeout=300)


@pytest.mark.skipif(sys.platform != "linux", reason="a file name of bytes that are not UTF-8 (Linux file systems)")
@pytest.mark.parametrize("fmt", ["parquet", "jsonl", "csv"])
def test_a_capture_named_with_bytes_that_are_not_utf8(fmt: str, tmp_path: Path) -> None:
    """A folder holding one capture whose file name is not UTF-8 (b'bad\\xff.pcapng': os.fsdecode gives a
    surrogate) and one with a newline in its name: every capture is exported (the name's odd byte as
    '\\xff') and pandas and DuckDB read the dataset. Before, quoting the partition's name raised
    UnicodeEncodeError and the whole export stopped with nothing written (exit status 2)."""
    folder = tmp_path / "captures"
    (folder / "sub").mkdir(parents=True)
    sources = {b"bad\xff.pcapng": CAPTURES / "godot3-udp-all-types.pcapng",
               b"sub/new\nline.pcapng": CAPTURES / "godot3-tcp-stream.pcapng",
               b"ok.pcapng": CAPTURES / "godot4-websocket-put-var.pcapng"}
    for name, src in sources.items():
        with open(os.path.join(os.fsencode(folder), name), "wb") as f:
            f.write(src.read_bytes())
    out = tmp_path / "out"
    r = _cli("export", str(folder), "-o", str(out), "-f", fmt, "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert "3 of 3 captures exported" in r.stderr
    expected = {"bad\\xff.pcapng": sum(1 for _ in read_pcap(str(sources[b"bad\xff.pcapng"]))),
                "new\nline.pcapng": sum(1 for _ in read_pcap(str(sources[b"sub/new\nline.pcapng"]))),
                "ok.pcapng": sum(1 for _ in read_pcap(str(sources[b"ok.pcapng"])))}
    assert all(expected.values())
    assert to_pandas(str(out)).groupby("capture").size().to_dict() == expected
    if fmt == "parquet":
        counts = dict(duckdb.sql(f"SELECT capture, count(*) FROM read_parquet('{out}/*/*.parquet', "
                                 "hive_partitioning=true) GROUP BY capture").fetchall())
        assert counts == expected
