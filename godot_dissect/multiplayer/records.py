"""MpMessage -> the keyword fields of a ``records.Record``."""

from __future__ import annotations

from typing import Any

from ..spec.enet import COMMANDS_BY_NAME
from ..spec.multiplayer import ENET_CHANNELS
from .message import MpMessage


def record_fields(m: MpMessage, channel: int | None = None) -> dict[str, Any]:
    """Record fields for one message. A SYS RELAY shows the relayed packet (kind, node, method,
    arguments), with ``fields["relay"]`` saying "to N" / "from N"."""
    shown = m
    fields: dict[str, Any] = {}
    if m.inner is not None:
        shown = m.inner
        way, peer = m.fields.get("relay", ("to", m.peer))
        fields.update(sys="RELAY", relay=f"{way} {peer}")
        fields.update(shown.fields)
    else:
        fields.update(m.fields)
    if shown.command not in ("CONFIRM_PATH",):  # the one command with two forms on the wire
        fields.pop("form", None)
    if shown.node_id is not None:
        fields["node_id"] = shown.node_id
    if shown.sender is not None:
        fields["sender"] = shown.sender
    if shown.kind == "rpc":
        value: Any = shown.args
    elif shown.kind in ("simplify_path", "confirm_path", "despawn", "peer"):
        value = None
    else:
        value = shown.value
    error = m.error  # a relayed packet the receiving session rejects (e.g. its path cache) is an error too
    if error is None and shown is not m and shown.error:
        error = f"relayed packet (inner offsets): {shown.error}"
    transfer = m.transfer or _TRANSFER_OF_DELIVERY.get(m.fields.get("delivery"))  # type: ignore[arg-type]
    return dict(kind="error" if error else shown.kind, value=value, raw=m.raw, error=error,
                node=shown.node, method=shown.method, method_id=shown.method_id, channel=channel,
                peer=m.peer, command=shown.command or m.command, fields=fields or None,
                sender=m.sender, receiver=m.receiver, relayed=m.relayed, transfer=transfer,
                app_bytes=0 if m.kind == "enet" else len(m.raw))


def _transfer_of_delivery() -> dict[str, str]:
    """ENet delivery kind of the receiving side -> the sender's transfer mode, from how each
    Godot version sends each mode (spec ``ENET_CHANNELS[major].sends``); the same for 3.x and 4.x."""
    out: dict[str, str] = {}
    for channels in ENET_CHANNELS.values():
        for mode, send in channels.sends.items():
            delivery = COMMANDS_BY_NAME[send.command].delivery
            assert out.setdefault(delivery, mode) == mode, (delivery, mode)  # type: ignore[arg-type]
    return out


#: "reliable" -> "reliable", "unsequenced" -> "unreliable", "unreliable" -> "unreliable_ordered".
#: A packet larger than the MTU goes as fragments; 3.x sends every mode's fragments reliably, so such
#: a packet shows as "reliable" (which is what happened on the wire).
_TRANSFER_OF_DELIVERY = _transfer_of_delivery()


_ENET_SHOWN = {
    "CONNECT": ("peer_id", "channel_count", "data"),  # data: the client's Godot peer id
    "VERIFY_CONNECT": ("peer_id", "outgoing_peer_id", "channel_count"),
    "DISCONNECT": ("peer_id", "data"),
}


def summary(kind: str, command: str | None, node: str | None, method: str | None, method_id: int | None,
            text: str, fields: dict[str, Any] | None, peer: int | None) -> str:
    """One line, e.g. ``Main.chat("hello", Color(1, 0, 0, 1))`` or ``SIMPLIFY_PATH Main id=1``."""
    f = fields or {}
    where = node if node is not None else (f"node#{f['node_id']}" if "node_id" in f else "?")
    relay = f" [relay {f['relay']}]" if "relay" in f else ""
    if "src" in f and "dst" in f:  # Godot 3 peer header: who sent it, and to whom (1 = server, 0 = all)
        relay += f" [{f['src']}→{f['dst']}]"
    if kind == "rpc":
        name = method if method is not None else f"method#{method_id}"
        if method is not None and f.get("method_verified") is False:
            name += "?"  # names from the user or the project, not checked against an md5
        return f"{where}.{name}({text}){relay}"
    if kind == "rset":
        return f"{where}.{method} = {text}{relay}"
    if kind == "simplify_path":
        cid = f.get("cache_id", f.get("path_id"))
        return f"SIMPLIFY_PATH {node} id={cid}" + (f" md5={f['md5']}" if "md5" in f else "") + relay
    if kind == "confirm_path":
        valid = f" valid={f['valid']}" if "valid" in f else ""
        cid = f" id={f['cache_id']}" if "cache_id" in f else ""
        return f"CONFIRM_PATH {node}{cid}{valid}{relay}"
    if kind == "spawn":
        spawn = f"SPAWN {f.get('name')} net_id={f.get('net_id')} by {where} scene={f.get('scene_id')}"
        return f"{spawn} [{text}]{relay}"
    if kind == "despawn":
        return f"DESPAWN net_id={f.get('net_id')}" + (f" {f['name']}" if "name" in f else "") + relay
    if kind == "sync":
        ents = ", ".join(f"{e.get('node') or e.get('spawned') or e['net_id']}" for e in f.get("entries", []))
        return f"SYNC{' delta' if f.get('delta') else ''} {ents}: {text}{relay}"
    if kind == "sys":
        if f.get("sys") == "AUTH":
            return "SYS AUTH complete" if f.get("auth_complete") else f"SYS AUTH {text}"
        return f"SYS {f.get('sys')} {peer if peer is not None else ''}".rstrip()
    if kind == "raw":
        return f"RAW {text}{relay}"
    if kind == "peer":
        return f"{command} {peer}"
    if kind == "enet":  # the fields that say something about Godot; all of them are in the JSON
        shown = [f"{k}={f[k]}" for k in _ENET_SHOWN.get(command or "", ("reliable_seq",)) if k in f]
        major = f" (Godot {f['godot_major']})" if "godot_major" in f else ""
        return f"{command} {' '.join(shown)}{major}".rstrip()
    return text
