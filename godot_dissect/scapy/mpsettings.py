"""Settings of the ENet and multiplayer layers, and which Godot major a conversation speaks.

Nothing on the wire says whether an ENet conversation is Godot 3 (``NetworkedMultiplayerENet``
+ ``MultiplayerAPI``) or Godot 4 (``ENetMultiplayerPeer`` + ``SceneMultiplayer``). The layers
decide, first match wins:

1. a port bound with a major: ``bind_godot_ports(enet=[7000], major=4)``;
2. ``conf.contribs["godot_multiplayer"]["major"] = 3`` (every conversation);
3. the conversation's CONNECT / VERIFY_CONNECT: its channelCount is Godot's fingerprint
   (``spec.enet.GODOT_MAJOR_BY_CHANNEL_COUNT``; remembered per UDP flow, so dissect in capture order);
4. the payload itself: a Godot 3 peer header followed by a MultiplayerAPI packet that the Godot 3
   decoder reads without error, else Godot 4 (remembered for the flow when it reads cleanly).

The other settings (``conf.contribs["godot_multiplayer"]``):

* ``compression``: the codec the hosts installed (``spec.enet.COMPRESSIONS``: ``range_coder``,
  ``zlib``, ``fastlz``, ``zstd``); compressed datagrams are then shown decompressed too
  (per port: ``bind_godot_ports(enet=[4280], compression="range_coder")``).
* ``checksum``: the hosts use ENet's checksum callback (Godot never does): a u32 after the header.
* ``enet3_header``: ``"3.2+"`` (8-byte peer header, the default) or ``"3.0-3.1"`` (12 bytes).
* ``confirm_form``: Godot 4 CONFIRM_PATH form, ``"id"`` (4.3+) or ``"path"`` (4.0-4.2); None
  chooses by size, as the engine's packets differ in length.

Field names: a spec name that is a Python keyword or an attribute of scapy's ``Packet`` gets a
trailing underscore (``command_``, ``time_``, ``name_``, ``from_``, ``sent_time_``).
"""

from __future__ import annotations

import keyword
from typing import Any

from scapy.config import conf
from scapy.packet import Packet

SETTINGS: dict[str, Any] = conf.contribs.setdefault("godot_multiplayer", {
    "major": None,
    "compression": None,
    "checksum": False,
    "enet3_header": "3.2+",
    "confirm_form": None,
})
#: ("udp" | "tcp", port) -> Godot major fixed by bind_godot_ports(..., major=N)
PORT_MAJORS: dict[tuple[str, int], int] = {}
#: UDP port -> ENet compression codec, from bind_godot_ports(enet=[...], compression=...)
PORT_COMPRESSION: dict[int, str] = {}


def scapy_name(name: str) -> str:
    """The scapy field name of a spec field (see the module docstring)."""
    if keyword.iskeyword(name) or hasattr(Packet, name):
        return name + "_"
    return name


def port_major(proto: str, sport: int | None, dport: int | None) -> int | None:
    if not PORT_MAJORS:
        return None
    return PORT_MAJORS.get((proto, sport or 0)) or PORT_MAJORS.get((proto, dport or 0))


def port_compression(sport: int | None, dport: int | None) -> str | None:
    return PORT_COMPRESSION.get(sport or 0) or PORT_COMPRESSION.get(dport or 0) or SETTINGS.get("compression")
