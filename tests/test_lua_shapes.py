"""The packet list (tshark without a tree) reuses what it found for a message of a shape it read before,
and a tree replays the items of a message of a shape it showed before: messages of that shape with
one byte changed, anywhere, must still be told apart. Real engine bytes (the committed Godot 3.2.3
game state and the Godot 4.6 Dictionaries and Arrays of a committed capture), each byte in turn set
to 0x00, 0x41, 0x80, 0xFF and to itself + 1, each mutant after the message itself (so that the mutant
meets its shape): the Info column without a tree equals the one with a tree, the tree equals the one
of the mutant read through (after a message of its length of another shape), and the Info column
says Malformed exactly where the Python reader reports an error."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from godot_dissect.codec import encode
from godot_dissect.pcap.reader import read_pcap

from .resegment import _PcapWriter
from .test_lua import CAPTURES, LUA, tshark

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")

PORTS = ("-o", "godot.udp_ports:4242")


def _bases(dialect: str) -> list[bytes]:
    if dialect == "godot3":
        return [(CAPTURES / "samples" / "godot3-game-state.bin").read_bytes()]
    # Godot 4.6's largest Dictionaries and Arrays of the put_var capture below 1 KB, one of each length
    by_len: dict[int, bytes] = {}
    for r in read_pcap(str(CAPTURES / "godot4-websocket-put-var.pcapng")):
        if r.kind == "variant" and r.raw[0] in (27, 28) and 200 < len(r.raw) < 1024:
            by_len.setdefault(len(r.raw), r.raw)
    assert len(by_len) >= 3
    return list(by_len.values())


def _mutants(base: bytes) -> list[bytes]:
    out = []
    for i in range(len(base)):
        for b in {0x00, 0x41, 0x80, 0xFF, (base[i] + 1) % 256} - {base[i]}:
            out.append(base[:i] + bytes([b]) + base[i + 1:])
    return out


def _other_shape(length: int, dialect: str) -> bytes:
    """A valid message of `length` bytes of a shape no mutant has: an Array of one String of non-ASCII
    text (kept byte for byte in a shape). The message after it, of the same length, is read through."""
    m = encode(["é" * ((length - 16) // 2)], dialect)
    assert len(m) == length
    return m


def _write_pairs(pcap: Path, firsts: list[bytes], mutants: list[bytes]) -> None:
    w = _PcapWriter(str(pcap))
    for first, m in zip(firsts, mutants, strict=True):
        w.udp("127.0.0.1", 5000, "127.0.0.1", 4242, first)
        w.udp("127.0.0.1", 5000, "127.0.0.1", 4242, m)
    w.close()


def _godot_pdml(pcap: Path, *args: str) -> dict[int, bytes]:
    """frame number -> the godot protocol of that frame in ``-T pdml``, every field with its attributes."""
    out = {}
    root = ET.fromstring(tshark(pcap, "-T", "pdml", *args))
    for number, packet in enumerate(root.iter("packet"), 1):
        out[number] = b"".join(ET.tostring(p) for p in packet.findall("proto") if p.get("name") == "godot")
    return out


def _info_without_tree(pcap: Path, *args: str) -> dict[int, str]:
    """frame -> Info column of plain tshark (no tree: no -V, -T, -Y or -e)."""
    r = subprocess.run(["tshark", "-n", "-X", f"lua_script:{LUA}", "-r", str(pcap), "-o",
                        'gui.column.format:"No.","%m","Info","%i"', *args],
                       capture_output=True, text=True, errors="replace", timeout=600)
    assert r.returncode == 0 and "Lua" not in r.stderr, r.stderr
    out = {}
    for line in r.stdout.splitlines():
        number, _, info = line.strip().partition(" ")
        out[int(number)] = info.strip()
    return out


def _info_with_tree(pcap: Path, *args: str) -> dict[int, str]:
    out = {}
    for line in tshark(pcap, *args, "-T", "fields", "-e", "frame.number", "-e", "_ws.col.Info").splitlines():
        number, _, info = line.partition("\t")
        out[int(number)] = info.strip()
    return out


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_one_byte_off_a_known_shape(dialect: str, tmp_path: Path) -> None:
    pcap = tmp_path / "mutants.pcap"
    w = _PcapWriter(str(pcap))
    n = 0
    for base in _bases(dialect):
        for m in _mutants(base):
            w.udp("127.0.0.1", 5000, "127.0.0.1", 4242, base)
            w.udp("127.0.0.1", 5000, "127.0.0.1", 4242, m)
            n += 2
    w.close()
    args = (*PORTS, "-o", f"godot.dialect:{dialect}")
    listed = _info_without_tree(pcap, *args)
    assert len(listed) == n
    assert listed == _info_with_tree(pcap, *args)
    # each mutant read through (after a message of its length of another shape), with a tree
    mutants = [m for base in _bases(dialect) for m in _mutants(base)]
    after_other = tmp_path / "after_other.pcap"
    _write_pairs(after_other, [_other_shape(len(m), dialect) for m in mutants], mutants)
    read = _info_with_tree(after_other, *args)
    assert [listed[f] for f in range(2, n + 1, 2)] == [read[f] for f in range(2, n + 1, 2)]
    py_errors = {r.frame for r in read_pcap(str(pcap), dialect=dialect, ports=[4242]) if r.kind == "error"}
    assert 100 < len(py_errors) < n // 2  # many mutants are malformed, many are not
    assert {f for f, info in listed.items() if info.startswith("Malformed")} == py_errors


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_tree_of_a_known_shape(dialect: str, tmp_path: Path) -> None:
    """Each mutant after its base (the tree of a known shape, replayed) has the tree, to every field,
    position and hidden item, that it has after a message of another shape (read through)."""
    mutants, bases = [], []
    for base in _bases(dialect):
        for m in _mutants(base):
            mutants.append(m)
            bases.append(base)
    after_base, after_other = tmp_path / "after_base.pcap", tmp_path / "after_other.pcap"
    _write_pairs(after_base, bases, mutants)
    _write_pairs(after_other, [_other_shape(len(m), dialect) for m in mutants], mutants)
    args = (*PORTS, "-o", f"godot.dialect:{dialect}")
    replayed, read = _godot_pdml(after_base, *args), _godot_pdml(after_other, *args)
    assert len(replayed) == len(read) == 2 * len(mutants)
    assert all(read[f] for f in read)  # (every message shown)
    different = [f for f in range(2, len(read) + 1, 2) if replayed[f] != read[f]]
    assert different == [], (different[:5], replayed[different[0]][:2000], read[different[0]][:2000])


def test_more_shapes_than_kept_and_long_messages(tmp_path: Path) -> None:
    """Arrays of 1 to 300 ints and of 600 (past the longest message given a shape), each twice and then
    with its last element's type id out of range: more shapes than are kept, so the plugin starts
    again and again; without a tree as with one, Malformed exactly where the Python reader errs."""
    pcap = tmp_path / "lengths.pcap"
    w = _PcapWriter(str(pcap))
    n = 0
    for k in [*range(1, 301), 600]:
        good = encode(list(range(k)), "godot3")
        bad = good[:-8] + bytes([0xEE]) + good[-7:]
        for m in (good, good, bad):
            w.udp("127.0.0.1", 5000, "127.0.0.1", 4242, m)
            n += 1
    w.close()
    args = (*PORTS, "-o", "godot.dialect:godot3")
    listed = _info_without_tree(pcap, *args)
    assert len(listed) == n
    assert listed == _info_with_tree(pcap, *args)
    py_errors = {r.frame for r in read_pcap(str(pcap), dialect="godot3", ports=[4242]) if r.kind == "error"}
    assert len(py_errors) == n // 3
    assert {f for f, info in listed.items() if info.startswith("Malformed")} == py_errors
