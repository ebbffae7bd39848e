"""Godot 4 SceneMultiplayer packets: bytes -> MpMessage (no cache state) and the builders back.

The layouts are ``spec.multiplayer.GODOT4``; this module adds what the layout cannot say: the
compressed arguments and state, the engine's extra rejection rules (spawn names, relayed SYS), and
the choice of id widths an engine makes when it sends.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ..errors import DecodeError
from ..spec.multiplayer import (
    GODOT4,
    INLINE_PATH_FLAG,
    INVALID_NODE_NAME_CHARS,
    SPAWN_CUSTOM_SCENE_ID,
    SYS_COMMANDS,
)
from .compressed import (
    decode_compressed,
    decode_compressed_list,
    encode_compressed,
    encode_compressed_list,
    encode_rpc_args,
)
from .layout import LayoutError, Scope
from .message import MpMessage
from .packets import read_packet, write_packet

DIALECT = "godot4"
_SYS_NAMES = {k: f.name for k, f in SYS_COMMANDS.items()}
_SYS_IDS = {f.name: k for k, f in SYS_COMMANDS.items()}


def decode_packet(data: bytes | memoryview, dialect: str = DIALECT, *, allow_objects: bool = True,
                  confirm_form: str | None = None, relayed: bool = False) -> MpMessage:
    """One SceneMultiplayer packet. Node ids stay ids here (the session resolves them)."""
    raw = bytes(data)
    msg = MpMessage(kind="error", raw=raw)
    try:
        command, form, scope = read_packet(GODOT4, raw, confirm_form)
    except LayoutError as e:
        partial = getattr(e, "partial", None)
        if partial is not None:
            command, form, scope = partial
            msg.kind, msg.command = command.kind, command.name
            # what was read before the error, as far as it goes: the first error is the one reported
            with contextlib.suppress(DecodeError, LayoutError):
                _fill(msg, command.name, form.name, scope, raw, dialect, allow_objects, partial=True)
        return msg.fail(e.offset, e.reason)
    msg.kind, msg.command = command.kind, command.name
    msg.fields["form"] = form.name
    try:
        _fill(msg, command.name, form.name, scope, raw, dialect, allow_objects, relayed=relayed)
    except DecodeError as e:
        msg.fail(e.offset, e.reason + (f" at {e.path}" if e.path else ""))
    except LayoutError as e:
        msg.fail(e.offset, e.reason)
    return msg


def _fill(msg: MpMessage, name: str, form: str, scope: Scope, raw: bytes, dialect: str,
          allow_objects: bool, partial: bool = False, relayed: bool = False) -> None:
    v = scope.values
    if name == "REMOTE_CALL":
        _fill_rpc(msg, scope, raw, dialect, allow_objects, partial)
    elif name == "SIMPLIFY_PATH":
        msg.node = v.get("node_path")
        msg.node_id = v.get("cache_id")
        msg.fields.update({k: v[k] for k in ("md5", "cache_id") if k in v})
    elif name == "CONFIRM_PATH":
        if "valid" in v:
            msg.fields["valid"] = bool(v["valid"])
        if "cache_id" in v:
            msg.node_id = msg.fields["cache_id"] = v["cache_id"]
        if "node_path" in v:
            msg.node = v["node_path"]
    elif name == "RAW":
        if "data" in v:
            msg.value = v["data"]
    elif name == "SPAWN":
        _fill_spawn(msg, scope, raw, dialect, partial)
    elif name == "DESPAWN":
        if "net_id" in v:
            msg.fields["net_id"] = v["net_id"]
    elif name == "SYNC":
        _fill_sync(msg, scope, raw, dialect, allow_objects, partial, delta=form == "delta")
    elif name == "SYS":
        _fill_sys(msg, scope, raw, dialect, allow_objects, partial, relayed)


def _fill_rpc(msg: MpMessage, scope: Scope, raw: bytes, dialect: str, allow_objects: bool, partial: bool) -> None:
    v = scope.values
    msg.fields["byte_only"] = bool(v.get("byte_only", 0))
    msg.fields["node_id_bytes"] = 1 << v.get("node_comp", 0)
    if "node_id" in v:
        if v.get("inline_path"):
            msg.fields["path_offset"] = v["path_offset"]
        else:
            msg.node_id = v["node_id"]
    if "node_path" in v:
        msg.node = v["node_path"]
    if "method_id" in v:
        msg.method_id = v["method_id"]
    if partial or "args" not in scope.spans:
        return
    start, stop = scope.spans["args"]
    if v.get("byte_only"):
        # byte_only: no argument at all, or the bare bytes of one PackedByteArray
        msg.args = [raw[start:stop]] if stop > start else []
        msg.arg_spans = [(start, stop)] if stop > start else []
        return
    args, spans = decode_compressed_list(raw, dialect, offset=start, end=stop, count=v["argc"],
                                         allow_objects=allow_objects)
    msg.args, msg.arg_spans = args, spans
    used = spans[-1][1] if spans else start
    if used < stop:
        msg.fields["trailing_bytes"] = stop - used  # the engine ignores them


def _fill_spawn(msg: MpMessage, scope: Scope, raw: bytes, dialect: str, partial: bool) -> None:
    v = scope.values
    for k in ("scene_id", "spawner_id", "net_id"):
        if k in v:
            msg.fields[k] = v[k]
    if "spawner_id" in v:
        msg.node_id = v["spawner_id"]
    if "sync_ids" in v:
        msg.fields["sync_ids"] = [g.values["sync_id"] for g in v["sync_ids"]]
    if "name" not in v:
        return
    name_raw = v["name"]
    start = scope.spans["name"][0]
    if not name_raw:
        raise LayoutError(start, "zero spawn name size")
    name = name_raw.split(b"\0", 1)[0].decode("utf-8", "replace")
    msg.fields["name"] = name
    if any(c in INVALID_NODE_NAME_CHARS for c in name):
        raise LayoutError(start, f"invalid node name {name!r} (validate_node_name)")
    if partial:
        return
    if v.get("scene_id") == SPAWN_CUSTOM_SCENE_ID and "arg" in scope.spans:
        a0, a1 = scope.spans["arg"]
        arg, _ = decode_compressed(raw, dialect, offset=a0, end=a1, allow_objects=False)
        msg.fields["arg"] = arg
    s0, s1 = scope.spans["state"]
    msg.value, _ = decode_compressed_list(raw, dialect, offset=s0, end=s1)


def _fill_sync(msg: MpMessage, scope: Scope, raw: bytes, dialect: str, allow_objects: bool, partial: bool,
               delta: bool) -> None:
    v = scope.values
    msg.fields["delta"] = delta
    if "time" in v:
        msg.fields["time"] = v["time"]
    entries, states = [], []
    msg.fields["entries"], msg.value = entries, states
    for g in v.get("entries", []):
        e = {"net_id": g.values["net_id"], "size": g.values["size"]}
        if delta:
            e["indexes"] = g.values["indexes"]
        entries.append(e)
        s0, s1 = g.spans["state"]
        states.append(decode_compressed_list(raw, dialect, offset=s0, end=s1, allow_objects=allow_objects)[0])
    pos = max((g.spans["state"][1] for g in v.get("entries", [])), default=1 if delta else 3)
    if pos < len(raw) and not partial:
        msg.fields["trailing_bytes"] = len(raw) - pos  # fewer than an entry header: the engine stops


def _fill_sys(msg: MpMessage, scope: Scope, raw: bytes, dialect: str, allow_objects: bool, partial: bool,
              relayed: bool) -> None:
    v = scope.values
    if "sys_command" in v:
        msg.fields["sys"] = _SYS_NAMES.get(v["sys_command"], v["sys_command"])
    if "peer" in v:
        msg.peer = v["peer"]
    if relayed:  # SceneMultiplayer::_process_packet has no case for SYS: "Invalid network command"
        raise LayoutError(0, "a SYS packet inside a RELAY is not processed by the engine")
    if partial:
        return
    sys = msg.fields.get("sys")
    if sys == "AUTH":
        msg.value = v.get("auth", b"")
        msg.fields["auth_complete"] = not msg.value
    elif sys == "RELAY":
        p0, p1 = scope.spans["packet"]
        inner = decode_packet(raw[p0:p1], dialect, allow_objects=allow_objects, relayed=True)
        msg.inner = inner
        if inner.error and inner.error_offset is not None:
            msg.fail(p0 + inner.error_offset, f"relayed {inner.command or 'packet'}: "
                                              f"{inner.error.split(': ', 1)[-1]}")


# --------------------------------------------------------------------------------------------
# builders (what the engine sends)
# --------------------------------------------------------------------------------------------


def _width(value: int, widths: tuple[int, ...]) -> int:
    for i, top in enumerate(widths):
        if value <= top:
            return i
    return len(widths)


def build_rpc(method_id: int, args: list[Any], node_id: int | None = None, node_path: str | None = None,
              dialect: str = DIALECT) -> bytes:
    """REMOTE_CALL as ``SceneRPCInterface::_send_rpc`` writes it: a cached node id in the
    narrowest width, or (``node_path``) the 32-bit inline form with the path appended."""
    data, byte_only = encode_rpc_args(args, dialect)
    values: dict[str, Any] = {"method_id": method_id, "name_comp": _width(method_id, (0xFF,)),
                              "byte_only": int(byte_only), "args": data}
    if not byte_only:
        values["argc"] = len(args)
    if node_path is not None:
        values.update(node_comp=2, inline_path=1, node_path=node_path, path_offset=0)
    else:
        assert node_id is not None
        values.update(node_comp=_width(node_id, (0xFF, 0xFFFF)), node_id=node_id)
    return write_packet(GODOT4, "REMOTE_CALL", values)


def build_simplify_path(md5: str, cache_id: int, node_path: str) -> bytes:
    return write_packet(GODOT4, "SIMPLIFY_PATH", {"md5": md5, "cache_id": cache_id, "node_path": node_path})


def build_confirm_path(valid: bool, cache_id: int | None = None, node_path: str | None = None) -> bytes:
    """4.3+ form with ``cache_id``, 4.0-4.2 form with ``node_path``."""
    if node_path is not None:
        return write_packet(GODOT4, "CONFIRM_PATH", {"valid": int(valid), "node_path": node_path}, form="path")
    return write_packet(GODOT4, "CONFIRM_PATH", {"valid": int(valid), "cache_id": cache_id}, form="id")


def build_raw(data: bytes) -> bytes:
    return write_packet(GODOT4, "RAW", {"data": data})


def build_spawn(scene_id: int, spawner_id: int, net_id: int, name: str, sync_ids: list[int] = (),  # type: ignore[assignment]
                state: list[Any] = (), arg: Any = None, dialect: str = DIALECT) -> bytes:  # type: ignore[assignment]
    values: dict[str, Any] = {
        "scene_id": scene_id, "spawner_id": spawner_id, "net_id": net_id,
        "sync_ids": [{"sync_id": s} for s in sync_ids], "name": name.encode("utf-8") + b"\0",
        "state": encode_compressed_list(list(state), dialect),
    }
    if scene_id == SPAWN_CUSTOM_SCENE_ID:
        values["arg"] = encode_compressed(arg, dialect)
    return write_packet(GODOT4, "SPAWN", values)


def build_despawn(net_id: int) -> bytes:
    return write_packet(GODOT4, "DESPAWN", {"net_id": net_id})


def build_sync(time: int, entries: list[tuple[int, list[Any]]], dialect: str = DIALECT) -> bytes:
    """Full SYNC: ``entries`` = (net id, values)."""
    return write_packet(GODOT4, "SYNC", {"delta": 0, "time": time, "entries": [
        {"net_id": n, "state": encode_compressed_list(vals, dialect)} for n, vals in entries]})


def build_sync_delta(entries: list[tuple[int, int, list[Any]]], dialect: str = DIALECT) -> bytes:
    """Delta SYNC: ``entries`` = (net id, indexes bit mask, changed values)."""
    return write_packet(GODOT4, "SYNC", {"delta": 1, "entries": [
        {"net_id": n, "indexes": i, "state": encode_compressed_list(vals, dialect)} for n, i, vals in entries]})


def build_sys(sys: str, peer: int = 0, payload: bytes = b"") -> bytes:
    """SYS: ``AUTH`` (payload = auth data, none = complete), ``ADD_PEER``/``DEL_PEER`` (peer),
    ``RELAY`` (peer, payload = the relayed packet)."""
    values: dict[str, Any] = {"sys_command": _SYS_IDS[sys], "peer": peer, "auth": payload, "packet": payload}
    return write_packet(GODOT4, "SYS", values)


def build_from(msg: MpMessage, dialect: str = DIALECT) -> bytes:
    """The packet a decoded message came from (for round trips and crafting from a message)."""
    f = msg.fields
    c = msg.command
    if c == "REMOTE_CALL":
        return build_rpc(msg.method_id or 0, list(msg.args or []),
                         node_id=msg.node_id, node_path=msg.node if msg.node_id is None else None, dialect=dialect)
    if c == "SIMPLIFY_PATH":
        return build_simplify_path(f["md5"], f["cache_id"], msg.node or "")
    if c == "CONFIRM_PATH":
        return build_confirm_path(f["valid"], f.get("cache_id"), None if "cache_id" in f else msg.node)
    if c == "RAW":
        return build_raw(msg.value)
    if c == "SPAWN":
        return build_spawn(f["scene_id"], f["spawner_id"], f["net_id"], f["name"], f["sync_ids"],
                           list(msg.value or []), f.get("arg"), dialect)
    if c == "DESPAWN":
        return build_despawn(f["net_id"])
    if c == "SYNC":
        states = list(msg.value or [])
        if f["delta"]:
            return build_sync_delta([(e["net_id"], e["indexes"], s)
                                     for e, s in zip(f["entries"], states, strict=True)], dialect)
        return build_sync(f["time"], [(e["net_id"], s) for e, s in zip(f["entries"], states, strict=True)], dialect)
    if c == "SYS":
        sys = f["sys"]
        if sys == "RELAY":
            return build_sys(sys, msg.peer or 0, build_from(msg.inner, dialect) if msg.inner else b"")
        if sys == "AUTH":
            return build_sys(sys, payload=msg.value or b"")
        return build_sys(sys, msg.peer or 0)
    raise ValueError(f"cannot build a {c!r} packet")


__all__ = [
    "INLINE_PATH_FLAG", "build_confirm_path", "build_despawn", "build_from", "build_raw", "build_rpc",
    "build_simplify_path", "build_spawn", "build_sync", "build_sync_delta", "build_sys", "decode_packet",
]
