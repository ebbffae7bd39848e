"""Godot 3 MultiplayerAPI packets: bytes -> MpMessage (no cache state) and the builders back.

The layouts are ``spec.multiplayer.GODOT3``; the arguments are standard Variants read with the
Godot 3 codec.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ..codec import decode_prefix, encode
from ..errors import DecodeError
from ..spec.multiplayer import GODOT3
from .layout import LayoutError, Scope
from .message import MpMessage, decode_values
from .packets import read_packet, write_packet

DIALECT = "godot3"


def decode_packet(data: bytes | memoryview, dialect: str = DIALECT, *, allow_objects: bool = True) -> MpMessage:
    """One MultiplayerAPI packet (after any transport header). Node ids stay ids here."""
    raw = bytes(data)
    msg = MpMessage(kind="error", raw=raw)
    try:
        command, _form, scope = read_packet(GODOT3, raw)
    except LayoutError as e:
        partial = getattr(e, "partial", None)
        if partial is not None:
            command, _form, scope = partial
            msg.kind, msg.command = command.kind, command.name
            # what was read before the layout error; a check of it failing too (a SPAWN's empty name) leaves
            # the layout's error the one reported, as the Lua dissector reports it
            with contextlib.suppress(LayoutError, DecodeError):
                _fill(msg, command.name, scope, raw, dialect, allow_objects, partial=True)
        return msg.fail(e.offset, e.reason)
    msg.kind, msg.command = command.kind, command.name
    try:
        _fill(msg, command.name, scope, raw, dialect, allow_objects)
    except DecodeError as e:
        msg.fail(e.offset, e.reason + (f" at {e.path}" if e.path else ""))
    return msg


def _fill(msg: MpMessage, name: str, scope: Scope, raw: bytes, dialect: str, allow_objects: bool,
          partial: bool = False) -> None:
    v = scope.values
    if name in ("REMOTE_CALL", "REMOTE_SET"):
        if "target" in v:
            if v["inline_path"]:
                msg.fields["path_offset"] = v["path_offset"]
            else:
                msg.node_id = v["target"]
        if "node_path" in v:
            msg.node = v["node_path"]
        msg.method = v.get("method", v.get("property"))
        if partial:
            return
        if name == "REMOTE_CALL":
            start, stop = scope.spans["args"]
            msg.args, msg.arg_spans = decode_values(decode_prefix, raw, dialect, start, stop, v["argc"], "argument",
                                                    allow_objects)
        else:
            start, stop = scope.spans["value"]
            if start >= stop:
                raise DecodeError(start, "no value")
            msg.value, used = decode_prefix(raw, dialect, allow_objects=allow_objects, offset=start, end=stop)
            msg.arg_spans = [(start, start + used)]
    elif name == "SIMPLIFY_PATH":
        msg.node = v.get("node_path")
        msg.node_id = v.get("path_id")
        if "path_id" in v:
            msg.fields["path_id"] = v["path_id"]
    elif name == "CONFIRM_PATH":
        msg.node = v.get("node_path")
    elif name == "RAW":
        msg.value = v.get("data")


# --------------------------------------------------------------------------------------------
# builders (what MultiplayerAPI::_send_rpc writes)
# --------------------------------------------------------------------------------------------


def _call_or_set(command: str, name_key: str, name: str, body: dict[str, Any], path_id: int | None,
                 node_path: str | None) -> bytes:
    values: dict[str, Any] = {name_key: name, **body}
    if node_path is not None:
        values.update(inline_path=1, path_offset=0, node_path=node_path)
    else:
        values["target"] = path_id
    return write_packet(GODOT3, command, values)


def build_rpc(method: str, args: list[Any], path_id: int | None = None, node_path: str | None = None,
              dialect: str = DIALECT) -> bytes:
    """REMOTE_CALL to a cached path id, or (``node_path``) with the path appended (bit 31)."""
    body = {"argc": len(args), "args": b"".join(encode(a, dialect) for a in args)}
    return _call_or_set("REMOTE_CALL", "method", method, body, path_id, node_path)


def build_rset(prop: str, value: Any, path_id: int | None = None, node_path: str | None = None,
               dialect: str = DIALECT) -> bytes:
    return _call_or_set("REMOTE_SET", "property", prop, {"value": encode(value, dialect)}, path_id, node_path)


def build_simplify_path(path_id: int, node_path: str) -> bytes:
    return write_packet(GODOT3, "SIMPLIFY_PATH", {"path_id": path_id, "node_path": node_path})


def build_confirm_path(node_path: str) -> bytes:
    return write_packet(GODOT3, "CONFIRM_PATH", {"node_path": node_path})


def build_raw(data: bytes) -> bytes:
    return write_packet(GODOT3, "RAW", {"data": data})


def build_from(msg: MpMessage, dialect: str = DIALECT) -> bytes:
    inline = msg.node if msg.node_id is None else None
    c = msg.command
    if c == "REMOTE_CALL":
        return build_rpc(msg.method or "", list(msg.args or []), msg.node_id, inline, dialect)
    if c == "REMOTE_SET":
        return build_rset(msg.method or "", msg.value, msg.node_id, inline, dialect)
    if c == "SIMPLIFY_PATH":
        return build_simplify_path(msg.fields["path_id"], msg.node or "")
    if c == "CONFIRM_PATH":
        return build_confirm_path(msg.node or "")
    if c == "RAW":
        return build_raw(msg.value)
    raise ValueError(f"cannot build a {c!r} packet")
