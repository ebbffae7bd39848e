"""The spec's ENet channel maps (``spec.multiplayer.ENET_CHANNELS``: channel and ENet command per
transfer mode) against what real Godot 3.2.3 peers sent: every golden line of the real ENet
captures records the sender's transfer mode and channel (engine prints) and the ENet command and
channel the packet travelled in (read from the pcap)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from godot_dissect.spec import enet as E
from godot_dissect.spec import multiplayer as M

CAPTURES = Path(__file__).resolve().parent.parent / "captures"
REAL_GODOT3 = ("godot3-enet-multiplayer", "godot3-enet-compressed")


def test_every_send_names_enet_commands_and_channels() -> None:
    for cmap in M.ENET_CHANNELS.values():
        assert set(cmap.sends) == set(M.TRANSFER_MODES.values())
        names = {c.name for c in cmap.channels}
        for send in cmap.sends.values():
            assert send.channel in names
            assert E.COMMANDS_BY_NAME[send.command].delivery is not None
            assert E.COMMANDS_BY_NAME[send.fragment].fragment_key is not None


@pytest.mark.parametrize("name", REAL_GODOT3)
def test_godot3_sends_as_the_spec_says(name: str) -> None:
    cmap = M.ENET_CHANNELS[3]
    lines = [json.loads(line) for line in (CAPTURES / f"{name}.golden.jsonl").open()]
    checked = set()
    for g in lines:
        mode = g.get("transfer")
        if mode is None:  # SIMPLIFY/CONFIRM and peer messages: no transfer mode printed
            continue
        send = cmap.sends[mode]
        want = send.fragment if g.get("enet_fragments") else send.command
        assert (g["enet_command"], g["enet_channel"]) == \
            (want, cmap.enet_channel(g.get("transfer_channel") or 0, mode)), g["seq"]
        checked.add((mode, want))
    assert {m for m, _ in checked} == set(M.TRANSFER_MODES.values())  # every mode was seen on the wire
