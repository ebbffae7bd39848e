"""scapy layers for Godot's high-level multiplayer, generated from ``spec.multiplayer`` at import.

* ``GodotMP3``: Godot 3.x ``MultiplayerAPI`` packets, one class per command (``GodotMP3RemoteCall``,
  ``GodotMP3RemoteSet``, ``GodotMP3SimplifyPath``, ``GodotMP3ConfirmPath``, ``GodotMP3Raw``);
  arguments and values are ``GodotVariant`` packets.
* ``GodotMP4``: Godot 4.x ``SceneMultiplayer`` packets: the command byte's flag bits as fields, one
  class per command and form (``GodotMP4RemoteCall``, ``GodotMP4SimplifyPath``,
  ``GodotMP4ConfirmPath`` (4.3+) / ``GodotMP4ConfirmPathUntil42`` (4.0-4.2), ``GodotMP4Raw``,
  ``GodotMP4Spawn``, ``GodotMP4Despawn``, ``GodotMP4Sync`` / ``GodotMP4SyncDelta``, ``GodotMP4Sys``
  and its cases ``GodotMP4SysAuth`` / ``AddPeer`` / ``DelPeer`` / ``Relay`` (the relayed packet is
  the payload)); arguments and state are compressed Variants (``GodotCompressedBool``,
  ``GodotCompressedInt``, else ``GodotVariant``).
* Transport headers: ``GodotENetPeerHeader3`` (Godot 3.2-3.6; ``GodotENetPeerHeader3Until31`` for
  3.0/3.1), ``GodotENetSysMsg3`` (ENet channel 0), ``GodotWSMultiplayer3`` (the 9-byte WebSocket
  header) and ``GodotWSSys3``, ``GodotWSPeerId4`` (Godot 4 WebSocket peer id).

``GodotMP3(data)`` / ``GodotMP4(data)`` pick the class from the command byte. Crafting::

    GodotMP4RemoteCall(node_id=1, method_id=3, args=[Vector3(1, 2, 3), 7, True])
    GodotMP4RemoteCall(node_path="Main", method_id=0, args=["hi"])      # inline path, offset computed
    GodotMP3RemoteCall(target=1, method="chat", args=["hello"])

widths, flags, counts, sizes and offsets are computed unless set.
"""

from __future__ import annotations

import re
from typing import Any

from scapy.layers.inet import TCP, UDP
from scapy.packet import Packet, Raw

from ..multiplayer import godot3 as mp3
from ..multiplayer import godot4 as mp4
from ..multiplayer.layout import LayoutError, Scope, check_size, read_items
from ..multiplayer.packets import pick_form
from ..spec import multiplayer as M
from .bits import bit_fields
from .compressed import packet_value
from .fields import MISSING, DialectField, dialect_name
from .mplayout import (
    ItemListPlan,
    MPBase,
    byte_auto,
    item_fields,
    lookup,
    names_of,
    trailing_field,
)
from .mpsettings import SETTINGS, scapy_name
from .variant import ShownAtTop, _tail_field, short_text

LAYERS: dict[str, type[Packet]] = {}


def _camel(name: str) -> str:
    return "".join(w[:1].upper() + w[1:].lower() for w in re.split(r"[_\W]+", name) if w)


def _singular(name: str) -> str:
    return name[:-3] + "y" if name.endswith("ies") else name[:-1] if name.endswith("s") else name


def _form_suffix(form: M.Form, first: bool) -> str:
    if first:
        return ""
    if form.until:
        return "Until" + form.until.replace(".", "")
    return _camel(form.name)


class _MPLayer(MPBase):
    """A generated multiplayer layer (see the module docstring)."""

    protocol: M.Protocol | None = None
    command: M.Command | None = None
    form: M.Form | None = None
    case: M.Form | None = None
    #: the class of the bytes after this layer (transport headers; the relayed packet)
    next_layer: Any = None

    def payload_follows(self) -> bool:
        return type(self).next_layer is not None

    def guess_payload_class(self, payload: bytes) -> Any:
        nxt = type(self).next_layer
        if nxt is None:
            return Raw
        return nxt(self) if callable(nxt) and not isinstance(nxt, type) else nxt

    #: the name summaries start with (the protocol's base class for its commands)
    summary_name = ""

    def mysummary(self) -> Any:
        err = self.error()
        return f"{type(self).summary_name} {describe(self)}" + (f" <malformed: {err}>" if err else ""), [UDP, TCP]

    def error(self) -> str | None:
        """Where and why the engine rejects this packet (``godot_dissect.multiplayer``'s decoder on
        its bytes: "offset N: reason"), or None; transport headers: their length check."""
        cls = type(self)
        data = bytes(self)
        if cls.protocol is not None and cls.protocol.major == 3:
            return mp3.decode_packet(data, dialect_name(self)).error
        if cls.protocol is not None:
            form = cls.form.name if cls.form is not None and cls.command is not None and \
                len(cls.command.forms) > 1 else None
            return mp4.decode_packet(data, dialect_name(self), confirm_form=form).error
        try:
            if cls.form is not None:
                check_size(cls.form, len(data) - len(bytes(self.payload)), 0, self.name)
        except LayoutError as e:
            return str(e)
        return None


def text_of(v: Any) -> str | None:
    """A text field's value as text (what the engine reads: up to the first NUL); None when the
    data ended before it."""
    if isinstance(v, bytes):
        return v.split(b"\0", 1)[0].decode("utf-8", "replace")
    return v if isinstance(v, str) else None


def describe(p: Packet) -> str:
    """One line: the command and what it says, in the notation of ``godot-dissect read``
    (``REMOTE_CALL Main.chat("hi", 5)``, ``SIMPLIFY_PATH Main id=1``...)."""
    got = read_layer(p)
    kind, command = got.get("kind"), got.get("command", "")
    if kind == "error" and type(p).command is None:  # a transport header: its fields
        return " ".join(f"{k}={lookup(p, k)}" for k in type(p).mp_names)
    node = got.get("node")
    where = node if node is not None else f"node#{got.get('node_id')}"
    d = dialect_name(p)
    if kind == "rpc":
        name = got.get("method") or f"method#{got.get('method_id')}"
        args = ", ".join(short_text(v, d, 40) if v is not MISSING else "<malformed>" for v in got.get("args") or ())
        return f"{command} {where}.{name}({args})"
    if kind == "rset":
        v = got.get("value")
        return f"{command} {where}.{got.get('method')} = {short_text(v, d, 40) if v is not MISSING else '<malformed>'}"
    if kind in ("simplify_path", "confirm_path"):
        ident = f" id={got['node_id']}" if got.get("node_id") is not None else ""
        return f"{command} {node if node is not None else ''}{ident}".replace("  ", " ")
    if kind in ("peer", "sys") or type(p).case is not None:
        case = f" {type(p).case.name}" if type(p).case is not None else ""  # type: ignore[union-attr]
        peer = f" {got['peer']}" if got.get("peer") is not None else ""
        v = got.get("value")
        extra = f" {len(v)} bytes" if isinstance(v, bytes) else ""
        return f"{command}{case}{peer}{extra}"
    if kind == "raw":
        v = got.get("value")
        return f"{command} {len(v) if isinstance(v, bytes) else 0} bytes"
    names = type(p).mp_names
    fields = " ".join(f"{k}={lookup(p, k)}" for k in ("scene_id", "net_id", "time") if k in names)
    if "name" in names:
        fields += f" name={text_of(p.getfieldval(names['name']))}"
    return f"{command} {fields}".strip()


_NODE_IDS = ("target", "node_id", "path_id", "cache_id", "spawner_id")
_VALUES = ("value", "data", "auth", "state")


def read_layer(layer: Packet) -> dict[str, Any]:
    """kind, command, node, node_id, method, method_id, args, value, peer of one multiplayer layer,
    by the spec's field names (``godot_dissect.multiplayer`` reads the same packets into MpMessage)."""
    cls = type(layer)
    if cls is GodotWSPeerId4:
        return dict(kind="peer", command="PEER_ID", peer=lookup(layer, "peer"))
    if cls is GodotENetSysMsg3:
        names = M.ENET3_SYSMSG.items[0].values or {}  # type: ignore[union-attr]
        return dict(kind="peer", command=names.get(lookup(layer, "sysmsg"), "SYSMSG"), peer=lookup(layer, "peer"))
    if cls is GodotWSSys3:
        return dict(kind="peer", command="", peer=lookup(layer, "peer"))
    if cls is GodotWSMultiplayer3:
        got = read_layer(layer.payload) if isinstance(layer.payload, MPBase) else dict(kind="peer")
        if lookup(layer, "type") != WS3_DATA_TYPE:
            got["command"] = M.WS3_TYPES.get(lookup(layer, "type"), "")
        return got
    command = getattr(cls, "command", None)
    if command is None:
        return dict(kind="error", command="")
    names = cls.mp_names
    raw = layer.getfieldval
    out: dict[str, Any] = dict(kind=command.kind, command=command.name)
    inline = bool(lookup(layer, "inline_path"))
    if "node_path" in names and (inline or command.kind not in ("rpc", "rset")):
        out["node"] = text_of(raw(names["node_path"]))
    for key in _NODE_IDS:
        if key in names and not inline:
            out["node_id"] = lookup(layer, key)
            break
    for key in ("method", "property"):
        if key in names:
            out["method"] = text_of(raw(names[key]))
    if "method_id" in names:
        out["method_id"] = lookup(layer, "method_id")
    if "args" in names:
        fld = layer.get_field(names["args"])
        if fld.isconditional and not fld._evalcond(layer):  # byte-only: one PackedByteArray, or nothing
            data = raw(names["args"] + "_bytes")
            out["args"] = [bytes(data)] if isinstance(data, bytes) and data else []
        else:
            out["args"] = [packet_value(a) for a in raw(names["args"]) or ()]
    for key in _VALUES:
        if key in names:
            v = raw(names[key])
            if isinstance(v, (list, tuple)):
                v = [packet_value(x) for x in v]
            elif isinstance(v, Packet):
                v = packet_value(v)
            out["value"] = v
    if "entries" in names:
        out["value"] = [[packet_value(x) for x in e.getfieldval("state") or ()] for e in raw("entries") or ()]
    if "peer" in names:
        out["peer"] = lookup(layer, "peer")
    return out


def _make(clsname: str, items: tuple[M.FieldItem, ...], *, dialect: str, protocol: M.Protocol | None = None,
          command: M.Command | None = None, form: M.Form | None = None, case: M.Form | None = None,
          byte_defaults: dict[str, int] | None = None, item_defaults: dict[str, int] | None = None,
          next_layer: Any = None, doc: str = "", base: type[_MPLayer] | None = None,
          extra: dict[str, Any] | None = None) -> type[_MPLayer]:
    """One layer class from a layout (after the command byte, when there is one)."""
    byte_bits: tuple[M.BitField, ...] = ()
    if protocol is not None:
        byte_bits = tuple(protocol.command_byte.bits) + (command.flags if command is not None else ())
    if items and isinstance(items[-1], M.Blob) and items[-1].content == "packet":
        items = items[:-1]  # a whole packet at the end: the payload (next_layer)
    lay = ItemListPlan(items, byte_bits)
    groups: dict[str, type[Packet]] = {}

    def make_group(rep: M.Repeat) -> type[Packet]:
        glay = ItemListPlan(rep.items)
        gfields: list[Any] = []
        for it in rep.items:
            gfields += item_fields(glay, it, groups, make_group)
        return type(clsname + _camel(_singular(rep.name)), (MPBase,), {
            "__module__": __name__, "__doc__": rep.meaning or f"one of {clsname}.{rep.name}",
            "name": clsname + _camel(_singular(rep.name)), "fields_desc": [*gfields, trailing_field(), _tail_field()],
            "mp_names": names_of(rep.items), "mp_bits": glay.bits, "default_dialect": dialect, "__slots__": [],
        })

    fields: list[Any] = [ShownAtTop(DialectField(dialect), lambda p: not p._sub)]
    if byte_bits:
        defaults = dict(byte_defaults or {})
        autos = {b.name: a for b in byte_bits if b.name not in defaults and (a := byte_auto(lay, b)) is not None}
        fields += bit_fields(byte_bits, 8 * protocol.command_byte.size, defaults, autos,  # type: ignore[union-attr]
                             fixed=tuple(defaults), rename=scapy_name, notes=_byte_notes(protocol, command))
    for it in items:
        fields += item_fields(lay, it, groups, make_group)
    fields += [trailing_field(), _tail_field()]
    for name, value in (item_defaults or {}).items():  # a case class's selector is its case
        for f in fields:
            fld = getattr(f, "fld", f)
            if fld.name == scapy_name(name):
                fld.default, fld.rand_fn = value, None
    cls = type(clsname, (base or _MPLayer,), {**(extra or {}),
        "summary_name": f"GodotMP{protocol.major}" if protocol is not None else clsname,
        "__module__": __name__, "__doc__": doc, "name": clsname, "fields_desc": fields,
        "mp_names": names_of(items, byte_bits), "mp_bits": lay.bits, "default_dialect": dialect,
        "protocol": protocol, "command": command, "form": form, "case": case, "__slots__": [],
        "next_layer": next_layer,
    })
    LAYERS[clsname] = cls
    LAYERS.update({g.__name__: g for g in groups.values()})
    return cls


def _byte_notes(protocol: M.Protocol | None, command: M.Command | None) -> dict[str, Any]:
    """What the command byte's fields mean: the command name, the widths the flags select."""
    assert protocol is not None
    notes: dict[str, Any] = {"command": lambda p, v: protocol.command(v).c_name if protocol.command(v)
                             else "unknown command"}
    for b in command.flags if command is not None else ():
        if b.values:
            notes[b.name] = lambda p, v, names=b.values: names.get(v, "")
    return notes


# -- the protocols -----------------------------------------------------------------------------------
class _Dispatch:
    """Which class reads a packet of a protocol: by command, form (flags, size, setting), SYS case."""

    def __init__(self, protocol: M.Protocol, base: type[_MPLayer]) -> None:
        self.protocol, self.base = protocol, base
        self.forms: dict[tuple[int, str], type[_MPLayer]] = {}
        self.cases: dict[tuple[int, str], tuple[tuple[M.FieldItem, ...], M.Switch, dict[int, type[_MPLayer]]]] = {}

    def class_for(self, data: bytes) -> type[_MPLayer]:
        if not data:
            return self.base
        bits = self.protocol.command_byte.bits[0]
        command = self.protocol.command(bits.get(data[0]))
        if command is None:
            return self.base
        scope = Scope(values={"command": data[0], **{b.name: b.get(data[0]) for b in command.flags}})
        form = pick_form(command, scope, len(data), SETTINGS.get("confirm_form"))
        key = (command.id, form.name)
        cls = self.forms[key]
        sw = self.cases.get(key)
        if sw is None:
            return cls
        before, switch, by_case = sw
        try:
            read_items(before, data, 1, len(data), scope)
        except LayoutError:
            return cls
        return by_case.get(scope.get(switch.selector), cls)


DISPATCH: dict[int, _Dispatch] = {}


def _protocol_layers(protocol: M.Protocol, prefix: str, dialect: str) -> type[_MPLayer]:
    def dispatch_hook(cls: type[Packet], _pkt: bytes | None = None, *args: Any, **kw: Any) -> type[Packet]:
        if cls is not base or not _pkt:
            return cls
        return DISPATCH[protocol.major].class_for(_pkt)

    base = _make(prefix, (), dialect=dialect, protocol=protocol, extra={
        "dispatch_hook": classmethod(dispatch_hook), "match_subclass": True},
        doc=f"{protocol.meaning}: the command byte picks the class")
    table = DISPATCH[protocol.major] = _Dispatch(protocol, base)
    relayed = (lambda p: base)  # noqa: E731 - the next layer of a relay: a packet of this protocol
    for command in protocol.commands:
        for i, form in enumerate(command.forms):
            name = prefix + _camel(command.name) + _form_suffix(form, i == 0)
            defaults = {"command": command.id, **{c.name: c.operand for c in form.when if c.op == "=="}}
            doc = f"{command.c_name} ({command.kind}): {command.meaning}" + \
                (f"; form {form.name}: {form.meaning or ''} {form.since or ''}-{form.until or ''}" if
                 len(command.forms) > 1 else "")
            switch = form.items[-1] if form.items and isinstance(form.items[-1], M.Switch) else None
            items = form.items[:-1] if switch else form.items
            cls = _make(name, items, dialect=dialect, protocol=protocol, command=command, form=form,
                        byte_defaults=defaults, doc=doc, next_layer=relayed if _relays(form) else None, base=base)
            table.forms[(command.id, form.name)] = cls
            if switch is None:
                continue
            by_case = {}
            for key, case in switch.cases.items():
                by_case[key] = _make(name + _camel(case.name), items + case.items, dialect=dialect,
                                     protocol=protocol, command=command, form=form, case=case,
                                     byte_defaults=defaults, item_defaults={switch.selector: key},
                                     doc=f"{case.name}: {case.meaning}", base=cls,
                                     next_layer=relayed if _relays(case) else None)
            table.cases[(command.id, form.name)] = (items, switch, by_case)
    return base


def _relays(form: M.Form) -> bool:
    return bool(form.items) and isinstance(form.items[-1], M.Blob) and form.items[-1].content == "packet"


GodotMP3 = _protocol_layers(M.GODOT3, "GodotMP3", "godot3")
GodotMP4 = _protocol_layers(M.GODOT4, "GodotMP4", "godot4")


# -- transport headers -------------------------------------------------------------------------------
_HEADERS3 = {}
for _i, _form in enumerate(M.ENET3_PEER_HEADER):
    _HEADERS3[_form.name] = _make("GodotENetPeerHeader3" + _form_suffix(_form, _i == 0), _form.items,
                                  dialect="godot3", form=_form, next_layer=GodotMP3,
                                  doc=f"Godot {_form.name} NetworkedMultiplayerENet peer header: {_form.meaning}")
GodotENetPeerHeader3 = _HEADERS3[M.ENET3_PEER_HEADER[0].name]
GodotENetSysMsg3 = _make("GodotENetSysMsg3", M.ENET3_SYSMSG.items, dialect="godot3", form=M.ENET3_SYSMSG,
                         doc=M.ENET3_SYSMSG.meaning)
GodotWSSys3 = _make("GodotWSSys3", M.WS3_SYS.items, dialect="godot3", form=M.WS3_SYS, doc=M.WS3_SYS.meaning)
#: the WebSocket type that carries a MultiplayerAPI packet (the others carry a peer id)
WS3_DATA_TYPE = next(k for k, v in M.WS3_TYPES.items() if v == "SYS_NONE")


def _ws3_next(p: Packet) -> Any:
    return GodotMP3 if lookup(p, "type") == WS3_DATA_TYPE else GodotWSSys3


GodotWSMultiplayer3 = _make("GodotWSMultiplayer3", M.WS3_HEADER.items, dialect="godot3", form=M.WS3_HEADER,
                            next_layer=_ws3_next, doc=M.WS3_HEADER.meaning)
GodotWSPeerId4 = _make("GodotWSPeerId4", M.WS4_PEER_ID.items, dialect="godot4", form=M.WS4_PEER_ID,
                       doc=M.WS4_PEER_ID.meaning)


def enet3_header_class() -> type[Packet]:
    """The Godot 3 ENet peer header class the ``enet3_header`` setting names."""
    return _HEADERS3.get(SETTINGS.get("enet3_header") or M.ENET3_PEER_HEADER[0].name, GodotENetPeerHeader3)


#: the ENet channel of Godot 3's server -> client peer announcements (SYSCH_CONFIG)
ENET3_CONFIG_CHANNEL = next(c.number for c in M.ENET_CHANNELS[3].channels if c.name == "config")


def godot_payload_class(major: int, channel: int | None) -> type[Packet]:
    """The layer of an ENet packet's data for a Godot major version and ENet channel."""
    if major == 3:
        return GodotENetSysMsg3 if channel == ENET3_CONFIG_CHANNEL else enet3_header_class()
    return GodotMP4



__all__ = ["LAYERS", "describe", "enet3_header_class", "godot_payload_class", "read_layer", *LAYERS]
