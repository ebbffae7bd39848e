"""Review findings on the paths changed this session (export of a folder, the Lua plugin's TCP conversations),
each against real bytes: the committed captures through the real CLI and the real pyarrow / DuckDB readers,
hand-built captures through tshark with the plugin and through the Python reader."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from godot_dissect.codec import encode
from godot_dissect.dataset.frames import to_pandas
from godot_dissect.fuzz.hostile import CLIENT, SERVER, _Tcp
from godot_dissect.fuzz.pcapout import PcapWriter
from godot_dissect.pcap.reader import read_pcap

from .test_lua import tshark

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


_REQUEST = (b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
_RESPONSE = (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")


def _upgrade(path: Path, first: int | None) -> None:
    """A WebSocket connection on the Godot TCP port: the client's request (its first `first` bytes in a
    segment of their own), the 101 answer, five binary frames of one Godot 4 Dictionary each."""
    w = PcapWriter(path)
    tcp = _Tcp(w, CLIENT, SERVER)
    for piece in ([_REQUEST] if first is None else [_REQUEST[:first], _REQUEST[first:]]):
        tcp.send(piece)
    tcp.send(_RESPONSE, c2s=False)
    for i in range(5):
        v = encode({"hp": i, "name": "bob"}, "godot4")
        tcp.send(bytes((0x82, len(v))) + v, c2s=False)  # FIN + binary, unmasked (server to client)
    tcp.close()
    w.close()


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
@pytest.mark.parametrize("first", [1, 2, 4])
def test_an_upgrade_request_whose_first_bytes_come_alone(first: int, tmp_path: Path) -> None:
    """The plugin told HTTP from a Godot stream by the first segment it saw: a request whose first 1-4 bytes
    ("G", "GE", "GET ") came in a segment of their own made the conversation a Godot stream, and every
    WebSocket message after the upgrade was '[N bytes skipped]' (one pass and -2) where the Python reader
    reads them all. Now the same messages as the request sent in one segment, in both passes."""
    whole, split = tmp_path / "whole.pcap", tmp_path / "split.pcap"
    _upgrade(whole, None)
    _upgrade(split, first)
    assert [r.kind for r in read_pcap(str(split), ports=[SERVER[1]])] == ["variant"] * 5
    ports = ("-o", f"godot.tcp_ports:{SERVER[1]}")
    for two in ((), ("-2",)):
        expected = _infos(whole, *ports, *two)
        assert len(expected) == 5 and all(i.startswith("Dictionary{hp, name}") for i in expected), expected
        assert _infos(split, *ports, *two) == expected


def _infos(pcap: Path, *args: str) -> list[str]:
    out = tshark(pcap, *args, "-Y", "godot", "-T", "fields", "-e", "_ws.col.Info")
    return [line for line in out.splitlines() if line]


def test_a_subfolder_that_cannot_be_listed_is_reported(tmp_path: Path) -> None:
    """A capture in a folder too deep to list (its path longer than the system's PATH_MAX: os.walk's listing
    fails with ENAMETOOLONG) beside one that exports: the folder is reported by name and the exit status
    says so. Before, a listing error was reported only when the whole folder gave no capture: the deep
    capture was left out without a word and the export said '1 of 1 captures exported'."""
    studio = tmp_path / "studio"
    studio.mkdir()
    (studio / "top.pcapng").write_bytes((CAPTURES / "godot3-tcp-stream.pcapng").read_bytes())
    fd = os.open(studio, os.O_RDONLY)
    try:
        for _ in range(25):  # 25 x 201 bytes: past Linux's PATH_MAX (4096)
            os.mkdir("d" * 200, dir_fd=fd)
            inner = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        out = os.open("deep.pcapng", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, (CAPTURES / "godot3-tcp-stream.pcapng").read_bytes())
        os.close(out)
    finally:
        os.close(fd)
    r = _cli("export", str(studio), "-o", str(tmp_path / "out"), "--workers", "1")
    assert r.returncode == 1
    assert "1 of 2 captures exported" in r.stderr and "cannot list the folder: File name too long" in r.stderr
