"""One decoded multiplayer message."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import DecodeError


@dataclass
class MpMessage:
    """A Godot multiplayer packet (or transport message) as the engine would understand it.

    ``kind``: rpc, rset, simplify_path, confirm_path, spawn, despawn, sync, sys, raw, peer, enet.
    ``command``: the engine's name (``REMOTE_CALL``, ``SYS``, ``SYSMSG_ADD_PEER``, ``PEER_ID`` ...).
    ``node``: the node path (resolved through the sender's path cache, or carried inline);
    ``node_id``: the id on the wire. ``method``: the method (3.x, or 4.x when the names are known)
    or property name; ``method_id``: the 4.x id. ``args``: RPC arguments; ``value``: the RSET value
    or other payload. ``fields``: everything else the packet carries (cache ids, md5, peer ids,
    relay target, transport header...). ``error``: "offset N: reason" when the engine would reject
    the packet; what was read before the error is kept.
    """

    kind: str
    command: str = ""
    node: str | None = None
    node_id: int | None = None
    method: str | None = None
    method_id: int | None = None
    args: list[Any] | None = None
    value: Any = None
    fields: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    error_offset: int | None = None
    raw: bytes = b""  # the Godot packet, transport header excluded
    peer: int | None = None  # the peer a peer/sys message is about, or the relay peer
    sender: int | None = None  # the peer id that sent it, when known
    #: the peer that executes it (a relayed packet: the final receiver, also on the leg to the server);
    #: None when unknown or when several peers do (a client's broadcast excluding the server)
    receiver: int | None = None
    #: the packet travels through the server: sender or receiver is not an end of this hop
    relayed: bool | None = None
    transfer: str | None = None  # "reliable" | "unreliable" | "unreliable_ordered" (spec TRANSFER_MODES)
    inner: MpMessage | None = None  # SYS RELAY: the relayed packet
    #: wire span (start, stop) of each argument inside ``raw`` (RPCs), for checking against engines
    arg_spans: list[tuple[int, int]] | None = None

    def fail(self, offset: int, reason: str) -> MpMessage:
        self.error_offset = offset
        self.error = f"offset {offset}: {reason}"
        return self


def decode_values(decode_one: Callable[..., tuple[Any, int]], data: bytes | memoryview, dialect: str, start: int,
                  end: int, count: int | None, label: str,
                  allow_objects: bool = True) -> tuple[list[Any], list[tuple[int, int]]]:
    """``count`` Variants one after another from ``start`` (or as many as the bytes up to ``end`` hold when
    ``count`` is None), each read by ``decode_one`` (plain or compressed); their values and spans. An error
    names the value (``label`` and its index) as the engine's "Size too small" check does."""
    out: list[Any] = []
    spans: list[tuple[int, int]] = []
    pos = start
    while (len(out) < count) if count is not None else (pos < end):
        if pos >= end:  # "Invalid packet received. Size too small."
            raise DecodeError(pos, f"{label} {len(out)} of {count}: no bytes left")
        try:
            v, used = decode_one(data, dialect, offset=pos, end=end, allow_objects=allow_objects)
        except DecodeError as e:
            raise DecodeError(e.offset, f"{label} {len(out)}: {e.reason}", e.path, e.code) from None
        out.append(v)
        spans.append((pos, pos + used))
        pos += used
    return out, spans
