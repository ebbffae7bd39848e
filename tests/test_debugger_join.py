"""A capture that joins a Godot 3 remote-debugger stream part-way (the capture started after the game
connected to the editor): a String argument of a message whose start was missed, followed by an int,
once read as the name and argument count of a new message, which then swallowed the rest of the
direction (1280 arguments claimed: every later message lost, in the reader and in the Lua plugin).
A String starts a message only when it is a debugger message name (``spec.debugger.is_godot3_message_name``).

The real Godot 3.2.3 debugger capture, its first frames dropped by editcap: every debugger message of
the game that starts after the cut is read as in the whole capture, by the reader and by the plugin."""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from godot_dissect.fuzz.harness import lua_script
from godot_dissect.pcap.reader import read_pcap

CAPTURE = Path(__file__).resolve().parent.parent / "captures" / "godot3-debugger.pcapng"
GAME_PORT = 6007  # the editor listens; the game's messages go to it
FIRST_WITHIN = 20  # frames after the cut by which a message is read (this capture sends one every few)


def _game_messages(path: Path) -> list[tuple[int, str, bytes, int]]:
    return [(r.frame, r.message, r.raw, len(r.value)) for r in read_pcap(str(path))
            if r.kind == "debugger" and r.dport == GAME_PORT]


@pytest.mark.skipif(shutil.which("editcap") is None, reason="editcap (Wireshark) not installed")
@pytest.mark.parametrize("drop", [7, 20, 33])
def test_joined_part_way_reads_every_later_message(drop: int, tmp_path: Path) -> None:
    cut = tmp_path / "joined.pcapng"
    subprocess.run(["editcap", "-r", str(CAPTURE), str(cut), f"{drop + 1}-1000000"], check=True)
    whole = _game_messages(CAPTURE)
    joined = _game_messages(cut)
    # the message in progress at the cut is lost; from the first one read on, every later one is read
    assert joined and joined[0][0] <= FIRST_WITHIN
    assert joined == [(f - drop, m, raw, n) for f, m, raw, n in whole if f - drop >= joined[0][0]]
    assert not [r.error for r in read_pcap(str(cut)) if r.kind == "error" and "never completed" in (r.error or "")]

    if shutil.which("tshark") is None:
        return
    out = subprocess.run(["tshark", "-n", "-r", str(cut), "-X", f"lua_script:{lua_script()}", "-2", "-T", "fields",
                          "-e", "frame.number", "-e", "tcp.dstport", "-e", "godot.debugger.argc",
                          "-Y", "godot.debugger.argc"], capture_output=True, text=True, check=True).stdout
    plugin: dict[int, list[int]] = defaultdict(list)
    for line in out.splitlines():
        frame, port, argcs = line.split("\t")
        if int(port) == GAME_PORT:
            plugin[int(frame)] += [int(a) for a in argcs.split(",")]
    reader: dict[int, list[int]] = defaultdict(list)
    for f, _, _, n in joined:
        reader[f].append(n)
    assert reader and {f: v for f, v in plugin.items() if f >= joined[0][0]} == reader
