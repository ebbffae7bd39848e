"""The protocol fields of one SceneMultiplayer packet, read here from transports.md §6.

The capture driver needs them to tie each recorded packet to what the engine printed (method id ->
name, cache id -> path, which synchronizer a SYNC entry is for) and to check the two agree.  This
is deliberately not godot_dissect's multiplayer decoder: the golden is what that decoder is tested
against.  Command and SYS names and the flag constants come from the spec (one table).
"""

from __future__ import annotations

import struct
from typing import Any

from common import CaptureError

from godot_dissect.spec import multiplayer as mp

COMMANDS = {c.id: c.name for c in mp.GODOT4.commands}
SYS_NAMES = {k: f.name for k, f in mp.SYS_COMMANDS.items()}
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")


def _cstring(b: bytes, where: str) -> str:
    if not b.endswith(b"\0"):
        raise CaptureError(f"{where}: text not NUL-terminated: {b.hex()}")
    return b[:-1].decode("utf-8")


def view(p: bytes) -> dict[str, Any]:
    if not p:
        raise CaptureError("empty packet")
    cmd = p[0] & mp.CMD_MASK
    name = COMMANDS[cmd]
    out: dict[str, Any] = {"command": name}
    try:
        out.update(_READERS[name](p))
    except (struct.error, IndexError, UnicodeDecodeError) as e:
        raise CaptureError(f"{name} {p.hex()}: {e}") from None
    return out


def _rpc(p: bytes) -> dict[str, Any]:
    node_comp, name_comp, byte_only = (p[0] >> 4) & 3, (p[0] >> 6) & 1, (p[0] >> 7) & 1
    pos = 1
    nsize = {0: 1, 1: 2, 2: 4}[node_comp]
    node_id = int.from_bytes(p[pos:pos + nsize], "little")
    pos += nsize
    msize = 2 if name_comp else 1
    method_id = int.from_bytes(p[pos:pos + msize], "little")
    pos += msize
    out: dict[str, Any] = {"node_id_bytes": nsize, "method_id": method_id, "method_id_bytes": msize,
                           "byte_only": bool(byte_only)}
    end = len(p)
    if nsize == 4 and node_id & mp.INLINE_PATH_FLAG:
        off = node_id & ~mp.INLINE_PATH_FLAG
        out["node_path"] = _cstring(p[off:], "REMOTE_CALL path")
        out["path_offset"] = off
        end = off
    else:
        out["node_cache_id"] = node_id
    if byte_only:
        out["argc"] = 1 if end > pos else 0
    else:
        out["argc"] = p[pos]
        pos += 1
    out["args_hex"] = p[pos:end].hex()
    return out


def _simplify(p: bytes) -> dict[str, Any]:
    md5_end = 1 + mp.MD5_HEX_SIZE
    return {"md5": p[1:md5_end - 1].decode("ascii"), "cache_id": _U32.unpack_from(p, md5_end)[0],
            "node_path": _cstring(p[md5_end + 4:], "SIMPLIFY_PATH path")}


def _confirm(p: bytes) -> dict[str, Any]:
    if len(p) != 6:
        raise CaptureError(f"CONFIRM_PATH of {len(p)} bytes: 4.6 sends the 6-byte [02][valid][u32 id] form")
    return {"valid": bool(p[1]), "cache_id": _U32.unpack_from(p, 2)[0]}


def _raw(p: bytes) -> dict[str, Any]:
    return {"data_hex": p[1:].hex()}


def _spawn(p: bytes) -> dict[str, Any]:
    scene_id = p[1]
    spawner_id, net_id, sync_count, name_len = struct.unpack_from("<IIII", p, 2)
    pos = 18
    sync_ids = list(struct.unpack_from(f"<{sync_count}I", p, pos))
    pos += 4 * sync_count
    out: dict[str, Any] = {"scene_id": scene_id, "spawner_cache_id": spawner_id, "net_id": net_id,
                           "sync_ids": sync_ids, "name": _cstring(p[pos:pos + name_len], "SPAWN name")}
    pos += name_len
    if scene_id == mp.SPAWN_CUSTOM_SCENE_ID:
        (size,) = _U32.unpack_from(p, pos)
        out["spawn_arg_hex"] = p[pos + 4:pos + 4 + size].hex()
        pos += 4 + size
    out["state_hex"] = p[pos:].hex()
    return out


def _despawn(p: bytes) -> dict[str, Any]:
    return {"net_id": _U32.unpack_from(p, 1)[0]}


def _sync(p: bytes) -> dict[str, Any]:
    delta = bool((p[0] >> 4) & 1)
    entries = []
    if delta:
        pos, head, out = 1, 16, {"delta": True}
    else:
        pos, head, out = 3, 8, {"delta": False, "time": struct.unpack_from("<H", p, 1)[0]}
    while pos + head < len(p):  # the engine's loop condition
        (net_id,) = _U32.unpack_from(p, pos)
        e: dict[str, Any] = {"net_id": net_id & 0x7FFFFFFF, "path_cache": bool(net_id & 0x80000000)}
        if delta:
            e["indexes"], size = struct.unpack_from("<QI", p, pos + 4)
        else:
            (size,) = _U32.unpack_from(p, pos + 4)
        pos += head
        e["state_hex"] = p[pos:pos + size].hex()
        if pos + size > len(p):
            raise CaptureError(f"SYNC entry of {size} bytes runs past the packet")
        pos += size
        entries.append(e)
    if pos != len(p):
        raise CaptureError(f"SYNC: {len(p) - pos} bytes after the last entry")
    out["entries"] = entries
    return out


def _sys(p: bytes) -> dict[str, Any]:
    sub = p[1]
    out: dict[str, Any] = {"sys": SYS_NAMES[sub]}
    if sub == 0:
        out["auth_hex"] = p[2:].hex()
    else:
        out["peer"] = _I32.unpack_from(p, 2)[0]
    if SYS_NAMES[sub] == "RELAY":
        out["inner"] = view(p[mp.SYS_CMD_SIZE:])
        out["inner_bytes"] = p[mp.SYS_CMD_SIZE:]
    return out


_READERS = {"REMOTE_CALL": _rpc, "SIMPLIFY_PATH": _simplify, "CONFIRM_PATH": _confirm, "RAW": _raw,
            "SPAWN": _spawn, "DESPAWN": _despawn, "SYNC": _sync, "SYS": _sys}
