"""``read_pcap``: capture file -> Godot message records, streaming.

segments -> conversations (5-tuple, both directions) -> TCP reassembly -> framing (datagram,
length prefix, WebSocket) -> dialect guess per conversation -> decode -> debugger message
assembly -> records. A conversation holds at most a few messages back while its dialect is
guessed; nothing else is kept, so memory does not grow with the file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..codec import decode_prefix
from ..detect import DialectGuess, Verdict, plausible, reconsider
from ..errors import DecodeError
from ..records import Record
from ..spec import get_dialect
from .framing import LengthPrefixFramer, Pdu, Skipped, WebSocketFramer
from .packets import TCP_ACK, TCP_SYN, Segment, segments
from .tcp import TcpDirection

DEBUGGER_PORTS = (6007,)


@dataclass
class _Side:
    tcp: TcpDirection = field(default_factory=TcpDirection)
    framer: Any = None
    # Godot 3 debugger: a message arrives as name, count, then count PDUs
    dbg_name: str | None = None
    dbg_count: int | None = None
    dbg_args: list = field(default_factory=list)
    dbg_raw: bytearray = field(default_factory=bytearray)
    dbg_offset: int = 0


@dataclass
class _Conversation:
    transport: str
    client: tuple[str, int]
    server: tuple[str, int]
    kind: str | None = None  # "udp" | "stream" | "debugger" | "websocket" | "ignore"; None: undecided
    verdict: Verdict | None = None
    guess: DialectGuess | None = None
    pending: list[tuple[str, Pdu | Skipped]] = field(default_factory=list)
    sides: dict[str, _Side] = field(default_factory=lambda: {"c2s": _Side(), "s2c": _Side()})
    confirmed: bool = False


class PcapReader:
    def __init__(self, path: str, dialect: str = "auto", ports: Iterable[int] = (),
                 debugger_ports: Iterable[int] = DEBUGGER_PORTS, heuristics: bool = True) -> None:
        self.path = path
        self.fixed = None if dialect == "auto" else get_dialect(dialect).name
        self.ports = set(ports)
        self.debugger_ports = set(debugger_ports)
        self.heuristics = heuristics
        self.conversations: dict[tuple, _Conversation] = {}
        self.clear_verdicts: Counter[str] = Counter()  # dialects of unambiguous conversations

    # -- conversation bookkeeping -----------------------------------------------------------
    def _conversation(self, seg: Segment) -> tuple[_Conversation, str]:
        a, b = (seg.src, seg.sport), (seg.dst, seg.dport)
        key = (seg.proto, *sorted((a, b)))
        conv = self.conversations.get(key)
        if conv is None:
            client, server = a, b
            if seg.proto == "tcp" and seg.flags & TCP_SYN and seg.flags & TCP_ACK:
                client, server = b, a  # first packet seen is the SYN-ACK
            elif seg.dport not in self.ports | self.debugger_ports and seg.sport in self.ports | self.debugger_ports:
                client, server = b, a  # mid-stream: the known port is the server's
            conv = self.conversations[key] = _Conversation(seg.proto, client, server)
            if self.fixed:
                conv.verdict = Verdict(self.fixed, "chosen by the user", False)
            else:
                conv.guess = DialectGuess()
        return conv, ("c2s" if a == conv.client else "s2c")

    def _known_port(self, conv: _Conversation) -> bool:
        return bool({conv.client[1], conv.server[1]} & self.ports)

    # -- main loop ----------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Record]:
        for seg in segments(self.path):
            conv, d = self._conversation(seg)
            if conv.kind == "ignore":
                continue
            if seg.proto == "udp":
                yield from self._udp(conv, d, seg)
            else:
                yield from self._tcp(conv, d, seg)
        for conv in self.conversations.values():
            yield from self._finish(conv)

    def _udp(self, conv: _Conversation, d: str, seg: Segment) -> Iterator[Record]:
        conv.kind = "udp"
        if not seg.payload:
            return
        pdu = Pdu(seg.frame, seg.time, 0, seg.payload)
        if conv.confirmed:
            pass  # a Godot conversation: every datagram is a message (bad ones become error records)
        elif self._known_port(conv):
            conv.confirmed = True
        elif not self.heuristics or not plausible(seg.payload):
            return
        elif not conv.confirmed:
            # a lone 4-byte null proves little: hold short datagrams until a longer one confirms
            if len(seg.payload) < 8:
                if len(conv.pending) < 64:
                    conv.pending.append((d, pdu))
                    if conv.guess is not None:
                        conv.guess.add(pdu.data)
                return
            conv.confirmed = True
        yield from self._message(conv, d, pdu)

    def _tcp(self, conv: _Conversation, d: str, seg: Segment) -> Iterator[Record]:
        side = conv.sides[d]
        aligned_before = side.tcp.next_seq is not None or bool(seg.flags & TCP_SYN)
        for chunk in side.tcp.add(seg):
            if conv.kind is None:
                conv.kind = self._classify(conv, chunk.data)
                if conv.kind == "ignore":
                    conv.pending.clear()
                    return
            if side.framer is None:
                side.framer = (WebSocketFramer() if conv.kind == "websocket"
                               else LengthPrefixFramer(plausible, aligned=aligned_before))
            for item in side.framer.feed(chunk):
                yield from self._message(conv, d, item)
                if conv.kind == "ignore":
                    return

    def _classify(self, conv: _Conversation, first: bytes) -> str:
        head = first[:4096].lower()
        if head.startswith((b"get ", b"http/")):
            return "websocket" if b"upgrade: websocket" in head else "ignore"
        ports = {conv.client[1], conv.server[1]}
        if ports & self.debugger_ports:
            return "debugger"
        if ports & self.ports:
            return "stream"
        return "stream" if self.heuristics else "ignore"

    # -- messages -------------------------------------------------------------------------------
    def _message(self, conv: _Conversation, d: str, item: Pdu | Skipped) -> Iterator[Record]:
        if isinstance(item, Pdu) and item.opcode == 2 and conv.kind in ("stream", "debugger") and not conv.confirmed:
            if not (self._known_port(conv) or conv.kind == "debugger") and not plausible(item.data):
                conv.kind = "ignore"  # the heuristic's first PDU is not a Godot message
                conv.pending.clear()
                return
            conv.confirmed = True
        if conv.verdict is None:
            if isinstance(item, Pdu) and item.opcode == 2:
                conv.guess.add(item.data)  # type: ignore[union-attr]
            conv.pending.append((d, item))
            if not conv.guess.decided:  # type: ignore[union-attr]
                return
            self._decide(conv)
            pending, conv.pending = conv.pending, []
            for pd, pitem in pending:
                yield from self._emit(conv, pd, pitem)
            return
        yield from self._emit(conv, d, item)

    def _decide(self, conv: _Conversation) -> None:
        conv.verdict = conv.guess.verdict(self.clear_verdicts)  # type: ignore[union-attr]
        if conv.verdict.family_clear:
            self.clear_verdicts[conv.verdict.dialect] += 1

    def _finish(self, conv: _Conversation) -> Iterator[Record]:
        for d, side in conv.sides.items():
            if conv.kind in ("stream", "debugger", "websocket") and side.tcp.pending and side.framer:
                for chunk in side.tcp.flush_gap():
                    for item in side.framer.feed(chunk):
                        yield from self._message(conv, d, item)
        if conv.pending and conv.kind != "ignore" and (conv.confirmed or conv.kind != "udp"):
            if conv.guess is not None:
                self._decide(conv)
            pending, conv.pending = conv.pending, []
            for d, item in pending:
                yield from self._emit(conv, d, item)

    def _base(self, conv: _Conversation, d: str, item: Pdu | Skipped, **kw: Any) -> Record:
        src, dst = (conv.client, conv.server) if d == "c2s" else (conv.server, conv.client)
        transport = "websocket" if conv.kind == "websocket" else conv.transport
        v = conv.verdict
        return Record(item.frame, item.time, src[0], src[1], dst[0], dst[1], transport, d,
                      v.dialect if v else "", offset=item.offset, evidence=v.evidence if v else "", **kw)

    def _emit(self, conv: _Conversation, d: str, item: Pdu | Skipped) -> Iterator[Record]:
        if isinstance(item, Skipped):
            yield self._base(conv, d, item, kind="error", error=f"offset {item.offset}: {item.size} bytes "
                                                                  f"skipped: {item.reason}")
            return
        if item.opcode == 1:
            yield self._base(conv, d, item, kind="text", value=item.data.decode("utf-8", "replace"),
                             raw=item.data)
            return
        dialect = conv.verdict.dialect  # type: ignore[union-attr]
        try:
            value, used = decode_prefix(item.data, dialect, allow_objects=True)
        except DecodeError as e:
            switched = reconsider(conv.verdict, conv.guess, item.data, self.clear_verdicts)  # type: ignore[arg-type]
            if switched is None:
                yield self._base(conv, d, item, kind="error", raw=item.data, error=str(e))
                return
            conv.verdict, dialect = switched, switched.dialect
            value, used = decode_prefix(item.data, dialect, allow_objects=True)
        if conv.kind == "debugger":
            yield from self._debugger(conv, d, item, value, dialect)
            return
        yield self._base(conv, d, item, kind="variant", value=value, raw=item.data)

    def _debugger(self, conv: _Conversation, d: str, item: Pdu, value: Any, dialect: str) -> Iterator[Record]:
        if get_dialect(dialect).family >= 4:
            if isinstance(value, list) and len(value) == 3 and isinstance(value[0], str) \
                    and isinstance(value[1], int) and isinstance(value[2], list):
                yield self._base(conv, d, item, kind="debugger", message=value[0], thread=value[1],
                                 value=value[2], raw=item.data)
            elif isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) \
                    and isinstance(value[1], list):
                yield self._base(conv, d, item, kind="debugger", message=value[0], value=value[1], raw=item.data)
            else:
                yield self._base(conv, d, item, kind="error", raw=item.data, value=value,
                                 error=f"offset {item.offset}: debugger message is not [name, thread, data]")
            return
        # Godot 3: the editor sends [command, args...]; the game sends name, count, then count PDUs
        side = conv.sides[d]
        if side.dbg_name is None:
            if isinstance(value, list) and value and isinstance(value[0], str):
                yield self._base(conv, d, item, kind="debugger", message=value[0], value=value[1:], raw=item.data)
            elif isinstance(value, str):
                side.dbg_name, side.dbg_count, side.dbg_args = value, None, []
                side.dbg_raw = bytearray(item.data)
                side.dbg_offset = item.offset
            else:
                yield self._base(conv, d, item, kind="variant", value=value, raw=item.data)
            return
        side.dbg_raw += item.data
        if side.dbg_count is None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                name = side.dbg_name
                side.dbg_name = None
                yield self._base(conv, d, item, kind="error", raw=bytes(side.dbg_raw), message=name,
                                 error=f"offset {item.offset}: debugger message {name!r} has no argument count")
                return
            side.dbg_count = value
        else:
            side.dbg_args.append(value)
        if len(side.dbg_args) >= side.dbg_count:
            rec = self._base(conv, d, item, kind="debugger", message=side.dbg_name, value=side.dbg_args,
                             raw=bytes(side.dbg_raw))
            rec.offset = side.dbg_offset
            side.dbg_name, side.dbg_count, side.dbg_args = None, None, []
            yield rec


def read_pcap(path: str, dialect: str = "auto", ports: Iterable[int] = (),
              debugger_ports: Iterable[int] = DEBUGGER_PORTS, heuristics: bool = True) -> Iterator[Record]:
    """Every Godot message in a pcap/pcapng (gzip too) capture, in capture order per conversation.

    ``dialect="auto"`` guesses per conversation (see ``godot_dissect.detect``); ``ports`` are
    UDP/TCP ports that carry Godot Variants for sure; other ports are found by a heuristic unless
    ``heuristics=False``.
    """
    return iter(PcapReader(path, dialect, ports, debugger_ports, heuristics))
