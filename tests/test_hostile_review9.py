"""Review of the Lua plugin's reuse of earlier readings (ENet tables, multiplayer readings and memos, Variant
plans): a hand-built capture through tshark with the plugin, its values against the Python reader's."""

from __future__ import annotations

from pathlib import Path

from godot_dissect.codec import encode
from godot_dissect.fuzz.hostile import CLIENT, SERVER
from godot_dissect.fuzz.pcapout import PcapWriter
from godot_dissect.pcap.reader import read_pcap

from .test_lua import tshark


def _flood_then_steady(path: Path) -> None:
    """300 Godot 4 Dictionaries of shapes never repeated (their key names differ), then 40 of one shape with
    values of their own: the plugin stops recording plans during the flood (plans that are never replayed
    cost their recording) and must take them up again and show every value of the steady part."""
    w = PcapWriter(path)
    t = 0.0
    for i in range(300):
        w.udp(t, CLIENT, SERVER, encode({f"k{i}_{j}": [j, "x" * (1 + i % 7)] for j in range(1 + i % 5)}, "godot4"))
        t += 1e-3
    for i in range(40):
        w.udp(t, CLIENT, SERVER, encode({"id": i * 7 - 100, "name": f"p{i:02d}", "pos": i * 0.5}, "godot4"))
        t += 1e-3
    w.close()


def _leaves(v: object, into: tuple[list[str], list[str], list[float]]) -> tuple[list[str], list[str], list[float]]:
    """The ints (as text), Strings and floats of a decoded value, in the order the tree shows them."""
    if isinstance(v, dict):
        for x in v.values():
            _leaves(x, into)
    elif isinstance(v, list):
        for x in v:
            _leaves(x, into)
    elif isinstance(v, int) and not isinstance(v, bool):
        into[0].append(str(v))
    elif isinstance(v, float):
        into[2].append(v)
    elif isinstance(v, str):
        into[1].append(v)
    return into


def test_values_after_a_flood_of_distinct_shapes(tmp_path: Path) -> None:
    """Every int, String and float the tree shows equals the Python reader's, frame by frame, through the
    flood and the steady part after it; and each frame's Info is the same with and without a tree."""
    pcap = tmp_path / "flood.pcap"
    _flood_then_steady(pcap)
    expected = {r.frame: _leaves(r.value, ([], [], [])) for r in read_pcap(str(pcap)) if r.error is None}
    assert len(expected) == 340
    out = tshark(pcap, "-T", "fields", "-E", "separator=|", "-E", "occurrence=a", "-E", "aggregator=;",
                 "-e", "frame.number", "-e", "godot.int", "-e", "godot.string", "-e", "godot.float",
                 "-o", "godot.max_depth:8")
    seen = 0
    for line in out.splitlines():
        number, ints, strings, floats = line.split("|")
        want_ints, want_strings, want_floats = expected[int(number)]
        assert (ints.split(";") if ints else []) == want_ints, number
        assert (strings.split(";") if strings else []) == want_strings, number
        assert [float(x) for x in floats.split(";") if x] == want_floats, number
        seen += 1
    assert seen == 340
    listed = tshark(pcap).splitlines()
    # (-P -V: each frame's summary line, then its tree; the summary lines are the ones led by the frame number)
    treed = [line for line in tshark(pcap, "-P", "-V").splitlines()
             if "Godot" in line and line.split()[:1] and line.split()[0].isdigit()]
    assert [line for line in listed if "Godot" in line] == treed
    assert len(treed) == 340
