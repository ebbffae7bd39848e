"""The ENet and multiplayer part of the generated Wireshark Lua.

``spec/enet.py`` and ``spec/multiplayer.py`` written out as Lua data (``MP_SPEC``), followed by the
Lua templates ``enet.lua`` and ``multiplayer.lua`` beside this file, which read those tables and
switch on item kinds only (the ENet command readers and the multiplayer item lists are compiled to
Lua functions from them at load time or on first use): a command, field, flag or layout item added
to the spec reaches the dissector with no other edit. ``generator.generate`` appends :func:`section`
to ``lua/godot.lua``.
"""

from __future__ import annotations

import dataclasses
import inspect
import struct
from collections.abc import Mapping
from importlib import resources
from typing import Any

from ..enet import fastlz, rangecoder, reassembly
from ..multiplayer import records, session
from ..spec import enet as E
from ..spec import multiplayer as M
from ..spec import stats, transports
from ..stats.calls import RPC_COLUMNS
from ..stats.rows import OTHER

#: the Lua templates, in the order they are appended
TEMPLATES = ("compression.lua", "enet.lua", "multiplayer.lua", "stats.lua")
#: the line of each template the data goes before (checked, so a template cannot lose it)
MARKER = "-- @MP_SPEC@"


def int_code(code: str, order: str = "") -> dict[str, Any]:
    """A ``struct`` integer code as {size, signed, le}: what a Lua reader needs."""
    full = code if code[0] in "<>!=@" else order + code
    return {"size": struct.calcsize(full), "signed": full[-1].islower(), "le": full[0] == "<"}


# -- ENet ----------------------------------------------------------------------------------------------

def _field_abbrevs() -> dict[int, str]:
    """Filter name of every command body field: ``enet.<name>`` for a field many commands share
    (data_length), else ``enet.<first command using it>.<name>`` without ``SEND_``
    (enet.connect.channel_count, enet.fragment.start_seq)."""
    users: dict[int, list[E.CommandDef]] = {}
    for c in E.COMMANDS:
        for f in c.fields:
            users.setdefault(id(f), []).append(c)
    out = {}
    for c in E.COMMANDS:
        for f in c.fields:
            us = users[id(f)]
            if len(us) > 2:
                out[id(f)] = f"enet.{f.name}"
            else:
                group = us[0].name.lower().removeprefix("send_")
                out[id(f)] = f"enet.{group}.{f.name}"
    return out


def _enet_field(f: E.IntField, abbrev: str) -> dict[str, Any]:
    return {"name": f.name, "abbrev": abbrev, "c_name": f.c_name, "meaning": f.meaning,
            **int_code(f.code, E.BYTE_ORDER)}


def _bits(b: E.BitField) -> dict[str, Any]:
    return {"name": b.name, "shift": b.shift, "bits": b.width, "mask": b.mask, "meaning": b.meaning}


def _right(r: int | str | tuple[str, str, str]) -> Any:
    return list(r) if isinstance(r, tuple) else r


def enet_data() -> dict[str, Any]:
    abbrevs = _field_abbrevs()
    return {
        "header_word": _enet_field(E.HEADER_PEER_WORD, "enet.peer_word"),
        "header_bits": [_bits(b) for b in E.HEADER_BITS],
        "sent_time": _enet_field(E.HEADER_SENT_TIME, "enet.sent_time"),
        "command_header": [_enet_field(f, f"enet.{f.name}") for f in E.COMMAND_HEADER],
        "command_header_size": E.COMMAND_HEADER_SIZE,
        "command_bits": [_bits(b) for b in E.COMMAND_BITS],
        "commands": [{
            "number": c.number, "name": c.name, "meaning": c.meaning, "size": c.size,
            "fields": [_enet_field(f, abbrevs[id(f)]) for f in c.fields],
            "data_length": c.data_length, "delivery": c.delivery,
            "fragment_key": list(c.fragment_key) if c.fragment_key else None,
            "needs_peer": c.needs_peer, "sent_flags": list(c.sent_flags),
            "checks": [{"left": k.left, "op": k.op, "right": _right(k.right), "reason": k.reason} for k in c.checks],
        } for c in E.COMMANDS],
        "command_count": E.COMMAND_COUNT,
        "unassigned_peer_id": E.UNASSIGNED_PEER_ID,
        "control_channel": E.CONTROL_CHANNEL,
        "max_packet_commands": E.MAX_PACKET_COMMANDS,
        "max_packet_size": E.MAX_PACKET_SIZE,
        "max_fragment_count": E.MAX_FRAGMENT_COUNT,
        "min_mtu": E.MIN_MTU, "max_mtu": E.MAX_MTU,
        "min_window_size": E.MIN_WINDOW_SIZE, "max_window_size": E.MAX_WINDOW_SIZE,
        "compressions": [{"name": c.name, "meaning": c.meaning} for c in E.COMPRESSIONS],
        "godot_major_by_channel_count": dict(E.GODOT_MAJOR_BY_CHANNEL_COUNT),
        "max_waiting_data": E.MAX_WAITING_DATA,
        # the Python reassembler's bounds, so both give up on the same groups
        "max_groups": inspect.signature(reassembly.EnetReassembler).parameters["max_groups"].default,
        "seen_window": E.SEEN_WINDOW,
        "seen_total": E.SEEN_TOTAL,
        "max_held_bytes": transports.MAX_HELD_BYTES,
        "reassembly_channel_fragments": E.REASSEMBLY_CHANNEL_FRAGMENTS,
        "reassembly_stale_seconds": E.REASSEMBLY_STALE_SECONDS,
    }


# -- multiplayer layouts -----------------------------------------------------------------------------

def item(v: Any) -> Any:
    """A spec value (layout item, Form, Bits, Mapping, tuple) as plain data; dataclasses keep their
    ``kind`` (Int, Text, ...) or get their class name, and every Int-like code becomes
    {size, signed, le}."""
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        out: dict[str, Any] = {"kind": getattr(v, "kind", type(v).__name__.lower())}
        for f in dataclasses.fields(v):
            x = getattr(v, f.name)
            if f.name == "code" and isinstance(x, str):
                out["code"] = int_code(x)
            elif f.name.endswith("codes") and isinstance(x, Mapping):  # Choice.codes, int_codes
                out[f.name] = {k: int_code(c) for k, c in x.items()}
            elif f.name == "bits" and isinstance(x, Mapping):  # Choice: bits by code
                out["bits"] = [{"size": int_code(c)["size"], "bits": item(b)} for c, b in x.items()]
            else:
                out[f.name] = item(x)
        return out
    if isinstance(v, Mapping):
        return {k: item(x) for k, x in v.items()}
    if isinstance(v, (tuple, list)):
        return [item(x) for x in v]
    return v


def mp_data() -> dict[str, Any]:
    return {
        "protocols": {major: item(p) for major, p in M.PROTOCOLS.items()},
        "compressed_variant": item(M.COMPRESSED_VARIANT),
        "enet_channels": {major: item(m) for major, m in M.ENET_CHANNELS.items()},
        "enet3_peer_header": item(M.ENET3_PEER_HEADER),
        "enet3_sysmsg": item(M.ENET3_SYSMSG),
        "ws3_header": item(M.WS3_HEADER),
        "ws3_sys": item(M.WS3_SYS),
        "ws4_peer_id": item(M.WS4_PEER_ID),
        "ws4_min_peer_id": M.WS4_MIN_PEER_ID,
        "node_rpc_flag": M.NODE_RPC_FLAG,
        "md5_hex_size": M.MD5_HEX_SIZE,
        "invalid_node_name_chars": M.INVALID_NODE_NAME_CHARS,
        "blob_contents": dict(M.BLOB_CONTENTS),
        "record_kinds": dict(M.RECORD_KINDS),
        "max_cache_entries": session.MAX_CACHE_ENTRIES,
        # ENet delivery of the receiving side -> the sender's transfer mode (Record.transfer)
        "transfer_of_delivery": dict(records._TRANSFER_OF_DELIVERY),
    }


def codec_data() -> dict[str, Any]:
    """The constants of the Python decompressors that compression.lua ports (pure arithmetic)."""
    rc = {k: v for k, v in vars(rangecoder).items() if k.isupper() and isinstance(v, int)}
    rc["MAX_NORMALISE"] = rangecoder._MAX_NORMALISE
    return {"range_coder": rc, "fastlz": {"MAX_L2_DISTANCE": fastlz.MAX_L2_DISTANCE}}


def spec_data() -> dict[str, Any]:
    return {"enet": enet_data(), "mp": mp_data(), "codecs": codec_data(),
            "stats": {"max_rows": stats.MAX_ROWS, "open_segments": stats.LUA_OPEN_SEGMENTS, "other": OTHER,
                      # the rpc table's text columns: `godot-dissect stats --table rpc` less the times
                      "rpc_head": [name for name, unit in RPC_COLUMNS if unit != "time"]}}


def _canon(v: Any, counts: dict[Any, int] | None = None) -> Any:
    """A hashable form of plain data that tells {1: x} from {"1": x}; with ``counts``, how often
    each table occurs is counted too."""
    if isinstance(v, dict):
        c: Any = ("{", tuple((repr(k), _canon(x, counts)) for k, x in v.items()))
    elif isinstance(v, (list, tuple)):
        c = ("[", tuple(_canon(x, counts) for x in v))
    else:
        return repr(v)
    if counts is not None:
        counts[c] = counts.get(c, 0) + 1
    return c


def share_tables(data: Any, name: str, min_chars: int = 60) -> tuple[list[Any], Any]:
    """Tables the spec shares (a field list two commands use, a bit range several layouts read)
    written once: every table that occurs more than once and is at least ``min_chars`` of Lua is
    moved to ``name[i]`` (inner ones first) and referred to from where it stood. Returns the
    moved tables, in order, and ``data`` with the references."""
    from .generator import LuaExpr, to_lua

    counts: dict[Any, int] = {}
    _canon(data, counts)
    shared: list[Any] = []
    index: dict[Any, int] = {}

    def rewrite(v: Any) -> Any:
        if isinstance(v, dict):
            out: Any = {k: rewrite(x) for k, x in v.items()}
        elif isinstance(v, (list, tuple)):
            out = [rewrite(x) for x in v]
        else:
            return v
        c = _canon(v)
        if counts[c] < 2 or len(to_lua(out)) < min_chars:
            return out
        if c not in index:
            shared.append(out)
            index[c] = len(shared)  # 1-based, as Lua indexes
        return LuaExpr(f"{name}[{index[c]}]")

    return shared, rewrite(data)


def template(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def section() -> str:
    """The Lua appended to godot.lua: MP_SPEC, then the templates, in one function scope (so their
    locals do not count against the main chunk's 200-local limit; engine.lua's locals are upvalues)."""
    from .generator import to_lua  # the one Lua writer

    parts = ["\n----------------------------------------------------------------------------------------------------",
             "-- ENet and Godot high-level multiplayer (GENERATED from spec/enet.py and spec/multiplayer.py by",
             "-- godot_dissect/lua/mp_generator.py; templates enet.lua and multiplayer.lua)",
             "----------------------------------------------------------------------------------------------------",
             "local MP_SHARED = {} -- tables the spec shares, written once"]
    shared, data = share_tables(spec_data(), "MP_SHARED")
    parts += [f"MP_SHARED[{i}] = {to_lua(t)}" for i, t in enumerate(shared, 1)]
    parts += ["local MP_SPEC = " + to_lua(data),
             "local MP = {} -- what enet.lua hands to multiplayer.lua"]
    for name in TEMPLATES:
        text = template(name)
        if text.count(MARKER) != 1:
            raise RuntimeError(f"{name} must contain the line {MARKER!r} exactly once")
        # a function of its own: its locals do not count against the main chunk's 200-local limit
        parts.append(f"do -- {name}\nlocal function part()\n{text}\nend\npart()\nend")
    return "\n".join(parts) + "\n"
