"""Generate the Wireshark Lua dissector from the spec.

The output is the spec as Lua data (every dialect's type table: ids, engine names, layout kinds and
their parameters, header fields; the detection and framing constants) followed by the Lua engine in
``engine.lua`` beside this file, which switches on layout kinds only. Adding a type to the spec adds
it to the dissector with no other edit. ``lua/godot.lua`` in the repository is this output;
``godot-dissect lua --check`` proves it is current.
"""

from __future__ import annotations

import dataclasses
import re
import struct
from importlib import resources
from pathlib import Path
from typing import Any

from ..spec import DIALECTS, debugger
from ..spec import layouts as L
from ..spec import transports as T
from ..spec.conversions import OBJECT_AS_ID_CLASS, STRICT_CONVERSIONS
from ..spec.kinds import kind_parts, layout_params
from ..spec.words import BitField

#: the line of engine.lua the spec data replaces
PLACEHOLDER = "local SPEC = nil -- @SPEC@"
TEMPLATE = "engine.lua"
#: where the generated file lives in a source checkout
COMMITTED = Path(__file__).resolve().parents[2] / "lua" / "godot.lua"

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LUA_KEYWORDS = frozenset((
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in", "local", "nil",
    "not", "or", "repeat", "return", "then", "true", "until", "while"))


def template() -> str:
    return resources.files(__package__).joinpath(TEMPLATE).read_text(encoding="utf-8")


def _lua_str(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= o < 127:
            out.append(ch)
        else:
            out.append("".join(f"\\{b}" for b in ch.encode("utf-8")))
    out.append('"')
    return "".join(out)


class LuaExpr(str):
    """Lua source that ``to_lua`` writes as it is (a reference to a table written elsewhere)."""


def to_lua(v: Any, indent: str = "") -> str:
    """A Python value (dict, list, tuple, str, int, float, bool, None) as a Lua constructor."""
    if isinstance(v, LuaExpr):
        return str(v)
    if v is None:
        return "nil"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return _lua_str(v)
    inner = indent + "  "
    if isinstance(v, dict):
        if not v:
            return "{}"
        parts = []
        for k, x in v.items():
            key = k if isinstance(k, str) and _IDENT.match(k) and k not in _LUA_KEYWORDS else f"[{to_lua(k)}]"
            parts.append(f"{key} = {to_lua(x, inner)}")
        return _wrap(parts, indent)
    if isinstance(v, (list, tuple)):
        if not v:
            return "{}"
        return _wrap([to_lua(x, inner) for x in v], indent)
    raise TypeError(f"cannot write {type(v).__name__} as Lua")


def _wrap(parts: list[str], indent: str) -> str:
    one = "{ " + ", ".join(parts) + " }"
    if len(one) + len(indent) <= 110 and "\n" not in one:
        return one
    inner = indent + "  "
    return "{\n" + "".join(f"{inner}{p},\n" for p in parts) + indent + "}"


def _header_field(f: BitField) -> dict[str, Any]:
    return {"name": f.name, "shift": f.shift, "bits": f.width}


def transport_constants() -> dict[str, Any]:
    """Every plain constant of ``spec.transports`` by its name (numbers, strings, tuples of them, the
    sizes of its ``struct`` words): a constant added there reaches the Lua templates as
    ``SPEC.transports.NAME`` with no edit here."""
    out: dict[str, Any] = {}
    for name, v in vars(T).items():
        if not name.isupper():
            continue
        if isinstance(v, struct.Struct):
            out[name + "_SIZE"] = v.size
        elif isinstance(v, (int, float, str)) or (isinstance(v, tuple) and all(isinstance(x, (int, str)) for x in v)):
            out[name] = list(v) if isinstance(v, tuple) else v
        elif isinstance(v, dict) and all(isinstance(k, int) and isinstance(x, str) for k, x in v.items()):
            out[name] = dict(v)
    return out


def spec_data() -> dict[str, Any]:
    """Everything the Lua engine needs, from the spec and the reader's constants."""
    dialects = []
    typedefs: list[dict[str, Any]] = []  # each spec TypeDef once; dialect entries point at it
    def_index: dict[int, int] = {}

    def typedef_ref(td: Any) -> int:
        if id(td) not in def_index:
            header = [_header_field(f) for f in td.header_fields]
            typedefs.append({"layout": layout_params(td.layout), "header": header})
            def_index[id(td)] = len(typedefs)  # 1-based, as Lua indexes
        return def_index[id(td)]

    for d in DIALECTS.values():
        # every rule of the dialect that is plain data (flags, names, versions), then its table
        rules = {f.name: getattr(d, f.name) for f in dataclasses.fields(d)
                 if isinstance(getattr(d, f.name), (bool, int, str, type(None))) and f.name != "version"}
        dialects.append({
            **rules,
            "typed_array": d.has_typed_arrays(),
            "typed_dictionary": d.has_typed_dictionaries(),
            "types": [{
                "id": e.id,
                "name": e.name,
                "key": e.key,
                "since": e.since,
                "def": typedef_ref(e.typedef),
            } for e in d.entries],
        })
    return {
        "type_mask": L.TYPE_MASK,
        "flag_64": _header_field(L.FLAG_64),
        "object_as_id": _header_field(L.FLAG_OBJECT_AS_ID),
        "array_element_kind": _header_field(L.ARRAY_ELEMENT_KIND),
        "dict_key_kind": _header_field(L.DICT_KEY_KIND),
        "dict_value_kind": _header_field(L.DICT_VALUE_KIND),
        "container_kinds": list(L.CONTAINER_KINDS),
        "max_nesting": T.MAX_DEPTH,
        "conversions": {k: sorted(v) for k, v in sorted(STRICT_CONVERSIONS.items())},
        "object_as_id_class": OBJECT_AS_ID_CLASS,
        "candidates": list(T.CANDIDATES),
        "max_samples": T.MAX_SAMPLES,
        "max_ambiguous_samples": T.MAX_AMBIGUOUS_SAMPLES,
        "max_pdu": T.MAX_PDU,
        "max_guessed_pdu": T.MAX_GUESSED_PDU,
        "lua_desegment_max": T.LUA_DESEGMENT_MAX,
        "max_held_bytes": T.MAX_HELD_BYTES,
        "debugger_ports": list(T.DEBUGGER_PORTS),
        "godot3_debugger_messages": list(debugger.GODOT3_MESSAGES),
        "godot3_custom_prefix": debugger.GODOT3_CUSTOM_PREFIX,
        "transports": transport_constants(),
        "kind_parts": kind_parts(),
        "typedefs": typedefs,
        "dialects": dialects,
    }


def generate() -> str:
    """The complete ``godot.lua``."""
    tpl = template()
    if tpl.count(PLACEHOLDER) != 1:
        raise RuntimeError(f"{TEMPLATE} must contain the line {PLACEHOLDER!r} exactly once")
    data = "local SPEC = " + to_lua(spec_data())
    head = ("-- godot.lua: Wireshark dissector for Godot Engine Variants (\"Godot Variant\", filter name godot).\n"
            "-- GENERATED by `godot-dissect lua` from godot_dissect/spec and godot_dissect/lua/engine.lua.\n"
            "-- Do not edit: change the spec or the template and regenerate (`godot-dissect lua --check`).\n")
    # the ENet and multiplayer dissectors (mp_generator.py) follow the Variant engine, whose locals they use
    from .mp_generator import section
    return head + tpl.replace(PLACEHOLDER, data) + section()
