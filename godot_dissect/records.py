"""One record per Godot message found in a capture, and its JSON line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from . import jsonform
from .codec import fast as _fast
from .spec import get_dialect
from .spec.record_kinds import RECORD_KINDS
from .text.writer import text_renderer, to_text, to_text_start
from .values import CLASS_KEYS, type_key

#: decimals of ``time`` and ``wire_bytes`` in a record's JSON (and the dataset's columns)
TIME_DECIMALS, WIRE_DECIMALS = 6, 3
#: the message's first bytes in hex (``hex``): error records and the kinds whose value is the raw bytes
HEX_BYTES = 256
HEX_KINDS = ("compressed",)  # to_jsonl leaves these to Python: the compiled record writer writes no hex


@dataclass(slots=True)
class Record:
    frame: int  # frame that completed the message (as Wireshark counts, from 1)
    time: float
    src: str
    sport: int
    dst: str
    dport: int
    transport: str  # "udp" | "tcp" | "websocket"
    direction: str  # "c2s" (from the side that opened the conversation) | "s2c"
    dialect: str
    kind: str  # one of KINDS: "variant" | "debugger" | "text" (WebSocket text) | "error" | "compressed" | ...
    value: Any = None
    raw: bytes = b""
    offset: int = 0  # stream offset of the message (0 for datagrams)
    error: str | None = None
    message: str | None = None  # debugger message name
    thread: int | None = None  # debugger thread id (Godot 4.2+)
    evidence: str = ""  # why this dialect
    # multiplayer (kind in MULTIPLAYER_KINDS); value = the RPC arguments, the RSET value, RAW bytes
    node: str | None = None  # node path (resolved from the sender's path cache, or sent inline)
    method: str | None = None  # method or property name (Godot 4: when the RPC names are known)
    method_id: int | None = None  # Godot 4 method id
    channel: int | None = None  # ENet channel
    peer: int | None = None  # peer a peer/sys message is about, or the relay peer
    command: str | None = None  # the engine's command name (REMOTE_CALL, SYS, CONNECT ...)
    fields: dict[str, Any] | None = None  # the rest of the packet (cache ids, md5, headers ...)
    # bandwidth (the shared contract): this message's share of the wire bytes of the frames that
    # carried it (frame length x its bytes in the frame / all Godot message bytes in the frame;
    # a TCP retransmission of bytes already delivered carries none), and its size as the
    # application sees it (None: len(raw))
    wire_bytes: float = 0.0
    app_bytes: int | None = None
    # multiplayer routing (set by the multiplayer layer; see multiplayer.session._route)
    sender: int | None = None  # peer id of the original sender
    receiver: int | None = None  # peer id that executes it (a relayed packet: the final receiver)
    transfer: str | None = None  # "reliable" | "unreliable" | "unreliable_ordered"
    relayed: bool | None = None  # the packet goes through the server (either leg)

    @property
    def type(self) -> str:
        """The engine's name for the value's type in this record's dialect."""
        if self.kind in ("error", "compressed") or self.kind in LIST_KINDS:
            return ""
        if self.kind == "text":
            return "text"
        cls = type(self.value)
        names = _TYPE_NAMES.get(self.dialect)
        if names is not None and (name := names.get(cls)) is not None:
            return name
        try:
            entry = get_dialect(self.dialect).by_key(type_key(self.value))
        except (TypeError, ValueError):
            return ""
        name = entry.name if entry else ""
        if cls in CLASS_KEYS:  # type_key depends on the exact class alone: remembered (a bounded table)
            _TYPE_NAMES.setdefault(self.dialect, {})[cls] = name
        return name

    def text(self) -> str:
        if self.kind in ("error", "compressed"):
            return ""
        if self.kind == "text":
            return str(self.value)
        if self.kind in LIST_KINDS:  # RPC arguments, sync states: each in var_to_str notation
            return ", ".join(to_text(v, self.dialect) for v in self.value or ())
        if self.value is None and self.kind in MULTIPLAYER_KINDS:  # path cache, peer messages
            return ""
        return to_text(self.value, self.dialect)

    def text_start(self, chars: int) -> str:
        """``self.text()``, or, when that is longer than ``chars`` characters, a start of it at least
        ``chars`` long: what a one-line summary needs (the compiled writer stops early)."""
        if self.kind in ("error", "compressed", "text") or self.kind in LIST_KINDS \
                or (self.value is None and self.kind in MULTIPLAYER_KINDS):
            return self.text()
        return to_text_start(self.value, self.dialect, chars)

    def to_json(self) -> dict[str, Any]:
        """The record as a new ``dict`` of plain JSON values (str, int, float, bool, None, list, dict), keyed as
        in ``read --format json``: frame, time, src, sport, dst, dport, transport, direction, kind, dialect,
        type, offset, length, then the optional keys the record has (message, node, method, fields, error and
        hex ...), then ``text`` (var_to_str notation) and ``value`` (``godot_dissect.jsonform``'s typed form)
        unless it is an error. ``json.dumps(rec.to_json())`` is the record's JSON line (``to_jsonl``)."""
        d = self._head()
        if self.error is None:
            d["text"] = self.text()
            d["value"] = jsonform.to_json(self.value) if self.kind != "text" else self.value
        return d

    def _head(self) -> dict[str, Any]:
        """Every key of the JSON form but text and value (always the last two when present)."""
        d: dict[str, Any] = {
            "frame": self.frame, "time": round(self.time, TIME_DECIMALS), "src": self.src, "sport": self.sport,
            "dst": self.dst, "dport": self.dport, "transport": self.transport, "direction": self.direction,
            "kind": self.kind, "dialect": self.dialect, "type": self.type, "offset": self.offset,
            "length": len(self.raw), "wire_bytes": round(self.wire_bytes, WIRE_DECIMALS),
            "app_bytes": app_size(self),
        }
        for k in _OPTIONAL_HEAD:
            if (v := getattr(self, k)) is not None:
                d[k] = v
        if self.fields:
            d["fields"] = {k: _json_field(v) for k, v in self.fields.items()}
        if self.error is not None:
            d["error"] = self.error
            d["hex"] = self.raw[:HEX_BYTES].hex()
        elif self.kind in HEX_KINDS:
            d["hex"] = self.raw[:HEX_BYTES].hex()
        return d

    def json_head(self) -> dict[str, Any]:
        """Every key of :meth:`to_json` but ``text`` and ``value``, for writers that render those themselves."""
        return self._head()

    def to_jsonl(self) -> str:
        """``json_text(self.to_json())``, written in one go (``jsonform.record_line``)."""
        kind = self.kind
        if self.error is None and not self.fields and kind not in HEX_KINDS \
                and (kind != "text" or type(self.value) is str):
            # straight from the attributes by the compiled writer, the value's text too when it can
            # (jsonform.record_object_line, its calls inlined: this runs once per message of `read`)
            fast = _fast.fast_json_record
            if fast is not None:
                text: Any = None
                if kind == "variant" or kind == "debugger":
                    text = _TEXT_RENDERERS.get(self.dialect) or compiled_text_writer(self.dialect)
                line = fast(self, self.type, text or self.text(), _OPTIONAL_HEAD, jsonform.c_tables)
                if line is not None:
                    return line
        if self.error is not None:
            return jsonform.record_line(self._head())
        if self.kind == "text" and type(self.value) is not str:  # value not in its JSON form
            return jsonform.json_text(self.to_json())
        return jsonform.record_line(self._head(), self.text(), self.value)


#: record kinds of the multiplayer protocols
MULTIPLAYER_KINDS = tuple(RECORD_KINDS)
#: every record kind: a Variant, a debugger message, a WebSocket text message, a message that could not be
#: read (``error``), an ENet datagram compressed with a codec not named (``compressed``), multiplayer kinds
KINDS = ("variant", "debugger", "text", "error", "compressed", *MULTIPLAYER_KINDS)
#: kinds whose value is a list of values shown one after the other (not one Array)
LIST_KINDS = ("rpc", "spawn", "sync")
_MP_FIELDS = ("node", "method", "method_id", "channel", "peer", "command")
_ROUTE_FIELDS = ("sender", "receiver", "transfer", "relayed")
#: the JSON head's keys after app_bytes that are there when not None, in their order
_OPTIONAL_HEAD = ("message", "thread", *_MP_FIELDS, *_ROUTE_FIELDS)
#: dialect name -> its compiled text writer (``text.writer.text_renderer``; bounded: a name from the
#: reader is a dialect's, but a Record can be made with any)
_TEXT_RENDERERS: dict[str, Any] = {}
_MAX_RENDERERS = 64
#: dialect -> {value class: the engine's type name} (``Record.type``; the dialect a name ``get_dialect``
#: knows, the classes ``values.CLASS_KEYS``': a bounded table), read by the compiled line writers
_TYPE_NAMES: dict[str, dict[type, str]] = {}


def compiled_text_writer(dialect: str) -> Any:
    """The compiled text writer of a record's dialect (``text.writer.text_renderer``: its
    ``summary_line`` writes ``read``'s text line of a Variant record, and ``jsonform.record_object_line``
    takes it in place of the text), or None (not built, turned off, no such dialect)."""
    w = _TEXT_RENDERERS.get(dialect)
    if w is None and len(_TEXT_RENDERERS) < _MAX_RENDERERS:
        w = _TEXT_RENDERERS[dialect] = text_renderer(dialect)
    return w


def variant_line_writer(dialect: str, max_depth: int, summary: tuple[int, tuple[str, str, str]] | None = None
                        ) -> Callable[..., str | None] | None:
    """The compiled writer of the line (``to_jsonl``, or with ``summary`` = (chars, arrows) the text
    line ``TextWriter.summary_line`` writes) of the Variant record ``PcapReader._variant`` would make
    of a message body of ``dialect``, straight from the body: called as ``write(body, frame, time, src,
    sport, dst, dport, transport, direction, dialect, offset, wire_bytes)``, it decodes the body
    (``max_depth``), writes the line and frees the value, with no Record made; it returns None
    when the body is not one it writes (malformed, a class whose type name ``Record.type`` has not
    named yet, a value the compiled writers leave to Python), and the reader makes the record. None:
    no compiled writer (not built, turned off, no such dialect)."""
    text = compiled_text_writer(dialect)
    table = _fast.table(dialect) if _fast.fast_decode_prefix is not None else None
    if text is None or table is None:
        return None
    names = _TYPE_NAMES.setdefault(dialect, {})  # a name get_dialect knows (it has a table): bounded
    if summary is not None:
        return partial(text.variant_summary, table, names, max_depth, summary[0], summary[1])
    return partial(_fast.json_record_writer(jsonform.c_tables).variant_line, table, text, names, max_depth)


def app_size(rec: Any) -> int:
    """``Record.app_bytes`` (None: ``len(raw)``, the reader's default)."""
    a = rec.app_bytes
    return len(rec.raw) if a is None else a


def _json_field(v: Any) -> Any:
    """Packet metadata as JSON: plain numbers, strings and lists of them as they are."""
    if isinstance(v, (str, int, float, type(None))):
        return v
    if isinstance(v, (list, tuple)) and all(isinstance(x, (str, int, float, dict)) for x in v):
        return [_json_field(x) if isinstance(x, dict) else x for x in v]
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        return {k: _json_field(x) for k, x in v.items()}
    return jsonform.to_json(v)
