"""Is a UDP payload ENet? Which Godot made the connection?"""

from __future__ import annotations

from ..spec import enet as spec
from .model import Command
from .parse import parse_datagram


def looks_like_enet(data: bytes, compression: str | None = None) -> bool:
    """True when the payload reads as an ENet datagram ENet itself could have sent: the commands
    fill it exactly, each with the flags ENet sends it with, control commands on the control
    channel, CONNECT values in the protocol's ranges. A compressed datagram is checked after
    decompressing it with ``compression`` (the hosts' codec; it is not on the wire), else False."""
    if len(data) < 2 + spec.COMMAND_HEADER_SIZE:
        return False
    dg = parse_datagram(data, compression)
    if (dg.compressed and compression is None) or dg.error is not None or not dg.commands:
        return False
    if len(dg.commands) > spec.MAX_PACKET_COMMANDS:
        return False
    for c in dg.commands:
        d = c.definition
        if d is None or c.flags not in d.sent_flags:
            return False
        if d.delivery is None and d.name != "ACKNOWLEDGE" and c.channel != spec.CONTROL_CHANNEL:
            return False
        if d.name in ("CONNECT", "VERIFY_CONNECT") and not (
                spec.MIN_MTU <= c.fields["mtu"] <= spec.MAX_MTU
                and spec.MIN_WINDOW_SIZE <= c.fields["window_size"] <= spec.MAX_WINDOW_SIZE):
            return False
    return True


def godot_major_from_connect(command: Command) -> int | None:
    """3 or 4 from a CONNECT / VERIFY_CONNECT channel count (Godot's defaults), else None."""
    if command.name not in ("CONNECT", "VERIFY_CONNECT"):
        return None
    return spec.GODOT_MAJOR_BY_CHANNEL_COUNT.get(command.fields.get("channel_count", -1))
