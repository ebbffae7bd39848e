"""ENet 1.3 (as Godot bundles it) as scapy layers, generated from ``spec.enet`` at import.

``ENet`` is the protocol header (the peer word's bit fields, the optional sent time, and a
checksum when the ``checksum`` setting says the hosts use one) and ``commands``: a list of
``ENetCommand`` layers, one class per command (``ENetAcknowledge``, ``ENetConnect``, ...,
``ENetSendReliable``, ``ENetSendFragment``, ``ENetSendUnreliableFragment``), each with the command
header (flag bits, channel, reliable sequence number) and the command's body fields. The data of
the SEND_* commands is the command's payload: the Godot packet for the channel (Godot 3: the peer
header or the channel-0 message and the MultiplayerAPI packet; Godot 4: the SceneMultiplayer
packet) when unfragmented, ``ENetFragment`` when it is one fragment (join them with
``godot_dissect.scapy.enet_reassemble``). A compressed datagram's body is ``ENetCompressedBody``
(its commands shown, decompressed, when the ``compression`` setting names the codec).

Crafting: ``ENet(peer_id=0, sent_time_=5)/ENetSendReliable(channel=0)/GodotMP4RemoteCall(...)``
or ``ENet(commands=[ENetAcknowledge(...), ENetSendReliable()/...])``; ``data_length``, the
sent-time and compressed flags are computed unless set. Which Godot version the data is read
as: see ``godot_dissect.scapy.mpsettings``.
"""

from __future__ import annotations

from typing import Any

from scapy.config import conf
from scapy.fields import ConditionalField, Field, PacketListField, StrField
from scapy.layers.inet import UDP
from scapy.packet import NoPayload, Packet, Raw

from ..enet import parse_datagram
from ..enet.compression import compress
from ..multiplayer import godot3 as mp3
from ..multiplayer import godot4 as mp4
from ..spec import enet as spec
from ..spec.enet import COMPRESSIONS_BY_NAME
from ..spec.multiplayer import ENET3_PEER_HEADER, ENET_CHANNELS
from ..spec.words import IntField
from . import flows
from .bits import bit_fields
from .mpsettings import SETTINGS, port_compression, port_major, scapy_name
from .multiplayer import godot_payload_class


def _camel(name: str) -> str:
    return "".join(w[:1] + w[1:].lower() for w in name.split("_"))


class ENetField(Field):
    """A big-endian ENet field from the spec (a ``spec.words.IntField``), with its meaning as doc."""

    __slots__ = ["meaning"]

    def __init__(self, f: IntField, default: Any) -> None:
        self.meaning = f.meaning
        Field.__init__(self, scapy_name(f.name), default, f.code)

    def i2m(self, pkt: Packet | None, x: Any) -> Any:
        return 0 if x is None else x

    def i2repr(self, pkt: Packet | None, x: Any) -> str:
        if self.name == "channel" and x == spec.CONTROL_CHANNEL:
            return f"{x} (control)"
        d = getattr(type(pkt), "definition", None)
        if self.name == "channel" and isinstance(x, int) and d is not None and d.delivery is not None:
            major = major_of(enet_of(pkt))
            if major in ENET_CHANNELS:
                return f"{x} ({ENET_CHANNELS[major].name(x)})"
        return Field.i2repr(self, pkt, x)


# -- commands ----------------------------------------------------------------------------------------
_HEADER_FIELDS = spec.COMMAND_HEADER[1:]  # channel, reliable_seq (the first byte is COMMAND_BITS)


def _number_note(pkt: Packet, v: int) -> str:
    d = spec.COMMANDS_BY_NUMBER.get(v)
    return d.name if d is not None else "unknown: ENet stops reading the datagram"


def _command_header(defaults: dict[str, Any], fixed: tuple[str, ...]) -> list[Any]:
    return [*bit_fields(spec.COMMAND_BITS, 8 * spec.COMMAND_HEADER[0].size, defaults, {}, fixed=fixed,
                        rename=scapy_name, notes={"number": _number_note}),
            *(ENetField(f, defaults.get(f.name, 0)) for f in _HEADER_FIELDS)]


class ENetCommand(Packet):
    """An ENet command; ``ENetCommand(data)`` picks the class from the command number."""

    name = "ENetCommand"
    match_subclass = True
    definition: spec.CommandDef | None = None
    fields_desc = _command_header({}, ())

    @classmethod
    def dispatch_hook(cls, _pkt: bytes | None = None, *args: Any, **kw: Any) -> type[Packet]:
        if cls is not ENetCommand or not _pkt:
            return cls
        return command_class(_pkt)

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes | None]:
        d = type(self).definition
        if d is None or d.data_length is None:
            return b"", s
        n = self.getfieldval(d.data_length)
        n = len(s) if n is None else n
        return s[:n], s[n:]

    def guess_payload_class(self, payload: bytes) -> Any:
        d = type(self).definition
        if d is None or d.data_length is None:
            return ENetCommand  # a chained command (crafted as ENet()/ENetPing()/ENetSendReliable())
        if d.fragment_key is not None:
            return ENetFragment
        return data_class(self, payload)

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        d = type(self).definition
        if d is not None and d.data_length is not None and self.getfieldval(d.data_length) is None:
            at = spec.COMMAND_HEADER_SIZE
            for f in d.fields:
                if f.name == d.data_length:
                    n = len(pay) & ((1 << (8 * f.size)) - 1)
                    pkt = pkt[:at] + n.to_bytes(f.size, "big") + pkt[at + f.size:]
                    break
                at += f.size
        return pkt + pay

    def mysummary(self) -> str:
        d = type(self).definition
        name = d.name if d else f"command {self.number}"
        flags = "".join(c for c, on in (("A", self.ack_requested), ("U", self.unsequenced)) if on)
        extra = ""
        if d is not None and d.fragment_key is not None:
            extra = f" {self.fragment_number + 1}/{self.fragment_count} @{self.fragment_offset} of {self.total_length}"
        return f"ENet {name}{'[' + flags + ']' if flags else ''} ch={self.channel} seq={self.reliable_seq}{extra}"


def _command_layer(d: spec.CommandDef) -> type[ENetCommand]:
    sent = d.sent_flags[0] if d.sent_flags else 0
    defaults: dict[str, Any] = {
        "number": d.number,
        "ack_requested": spec.FLAG_ACKNOWLEDGE.get(sent),
        "unsequenced": spec.FLAG_UNSEQUENCED.get(sent),
        "channel": spec.CONTROL_CHANNEL if d.delivery is None else 0,
    }
    body = [ENetField(f, None if f.name == d.data_length else 0) for f in d.fields]
    name = "ENet" + _camel(d.name)
    return type(name, (ENetCommand,), {
        "__module__": __name__, "__doc__": f"{d.c_name} ({d.number}): {d.meaning}", "name": name,
        "definition": d, "fields_desc": [*_command_header(defaults, ("number",)), *body],
    })


COMMAND_LAYERS: dict[int, type[ENetCommand]] = {d.number: _command_layer(d) for d in spec.COMMANDS}


class ENetCommandTruncated(Packet):
    """The last bytes of a datagram, too few for the command they start (ENet stops there)."""

    name = "ENetCommandTruncated"
    fields_desc = [StrField("load", b"")]

    def mysummary(self) -> str:
        return f"ENet truncated command: {why_truncated(bytes(self.load))}"


class ENetCommandUnknown(Packet):
    """A command number ENet does not know (0 or 13-15): ENet stops reading the datagram here."""

    name = "ENetCommandUnknown"
    fields_desc = [*_command_header({}, ()), StrField("load", b"")]

    def mysummary(self) -> str:
        return f"ENet unknown command {self.number}: the rest of the datagram is not read"


def why_truncated(data: bytes) -> str:
    if len(data) < spec.COMMAND_HEADER_SIZE:
        return f"{len(data)} bytes left, a command header needs {spec.COMMAND_HEADER_SIZE}"
    d = spec.COMMANDS_BY_NUMBER.get(spec.COMMAND_NUMBER.get(data[0]))
    return f"{d.name if d else '?'} needs {d.size if d else '?'} bytes, {len(data)} left"


def command_class(data: bytes) -> type[Packet]:
    """The layer for the command at the start of ``data``."""
    if len(data) < spec.COMMAND_HEADER_SIZE:
        return ENetCommandTruncated
    cls = COMMAND_LAYERS.get(spec.COMMAND_NUMBER.get(data[0]))
    if cls is None:
        return ENetCommandUnknown
    if len(data) < cls.definition.size:  # type: ignore[union-attr]
        return ENetCommandTruncated
    return cls


class ENetCommandsField(PacketListField):
    """The commands of a datagram, read until the bytes end (bounded: a command is >= 4 bytes)."""

    def __init__(self, name: str) -> None:
        PacketListField.__init__(self, name, [], ENetCommand)

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, list[Packet]]:
        out: list[Packet] = []
        while s:
            cls = command_class(s)
            p = cls(s, _parent=pkt)
            pad = p.lastlayer()
            if isinstance(pad, conf.padding_layer):
                s = pad.load
                del pad.underlayer.payload
            else:
                s = b""
            out.append(p)
            if isinstance(p, ENetCommand):
                note_connect(pkt, p)
        return b"", out


# -- the datagram --------------------------------------------------------------------------------------
def _has_sent_time(p: Packet) -> int:
    if p.getfieldval(scapy_name(spec.HEADER_SENT_TIME.name)) is not None:
        return 1
    return int(any(c.getfieldval("ack_requested") for c in commands_of(p) if isinstance(c, ENetCommand)))


def _compressed(p: Packet) -> int:
    return int(isinstance(p.payload, ENetCompressedBody))


def _header_size(data: bytes) -> int:
    n = spec.HEADER_PEER_WORD.size
    if len(data) >= n and spec.FLAG_SENT_TIME.get(int.from_bytes(data[:n], "big")):
        n += spec.HEADER_SENT_TIME.size
    return n + (spec.HEADER_CHECKSUM.size if SETTINGS.get("checksum") else 0)


class ENet(Packet):
    """One ENet datagram: header and commands (or a compressed body)."""

    name = "ENet"
    __slots__ = ["_major"]
    fields_desc = [
        *bit_fields(spec.HEADER_BITS, 8 * spec.HEADER_PEER_WORD.size, {},
                    {"has_sent_time": _has_sent_time, "compressed": _compressed},
                    notes={"peer_id": lambda p, v: "unassigned: CONNECT" if v == spec.UNASSIGNED_PEER_ID else ""}),
        ConditionalField(ENetField(spec.HEADER_SENT_TIME, None), lambda p: bool(p.get_field("has_sent_time").i2m(
            p, p.getfieldval("has_sent_time")))),
        ConditionalField(ENetField(spec.HEADER_CHECKSUM, 0), lambda p: bool(SETTINGS.get("checksum"))),
        ConditionalField(ENetCommandsField("commands"),
                         lambda p: not p.get_field("compressed").i2m(p, p.getfieldval("compressed"))),
    ]

    def __init__(self, _pkt: bytes = b"", *args: Any, major: int | None = None, **kw: Any) -> None:
        object.__setattr__(self, "_major", major)
        Packet.__init__(self, _pkt, *args, **kw)

    @classmethod
    def dispatch_hook(cls, _pkt: bytes | None = None, *args: Any, **kw: Any) -> type[Packet]:
        if _pkt and len(_pkt) < _header_size(_pkt):
            return ENetTruncated
        return cls

    def copy(self) -> Any:
        clone = Packet.copy(self)
        object.__setattr__(clone, "_major", self._major)
        return clone

    def guess_payload_class(self, payload: bytes) -> Any:
        if self.get_field("compressed").i2m(self, self.getfieldval("compressed")):
            return ENetCompressedBody
        return ENetCommand

    def mysummary(self) -> Any:
        what = ("compressed: " if self.compressed else "") + commands_summary(commands_of(self))
        err = self.error()
        return f"ENet peer={self.peer_id} {what}".rstrip() + (f" <malformed: {err}>" if err else ""), [UDP]

    def error(self) -> str | None:
        """Where and why ENet's receiver stops reading this datagram (``godot_dissect.enet``'s
        parser on its bytes), or None."""
        body = self.payload
        codec = body.codec_name() if isinstance(body, ENetCompressedBody) else None
        dg = parse_datagram(bytes(self), compression=codec if codec in COMPRESSIONS_BY_NAME else None,
                            checksum=bool(SETTINGS.get("checksum")))
        return str(dg.error) if dg.error is not None else None

    def answers(self, other: Packet) -> int:
        return int(isinstance(other, ENet))


class ENetTruncated(Packet):
    """A UDP payload too short for the ENet header."""

    name = "ENetTruncated"
    fields_desc = [StrField("load", b"")]

    def __init__(self, _pkt: bytes = b"", *args: Any, major: int | None = None, **kw: Any) -> None:
        Packet.__init__(self, _pkt, *args, **kw)

    def mysummary(self) -> str:
        return f"ENet datagram of {len(self.load)} bytes: too short for the header"


def commands_of(p: Packet) -> list[Packet]:
    """The commands of an ENet datagram: its list, then any chained as payload (crafting)."""
    out = list(p.getfieldval("commands") or [])
    layer = p.payload
    while isinstance(layer, ENetCommand):
        out.append(layer)
        layer = layer.payload
    if isinstance(layer, ENetCompressedBody) and isinstance(layer.payload, ENetBody):
        return out + commands_of(layer.payload)
    return out


class ENetCompressedBody(Packet):
    """The body of a compressed datagram as sent. With a codec (the ``codec`` field or the
    ``compression`` setting) the decompressed commands are shown after it (they are not built:
    ``data`` is what goes on the wire; leave it unset to compress the ``ENetBody`` that follows)."""

    name = "ENetCompressedBody"
    # shown by show(); the bytes are made by self_build / read by do_dissect
    fields_desc = [StrField("codec", None), StrField("data", None)]

    def self_build(self) -> bytes:
        data = self.getfieldval("data")
        if data is not None:
            return bytes(data)
        codec = self.codec_name()
        body = bytes(self.payload)
        if codec is None:
            raise ValueError("ENetCompressedBody without data needs a codec to compress the commands")
        return compress(body, codec)

    def codec_name(self) -> str | None:
        c = self.getfieldval("codec")
        c = c.decode() if isinstance(c, bytes) else c
        if c:
            return c.split(" ", 1)[0]
        l4 = self.underlayer.underlayer if self.underlayer is not None else None
        if isinstance(l4, UDP):
            return port_compression(l4.sport, l4.dport)
        return SETTINGS.get("compression")

    def do_dissect(self, s: bytes) -> bytes:
        self.fields["data"] = s
        codec = self.codec_name()
        enet = self.underlayer
        if not codec or codec == "none" or not isinstance(enet, ENet) or not enet.original:
            return b""
        dg = parse_datagram(enet.original, compression=codec, checksum=bool(SETTINGS.get("checksum")))
        if dg.decompressed is None:
            self.fields["codec"] = f"{codec} (failed: {dg.error})"
            return b""
        self.fields["codec"] = codec
        return dg.decompressed[:len(dg.decompressed) - dg.padding]  # FastLZ's zero padding is not a command

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes | None]:
        return s, None

    def do_build_payload(self) -> bytes:
        return b""  # the decompressed commands are shown, the compressed bytes are sent

    def guess_payload_class(self, payload: bytes) -> Any:
        return ENetBody


class ENetBody(Packet):
    """The commands of a compressed datagram, decompressed (shown after ``ENetCompressedBody``)."""

    name = "ENetBody"
    fields_desc = [ENetCommandsField("commands")]

    def mysummary(self) -> str:
        return "ENetBody " + commands_summary(list(self.commands))


def commands_summary(cmds: list[Packet]) -> str:
    """``ACKNOWLEDGE x3; SEND_RELIABLE ch1 GodotMP3 REMOTE_CALL Main.chat(...)``."""
    parts: list[str] = []
    for c in cmds:
        godot = [lay for lay in payload_layers(c) if not isinstance(lay, (ENetFragment, Raw))]
        shown = godot[-1].mysummary() if godot else ""
        shown = shown[0] if isinstance(shown, tuple) else shown
        d = getattr(type(c), "definition", None)
        if d is not None and d.fragment_key is not None:
            shown = f"fragment {c.fragment_number + 1}/{c.fragment_count} @{c.fragment_offset} of {c.total_length}"
        text = _command_name(c) + (f" ch{c.channel} {shown}" if shown else "")
        if parts and parts[-1].split(" x")[0] == text and not shown:
            n = int(parts[-1].split(" x")[1]) + 1 if " x" in parts[-1] else 2
            parts[-1] = f"{text} x{n}"
        else:
            parts.append(text)
    return "; ".join(parts)


def _command_name(c: Packet) -> str:
    d = getattr(type(c), "definition", None)
    return d.name if d is not None else type(c).__name__


class ENetFragment(Raw):
    """The data of one fragment (SEND_FRAGMENT, SEND_UNRELIABLE_FRAGMENT)."""

    name = "ENetFragment"

    def mysummary(self) -> str:
        return f"ENetFragment {len(self.load)} bytes"


# -- which Godot speaks: flows ---------------------------------------------------------------------------
def enet_of(layer: Packet | None) -> ENet | None:
    while layer is not None and not isinstance(layer, ENet):
        layer = layer.parent or layer.underlayer
    return layer


def _flow_key(enet: ENet | None) -> Any:
    l4 = enet.underlayer if enet is not None else None
    return flows.flow_key(l4) if isinstance(l4, UDP) else None


def note_connect(where: Packet, cmd: Packet) -> None:
    """A CONNECT / VERIFY_CONNECT tells which Godot made the connection: remember it per flow."""
    d = type(cmd).definition
    if d is None or "channel_count" not in d.field_names:
        return
    major = spec.GODOT_MAJOR_BY_CHANNEL_COUNT.get(cmd.getfieldval("channel_count"))
    key = _flow_key(enet_of(where))
    if major is not None and key is not None:
        flows.TABLE.add(key).major = major


def major_of(enet: ENet | None, payload: bytes = b"", channel: int | None = None) -> int | None:
    """The Godot major version an ENet datagram's data is read as (see ``mpsettings``)."""
    if enet is not None and enet._major is not None:
        return enet._major
    l4 = enet.underlayer if enet is not None else None
    if isinstance(l4, UDP):
        fixed = port_major("udp", l4.sport, l4.dport)
        if fixed is not None:
            return fixed
    if SETTINGS.get("major") is not None:
        return SETTINGS["major"]
    key = _flow_key(enet)
    flow = flows.TABLE.get(key)
    if flow is not None and flow.major is not None:
        return flow.major
    guess = guess_major(payload, channel)
    if guess is not None and key is not None:
        flows.TABLE.add(key).major = guess
    return guess


_G3_HEADER = ENET3_PEER_HEADER[0].min_size


def guess_major(data: bytes, channel: int | None) -> int | None:
    """3 or 4 from one packet: a Godot 3 peer header with a MultiplayerAPI packet the Godot 3
    decoder reads cleanly, or a SceneMultiplayer packet the Godot 4 decoder reads cleanly."""
    if not data:
        return None
    if len(data) > _G3_HEADER and not mp3.decode_packet(data[_G3_HEADER:]).error:
        return 3
    if not mp4.decode_packet(data).error:
        return 4
    return None


def data_class(cmd: Packet, payload: bytes) -> Any:
    enet = enet_of(cmd)
    channel = cmd.getfieldval("channel")
    major = major_of(enet, payload, channel)
    if major is None:
        return Raw
    return godot_payload_class(major, channel)


def payload_layers(p: Packet) -> list[Packet]:
    """The layers after a command (its data), up to the next command or the end."""
    out = []
    layer = p.payload
    while not isinstance(layer, (NoPayload, ENetCommand, conf.padding_layer)):
        out.append(layer)
        layer = layer.payload
    return out


ENET_LAYERS: dict[str, type[Packet]] = {c.__name__: c for c in COMMAND_LAYERS.values()}

__all__ = [
    "COMMAND_LAYERS", "ENET_LAYERS", "ENet", "ENetCommand", "ENetCommandTruncated", "ENetCommandUnknown",
    "ENetCompressedBody", "ENetFragment", "ENetTruncated", "commands_of", "major_of", *ENET_LAYERS,
]
