"""Framing layers: how Variants travel.

* UDP: the datagram is one Variant (``UDP / GodotVariant``), no header.
* TCP: ``GodotPDU`` = u32 little-endian length + one Variant (``StreamPeer.put_var``,
  ``PacketPeerStream``); a segment holding several PDUs dissects as a chain of them.
* Remote debugger (TCP 6007): ``GodotDebugger`` = one debugger message, its PDUs in ``parts``:
  Godot 4 sends one Array ``[name, thread_id, data]``; a Godot 3 game sends the name, the argument
  count and each argument as PDUs of their own; the Godot 3 editor sends ``[command, args...]``.
* WebSocket: ``GodotWebSocket`` = one message (its frames, unmasked), with the Variant (binary
  message) or ``WebSocketText`` as its payload; ``GodotWSHandshake`` is the HTTP upgrade.

Each framing class has ``tcp_reassemble`` so ``sniff(offline=..., session=TCPSession)`` returns
whole messages even when a length prefix and its body are in separate segments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scapy.config import conf
from scapy.fields import BitEnumField, BitField, ConditionalField, LongField, ShortField, StrFixedLenField
from scapy.layers.inet import TCP, UDP
from scapy.packet import Packet, Raw

from ..errors import DecodeError
from ..spec import get_dialect
from ..spec.transports import (
    HTTP_STARTS,
    LENGTH_PREFIX,
    MAX_DEBUGGER3_ARGS,
    MAX_PDU,
    MAX_WS_MESSAGE,
    WS_BINARY,
    WS_CONTROL_MIN,
    WS_FIN,
    WS_LEN7_MASK,
    WS_LEN16,
    WS_LEN16_FIELD,
    WS_LEN64,
    WS_LEN64_FIELD,
    WS_MASK_KEY_SIZE,
    WS_MASKED,
    WS_OPCODE_MASK,
    WS_OPCODES,
    WS_RSV_SHIFT,
    WS_TEXT,
    parse_ws_header,
    unmask,
)
from . import flows
from .fields import (
    AUTO,
    MISSING,
    RAW_FIELDS,
    BytesField,
    DialectField,
    NumField,
    Short,
    dialect_name,
    plain,
    raw_fields,
)
from .variant import GodotOpaque, GodotVariant, VariantField, _GodotBase, _ListField, _tail_field, short_text

_U32 = LENGTH_PREFIX


def _ctx_from(kw: dict[str, Any], ctx: Any) -> Any:
    if ctx is not None:
        return ctx
    return flows.context_of(kw.get("_underlayer"))


def _session_ctx(metadata: dict[str, Any], session: dict[str, Any]) -> Any:
    ctx = flows.context_of_packet(metadata.get("original"))
    if ctx[0] is not None:
        session["godot_ctx"] = ctx
        return ctx
    return session.get("godot_ctx", flows.NO_CONTEXT)


class _Framing(_GodotBase):
    """A framing layer: its dialect is chosen per message unless set (``dialect="godot3"``)."""

    __slots__ = ["_pre", "_fixed"]
    _has_pre = True

    def __init__(self, _pkt: bytes = b"", *args: Any, dialect: Any = None, _pre: Any = None, _depth: int = 0,
                 _sub: bool = False, _ctx: Any = None, **kw: Any) -> None:
        self._init_slots(_depth, _sub, _ctx_from(kw, _ctx) if _pkt else _ctx)
        object.__setattr__(self, "_pre", _pre)
        fixed = None if dialect in (None, "auto") else get_dialect(dialect if isinstance(dialect, str)
                                                                   else dialect.name).name
        object.__setattr__(self, "_fixed", fixed)
        Packet.__init__(self, _pkt, *args, **kw)
        if fixed is not None:
            RAW_FIELDS.__get__(self)["dialect"] = fixed

    def copy(self) -> Any:
        clone = _GodotBase.copy(self)
        object.__setattr__(clone, "_pre", None)
        object.__setattr__(clone, "_fixed", self._fixed)
        return clone

    def choose(self, body: bytes) -> tuple[str, Any]:
        if self._fixed is not None:
            return self._fixed, flows.read(body, self._fixed)
        ctx = self._ctx or flows.NO_CONTEXT
        return flows.choose(body, ctx, default="godot4")

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes | None]:
        return s, None


# -- u32 length-prefixed PDUs ----------------------------------------------------------------------
def _pdu_trailing(p: Packet) -> int:
    raw = RAW_FIELDS.__get__(p)
    v = raw.get("variant")
    span = v._span if isinstance(v, _GodotBase) else 0
    return max(plain(raw.get("length")) - span, 0)


def _pdu_length(p: Packet) -> int:
    v = p.getfieldval("variant")
    n = len(bytes(v)) if isinstance(v, Packet) else 0
    t = p.getfieldval("trailing")
    return n + (len(t) if isinstance(t, bytes) else 0)


class GodotPDU(_Framing):
    """``[u32 length][Variant]`` as ``StreamPeer.put_var`` writes it."""

    name = "GodotPDU"
    fields_desc = [
        DialectField("auto"),
        NumField("length", AUTO, "<I", auto_fn=_pdu_length),
        VariantField("variant", span_from=lambda p: plain(RAW_FIELDS.__get__(p).get("length"))),
        BytesField("trailing", b"", length_from=_pdu_trailing, partial_ok=True),
        _tail_field(),
    ]

    def do_dissect(self, s: bytes) -> bytes:
        if len(s) >= 4:
            n = _U32.unpack_from(s)[0]
            body = s[4:4 + n]
            if body and self._pre is None:
                d, r = self.choose(body)
                object.__setattr__(self, "_pre", r if 0 < r[1] <= len(body) else None)
            else:
                d = self._fixed or dialect_name(self)
            object.__setattr__(self, "_dn", d)
            RAW_FIELDS.__get__(self)["dialect"] = d
        rest = _GodotBase.do_dissect(self, s)
        object.__setattr__(self, "_pre", None)
        return rest

    def guess_payload_class(self, payload: bytes) -> Any:
        return GodotPDU

    def dissect(self, s: bytes) -> None:
        rest = self.do_dissect(s)
        if rest and not self._sub:
            self.add_payload(GodotPDU(rest, _internal=1, _underlayer=self, _ctx=self._ctx, dialect=self._fixed))

    def to_value(self) -> Any:
        """The Variant's value (``DecodeError`` when the PDU does not hold a whole one)."""
        v = self.getfieldval("variant")
        if not isinstance(v, (GodotVariant, GodotOpaque)):
            raise DecodeError(0, "the PDU holds no Variant")
        return v.to_value()

    @classmethod
    def from_value(cls, value: Any, dialect: Any = "godot4") -> GodotPDU:
        d = get_dialect(dialect if isinstance(dialect, str) else dialect.name).name
        return cls(dialect=d, variant=GodotVariant.from_value(value, d))

    def mysummary(self) -> Any:
        v = raw_fields(self).get("variant")
        s = v.mysummary()[0][13:] if isinstance(v, GodotVariant) else "<incomplete>"
        return f"GodotPDU {s}", [TCP, UDP]

    @classmethod
    def tcp_reassemble(cls, data: bytes, metadata: dict[str, Any], session: dict[str, Any]) -> Packet | None:
        ctx = _session_ctx(metadata, session)
        pos = 0
        while len(data) - pos >= 4:
            n = _U32.unpack_from(data, pos)[0]
            if n > MAX_PDU:
                break
            if len(data) - pos - 4 < n:
                metadata["tcp_min_len"] = pos + 4 + n
                break
            if pos == 0 and flows.needs_confirmation(ctx):
                ok = flows.plausible(data[4:4 + n])
                flows.confirm(ctx, "pdu", ok)
                if not ok:
                    return conf.raw_layer(data)
            pos += 4 + n
        if pos == 0:
            if len(data) >= 4 and _U32.unpack_from(data)[0] > MAX_PDU or metadata.get("tcp_end"):
                return conf.raw_layer(data)  # not (or no longer) a stream of PDUs
            return None
        pkt = cls(data[:pos], _ctx=ctx)
        if pos < len(data):
            pkt.add_payload(conf.padding_layer(data[pos:]))
        return pkt


# -- the remote debugger ---------------------------------------------------------------------------
def debugger_spans(data: bytes, pos: int, chooser: Any) -> tuple[list[tuple[int, int, str, Any]], bool]:
    """The PDUs of one debugger message at ``pos``: [(start, body length, dialect, reading)], and
    whether the message is complete."""
    parts: list[tuple[int, int, str, Any]] = []

    def pdu(at: int) -> tuple[int, int, str, Any] | None:
        if len(data) - at < 4:
            return None
        n = _U32.unpack_from(data, at)[0]
        if n > MAX_PDU or len(data) - at - 4 < n:
            return None
        d, r = chooser(data[at + 4:at + 4 + n])
        return at, n, d, r

    first = pdu(pos)
    if first is None:
        return parts, False
    parts.append(first)
    v = first[3][0] if first[3][1] >= 0 else None
    if not isinstance(v, str):
        return parts, True
    at = pos + 4 + first[1]
    second = pdu(at)
    if second is None:
        return parts, False
    parts.append(second)
    count = second[3][0] if second[3][1] >= 0 else None
    if not isinstance(count, int) or isinstance(count, bool) or count < 0 or count > MAX_DEBUGGER3_ARGS:
        return parts, True  # a name without a (possible) argument count: malformed, ends here
    at += 4 + second[1]
    for _ in range(count):
        p = pdu(at)
        if p is None:
            return parts, False
        parts.append(p)
        at += 4 + p[1]
    return parts, True


def _message_end(parts: list[tuple[int, int, str, Any]]) -> int:
    start, n = parts[-1][0], parts[-1][1]
    return start + 4 + n


class _DebuggerParts(_ListField):
    __slots__ = []

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        spans, complete = debugger_spans(s, 0, pkt.choose)
        items = []
        for start, n, d, r in spans:
            items.append(GodotPDU(s[start:start + 4 + n], dialect=d, _pre=r if r[1] > 0 else None, _ctx=pkt._ctx,
                                  _sub=True, _internal=1, _parent=pkt))
        end = _message_end(spans) if spans else 0
        if not complete and end < len(s):
            # a PDU that has not all arrived (dissecting segment by segment)
            rest = s[end:]
            items.append(GodotPDU(rest, dialect=pkt._fixed, _ctx=pkt._ctx, _sub=True, _internal=1, _parent=pkt))
            end = len(s)
        if spans:
            object.__setattr__(pkt, "_dn", spans[0][2])
        return s[end:], items

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        if isinstance(x, (list, tuple)):
            d = dialect_name(pkt)
            return [it if isinstance(it, Packet) else GodotPDU.from_value(it, d) for it in x]
        return x


class GodotDebugger(_Framing):
    """One remote-debugger message and the PDUs it was sent as."""

    name = "GodotDebugger"
    fields_desc = [DialectField("auto"), _DebuggerParts("parts", lambda p: 0), _tail_field()]

    def guess_payload_class(self, payload: bytes) -> Any:
        return GodotDebugger

    def dissect(self, s: bytes) -> None:
        rest = self.do_dissect(s)
        if rest and not self._sub:
            self.add_payload(GodotDebugger(rest, _internal=1, _underlayer=self, _ctx=self._ctx, dialect=self._fixed))

    def values(self) -> list[Any]:
        out = []
        for p in self.getfieldval("parts"):
            try:
                out.append(p.to_value())
            except Exception:  # noqa: BLE001 - a malformed part
                out.append(MISSING)
        return out

    def message(self) -> tuple[str | None, int | None, Any]:
        """(message name, thread id or None, arguments) as the debugger means them; the name is
        None when the PDUs are not a debugger message (the value is then the first PDU's)."""
        vals = self.values()
        if not vals:
            return None, None, None
        family = get_dialect(dialect_name(self)).family
        v = vals[0]
        if len(vals) >= 2 and isinstance(v, str):  # Godot 3 game: name, count, arguments
            return v, None, vals[2:]
        if family >= 4:
            if isinstance(v, list) and len(v) == 3 and isinstance(v[0], str) and isinstance(v[1], int) \
                    and isinstance(v[2], list):
                return v[0], v[1], v[2]
            if isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], list):
                return v[0], None, v[1]
            return None, None, v
        if isinstance(v, list) and v and isinstance(v[0], str):  # Godot 3 editor: [command, args...]
            return v[0], None, v[1:]
        return None, None, v

    @classmethod
    def from_message(cls, name: str, args: list[Any], dialect: Any = "godot4", thread: int | None = 1) -> GodotDebugger:
        """A debugger message as the engine of ``dialect`` sends it (Godot 3: the game's form)."""
        d = get_dialect(dialect if isinstance(dialect, str) else dialect.name)
        if d.family >= 4:
            value = [name, thread, list(args)] if thread is not None else [name, list(args)]
            parts = [GodotPDU.from_value(value, d.name)]
        else:
            parts = [GodotPDU.from_value(v, d.name) for v in (name, len(args), *args)]
        return cls(dialect=d.name, parts=parts)

    def mysummary(self) -> Any:
        name, thread, args = self.message()
        d = dialect_name(self)
        if name is None:
            return f"GodotDebugger {short_text(args, d)}", [TCP]
        what = short_text(list(args) if isinstance(args, list) else args, d)
        return f"GodotDebugger {name} {what}" + (f" (thread {thread})" if thread is not None else ""), [TCP]

    @classmethod
    def tcp_reassemble(cls, data: bytes, metadata: dict[str, Any], session: dict[str, Any]) -> Packet | None:
        ctx = _session_ctx(metadata, session)

        def chooser(body: bytes) -> tuple[str, Any]:
            return flows.choose(body, ctx, default="godot4")

        pos = 0
        while pos < len(data):
            if len(data) - pos >= 4 and _U32.unpack_from(data, pos)[0] > MAX_PDU:
                if pos == 0:
                    return conf.raw_layer(data)
                break
            spans, complete = debugger_spans(data, pos, chooser)
            if not complete:
                break
            pos = _message_end(spans)
        if pos == 0:
            return conf.raw_layer(data) if metadata.get("tcp_end") else None
        pkt = cls(data[:pos], _ctx=ctx)
        if pos < len(data):
            pkt.add_payload(conf.padding_layer(data[pos:]))
        return pkt


# -- WebSocket --------------------------------------------------------------------------------------
def parse_frame(s: bytes, pos: int) -> tuple[dict[str, Any], int] | None:
    """One RFC 6455 frame at ``pos`` (``spec.transports.parse_ws_header``): (its fields, unmasked
    data included; end) or None when it has not all arrived."""
    h = parse_ws_header(s, pos)
    if h is None:
        return None
    f: dict[str, Any] = {"fin": int(h.fin), "rsv": h.rsv, "opcode": h.opcode, "mask": int(h.masked), "len7": h.len7}
    if h.len7 == WS_LEN16:
        f["len16"] = h.length
    elif h.len7 == WS_LEN64:
        f["len64"] = h.length
    if h.masked:
        f["key"] = h.key
    at = pos + h.size
    if len(s) - at < h.length:
        return None
    data = s[at:at + h.length]
    f["data"] = unmask(data, h.key) if h.masked else data
    return f, at + h.length


def oversized(s: bytes, pos: int) -> bool:
    """Does the frame at ``pos`` claim more than a Godot peer takes (``MAX_WS_MESSAGE``)?"""
    h = parse_ws_header(s, pos)
    return h is not None and h.length > MAX_WS_MESSAGE


def message_frames(s: bytes, pos: int) -> tuple[list[tuple[dict[str, Any], int]], bool]:
    """The frames of one message at ``pos`` (data frames up to FIN, control frames between them
    included; a control frame alone is a message), and whether it is complete."""
    frames = []
    started = False
    while True:
        fr = parse_frame(s, pos)
        if fr is None:
            return frames, False
        frames.append(fr)
        pos = fr[1]
        op = fr[0]["opcode"]
        if op >= WS_CONTROL_MIN:
            if not started:
                return frames, True
            continue
        started = True
        if fr[0]["fin"]:
            return frames, True


class WebSocketFrame(Packet):
    """One RFC 6455 frame; ``data`` is the payload unmasked (masked again when built)."""

    name = "WebSocketFrame"
    fields_desc = [
        BitField("fin", 1, 1),
        BitField("rsv", 0, 3),
        BitEnumField("opcode", WS_BINARY, 4, WS_OPCODES),
        BitField("mask", 0, 1),
        BitField("len7", None, 7),
        ConditionalField(ShortField("len16", None), lambda p: p.len7 == WS_LEN16),
        ConditionalField(LongField("len64", None), lambda p: p.len7 == WS_LEN64),
        ConditionalField(StrFixedLenField("key", bytes(WS_MASK_KEY_SIZE), WS_MASK_KEY_SIZE), lambda p: p.mask),
        BytesField("data", b""),
    ]

    def self_build(self) -> bytes:
        g = self.getfieldval
        data = g("data")
        data = data.encode() if isinstance(data, str) else bytes(data)
        n = len(data)
        len7 = g("len7")
        if len7 is None:
            len7 = n if n < WS_LEN16 else WS_LEN16 if n < 65536 else WS_LEN64
        out = bytes([(WS_FIN if g("fin") & 1 else 0) | (g("rsv") & 7) << WS_RSV_SHIFT | (g("opcode") & WS_OPCODE_MASK),
                     (WS_MASKED if g("mask") & 1 else 0) | (len7 & WS_LEN7_MASK)])
        if len7 == WS_LEN16:
            out += WS_LEN16_FIELD.pack(g("len16") if g("len16") is not None else n)
        elif len7 == WS_LEN64:
            out += WS_LEN64_FIELD.pack(g("len64") if g("len64") is not None else n)
        if g("mask"):
            key = bytes(g("key"))[:WS_MASK_KEY_SIZE].ljust(WS_MASK_KEY_SIZE, b"\0")
            return out + key + unmask(data, key)
        return out + data

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes | None]:
        return b"", s


class _Frames(_ListField):
    __slots__ = []

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        frames, complete = message_frames(s, 0)
        items = []
        for f, _ in frames:
            fr = WebSocketFrame(**f)
            fr.parent = pkt
            items.append(fr)
        end = frames[-1][1] if frames else 0
        if not complete:
            raise Short(items, end)
        return s[end:], items

    def any2i(self, pkt: Packet | None, x: Any) -> Any:
        return x


class WebSocketText(Packet):
    """A WebSocket text message."""

    name = "WebSocketText"
    fields_desc = [BytesField("text", b"")]

    def mysummary(self) -> str:
        return f"WebSocketText {self.text.decode('utf-8', 'replace')!r:.60}"


class GodotWebSocket(_Framing):
    """One WebSocket message: its frames, and the message (unmasked, joined) as the payload."""

    name = "GodotWebSocket"
    fields_desc = [_Frames("frames", lambda p: 0), _tail_field()]

    @classmethod
    def dispatch_hook(cls, _pkt: bytes | None = None, *args: Any, **kw: Any) -> type[Packet]:
        if _pkt and _pkt[:4] in HTTP_STARTS:
            return GodotWSHandshake
        return cls

    def opcode(self) -> int:
        for f in self.getfieldval("frames") or ():
            if f.opcode < WS_CONTROL_MIN:
                return f.opcode
        frames = self.getfieldval("frames")
        return frames[0].opcode if frames else WS_BINARY

    def joined(self) -> bytes:
        return b"".join(bytes(f.data) for f in self.getfieldval("frames") or () if f.opcode < WS_CONTROL_MIN)

    def dissect(self, s: bytes) -> None:
        rest = self.do_dissect(s)
        frames = raw_fields(self).get("frames")
        if isinstance(frames, list) and frames:
            ops = [f.opcode for f in frames]
            data = self.joined() if any(o < WS_CONTROL_MIN for o in ops) else b"".join(bytes(f.data) for f in frames)
            if data:
                cls = self.guess_payload_class(data)
                self.add_payload(cls(data, _internal=1, _underlayer=self))
        if rest and not self._sub:
            self.add_payload(GodotWebSocket(rest, _internal=1, _ctx=self._ctx, dialect=self._fixed))

    def guess_payload_class(self, payload: bytes) -> Any:
        op = self.opcode()
        if op == WS_BINARY:
            return flows.websocket_binary_class(self, payload) or GodotVariant  # multiplayer flows: hook
        if op == WS_TEXT:
            return WebSocketText
        return Raw

    def _next_in_stream(self) -> Packet:
        """What follows this message's payload layers: the next message, Padding, or nothing."""
        pay = self.payload
        while pay and not isinstance(pay, (GodotWebSocket, GodotWSHandshake, conf.padding_layer)):
            pay = pay.payload
        return pay

    def do_build(self) -> bytes:
        body = b""
        pay = self.payload
        while pay and not isinstance(pay, (GodotWebSocket, GodotWSHandshake, conf.padding_layer)):
            body += pay.self_build()
            pay = pay.payload
        raw = RAW_FIELDS.__get__(self)
        frames = self.getfieldval("frames") or []
        if not frames and not raw.get("tail"):  # crafted without frames: one binary (or text) frame
            frames = [WebSocketFrame(opcode=WS_TEXT if isinstance(self.payload, WebSocketText) else WS_BINARY)]
        data_frames = [f for f in frames if f.opcode < WS_CONTROL_MIN]
        if data_frames and b"".join(bytes(f.data) for f in data_frames) != body:
            first = data_frames[0].copy()
            first.data, first.fin, first.len7, first.len16, first.len64 = body, 1, None, None, None
            frames = [first]
        out = b"".join(bytes(f) for f in frames)
        tail = raw.get("tail")
        if isinstance(tail, bytes):
            out += tail
        nxt = self._next_in_stream()
        if isinstance(nxt, (GodotWebSocket, GodotWSHandshake)):
            out += nxt.do_build()
        return out

    def build_padding(self) -> bytes:
        nxt = self._next_in_stream()
        return nxt.build_padding() if nxt else b""

    def to_value(self) -> Any:
        pay = self.payload
        if isinstance(pay, GodotVariant):
            return pay.to_value()
        if isinstance(pay, WebSocketText):
            return pay.text.decode("utf-8", "replace")
        return None

    def mysummary(self) -> Any:
        op = WS_OPCODES.get(self.opcode(), str(self.opcode()))
        return f"GodotWebSocket {op}", [TCP]

    @classmethod
    def tcp_reassemble(cls, data: bytes, metadata: dict[str, Any], session: dict[str, Any]) -> Packet | None:
        ctx = _session_ctx(metadata, session)
        if data[:4] in HTTP_STARTS:
            end = data.find(b"\r\n\r\n")
            if end < 0:
                return None
            pkt: Packet = GodotWSHandshake(data[:end + 4], _ctx=ctx)
            pos = end + 4
        else:
            pos = 0
            while pos < len(data):
                frames, complete = message_frames(data, pos)
                if not complete:
                    break
                pos = frames[-1][1]
            if pos == 0:
                # a frame no Godot peer takes would be waited for forever: give the bytes up
                end = metadata.get("tcp_end") or oversized(data, 0) or len(data) > MAX_WS_MESSAGE + 14
                return conf.raw_layer(data) if end else None
            pkt = cls(data[:pos], _ctx=ctx)
        if pos < len(data):
            pkt.add_payload(conf.padding_layer(data[pos:]))
        return pkt


class GodotWSHandshake(_Framing):
    """The HTTP request or response that opens a WebSocket connection."""

    name = "GodotWSHandshake"
    fields_desc = [BytesField("http", b"")]

    def do_dissect(self, s: bytes) -> bytes:
        end = s.find(b"\r\n\r\n")
        n = len(s) if end < 0 else end + 4
        RAW_FIELDS.__get__(self)["http"] = s[:n]
        self.explicit = 1
        return s[n:]

    def guess_payload_class(self, payload: bytes) -> Any:
        return GodotWebSocket

    def dissect(self, s: bytes) -> None:
        rest = self.do_dissect(s)
        if rest:
            self.add_payload(GodotWebSocket(rest, _internal=1, _ctx=self._ctx, dialect=self._fixed))

    def mysummary(self) -> Any:
        line = bytes(self.http).split(b"\r\n", 1)[0].decode("latin-1")
        return f"GodotWSHandshake {line}", [TCP]


class GodotStream(Packet):
    """Stands for "not decided yet" when ``TCPSession`` asks for a stream's class before its
    first data: its ``tcp_reassemble`` looks at the data, then hands over to the right framing
    (or returns Raw for streams that are not Godot traffic)."""

    name = "GodotStream"
    fields_desc = [BytesField("load", b"")]

    @classmethod
    def tcp_reassemble(cls, data: bytes, metadata: dict[str, Any], session: dict[str, Any]) -> Packet | None:
        ctx = _session_ctx(metadata, session)
        if len(data) < 4 and not metadata.get("tcp_end"):
            return None
        kind = flows.classify_stream(ctx[0], data, start=True)
        if kind is None:
            return conf.raw_layer(data)
        return flows.KIND_CLASSES[kind].tcp_reassemble(data, metadata, session)


@dataclass(frozen=True)
class GodotMessage:
    """One Godot message found in a packet, as ``godot_dissect.records.Record`` names them:
    ``kind`` "variant", "debugger" (``message``, ``thread``, ``value`` = the arguments) or
    "text" (a WebSocket text message)."""

    kind: str
    value: Any
    message: str | None = None
    thread: int | None = None


def godot_messages(pkt: Packet) -> list[GodotMessage]:
    """Every Godot message in a (reassembled) packet, in order; a message whose bytes do not
    read is ``kind="error"`` with the reason as its value."""
    out: list[GodotMessage] = []
    layer = pkt
    while layer:
        try:
            if isinstance(layer, GodotDebugger):
                name, thread, args = layer.message()
                if any(a is MISSING for a in (args if isinstance(args, list) else ())) or args is MISSING:
                    raise DecodeError(0, "a part of the message does not read")
                out.append(GodotMessage("variant", args) if name is None else
                           GodotMessage("debugger", args, name, thread))
            elif isinstance(layer, GodotPDU):
                out.append(GodotMessage("variant", layer.to_value()))
            elif isinstance(layer, WebSocketText):
                out.append(GodotMessage("text", layer.text.decode("utf-8", "replace")))
            elif isinstance(layer, GodotVariant):
                out.append(GodotMessage("variant", layer.to_value()))
        except DecodeError as e:
            out.append(GodotMessage("error", str(e)))
        layer = layer.payload
    return out


__all__ = [
    "GodotDebugger", "GodotPDU", "GodotStream", "GodotWSHandshake", "GodotWebSocket", "WebSocketFrame", "WebSocketText",
    "GodotMessage", "godot_messages",
]
