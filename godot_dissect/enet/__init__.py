"""ENet 1.3 (as bundled with Godot): parse datagrams, reassemble packets, build datagrams.

Layouts, numbers and limits come from ``godot_dissect.spec.enet``.
"""

from .build import (
    acknowledge,
    bandwidth_limit,
    build_command_bytes,
    build_datagram,
    command,
    connect,
    disconnect,
    fragments,
    ping,
    rebuild,
    send_fragment,
    send_reliable,
    send_unreliable,
    send_unsequenced,
    throttle_configure,
    verify_connect,
)
from .compression import CompressionError, compress, decompress
from .detect import godot_major_from_connect, looks_like_enet
from .model import Command, Datagram, EnetError
from .parse import parse_datagram
from .reassembly import EnetReassembler, Payload
from .sender import EnetSender

__all__ = [
    "Command", "CompressionError", "Datagram", "EnetError", "EnetReassembler", "EnetSender", "Payload", "acknowledge",
    "bandwidth_limit", "build_command_bytes", "build_datagram", "command", "compress", "connect", "decompress",
    "disconnect", "fragments", "godot_major_from_connect", "looks_like_enet", "parse_datagram", "ping", "rebuild",
    "send_fragment", "send_reliable", "send_unreliable", "send_unsequenced", "throttle_configure", "verify_connect",
]
