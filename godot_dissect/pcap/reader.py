"""``read_pcap``: capture file -> Godot message records, streaming.

segments -> conversations (5-tuple, both directions) -> TCP reassembly -> framing (datagram,
length prefix, WebSocket) -> dialect guess per conversation -> decode -> debugger message
assembly -> records. A conversation holds at most a few messages back while its dialect is
guessed; nothing else is kept, so memory does not grow with the file.

Multiplayer: a UDP conversation that reads as ENet goes through ``multiplayer.enetflow`` (ENet
parsing and reassembly, then the Godot 3/4 multiplayer session); a WebSocket conversation whose
first binary message starts a multiplayer session (``detect.websocket_multiplayer``) goes through
a ``multiplayer.MultiplayerSession`` instead of the Variant decoder.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..codec import decode_prefix
from ..detect import DialectGuess, Verdict, enet_godot_major, plausible, reconsider, websocket_multiplayer
from ..enet import looks_like_enet
from ..errors import DecodeError
from ..fuzz.pcapout import capture_hint
from ..multiplayer import MultiplayerSession, RpcNames
from ..multiplayer.enetflow import EnetConversation, Item
from ..multiplayer.records import record_fields
from ..records import Record
from ..spec import get_dialect
from .framing import LengthPrefixFramer, Pdu, Skipped, WebSocketFramer
from .packets import TCP_ACK, TCP_SYN, Segment, segments
from .source import Source
from .tcp import Chunk, TcpDirection

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
    dbg_wire: float = 0.0


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
    held: list[tuple[str, Chunk, bool]] = field(default_factory=list)  # TCP bytes before classification
    mp: MultiplayerSession | None = None  # Godot high-level multiplayer on this conversation
    mp_checked: bool = False  # the first binary WebSocket message was looked at
    enet: EnetConversation | None = None  # kind "enet": ENet state of both directions
    udp_seen: int = 0  # datagrams looked at for ENet


class PcapReader:
    def __init__(self, path: Source, dialect: str = "auto", ports: Iterable[int] = (),
                 debugger_ports: Iterable[int] = DEBUGGER_PORTS, heuristics: bool = True, *,
                 rpc_names: Mapping[str, Any] | None = None, project: str | None = None,
                 multiplayer: bool = True, enet_ports: Iterable[int] = (), enet_control: bool = False,
                 enet_compression: str | None = None, on_frame: Callable[[Segment], None] | None = None) -> None:
        self.path = path
        self.on_frame = on_frame
        self.multiplayer = multiplayer
        self.enet_ports = set(enet_ports)
        self.enet_control = enet_control
        self.enet_compression = enet_compression
        self.rpc_names = RpcNames.build(rpc_names, project) if (rpc_names or project) else None
        # a capture written by godot-dissect's fuzzer names its dialect and port (fuzz/pcapout.py)
        hint = capture_hint(path) if dialect == "auto" and not ports and isinstance(path, str) else None
        self.fixed_why = hint.evidence if hint else "chosen by the user"
        self.fixed = hint.dialect if hint else None if dialect == "auto" else get_dialect(dialect).name
        self.ports = set(hint.ports if hint else ports)
        self.debugger_ports = set(debugger_ports) | set(hint.debugger_ports if hint else ())
        self.heuristics = heuristics
        self.conversations: dict[tuple, _Conversation] = {}
        self.clear_verdicts: Counter[str] = Counter()  # dialects of unambiguous conversations
        self._server_ports = self.ports | self.debugger_ports | self.enet_ports

    # -- conversation bookkeeping -----------------------------------------------------------
    def _conversation(self, seg: Segment) -> tuple[_Conversation, str]:
        a, b = (seg.src, seg.sport), (seg.dst, seg.dport)
        key = (seg.proto, *sorted((a, b)))
        conv = self.conversations.get(key)
        if conv is None:
            client, server = a, b
            if seg.proto == "tcp" and seg.flags & TCP_SYN and seg.flags & TCP_ACK:
                client, server = b, a  # first packet seen is the SYN-ACK
            elif seg.dport not in self._server_ports and seg.sport in self._server_ports:
                client, server = b, a  # mid-stream: the known port is the server's
            conv = self.conversations[key] = _Conversation(seg.proto, client, server)
            if self.fixed:
                conv.verdict = Verdict(self.fixed, self.fixed_why, False)
            else:
                conv.guess = DialectGuess()
        return conv, ("c2s" if a == conv.client else "s2c")

    def _known_port(self, conv: _Conversation) -> bool:
        return bool({conv.client[1], conv.server[1]} & self.ports)

    # -- main loop ----------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Record]:
        tap = self.on_frame
        for seg in segments(self.path):
            if tap is not None:
                tap(seg)
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
        if conv.kind == "enet" or (seg.payload and self._is_enet(conv, seg.payload)):
            yield from self._enet(conv, d, seg)
            return
        conv.kind = "udp"
        if not seg.payload:
            return
        pdu = Pdu(seg.frame, seg.time, 0, seg.payload, 2, seg.frame_len)
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
        chunks = side.tcp.add(seg)
        if conv.kind is None:
            # classify on the first bytes: an HTTP upgrade needs its whole header, which tiny
            # segments deliver piece by piece
            conv.held += [(d, c, aligned_before) for c in chunks]
            if not conv.held or self._head_incomplete(conv):
                return
            yield from self._classify_held(conv)
            return
        for chunk in chunks:
            yield from self._feed(conv, d, chunk, aligned_before)
            if conv.kind == "ignore":
                return

    def _feed(self, conv: _Conversation, d: str, chunk: Chunk, aligned: bool) -> Iterator[Record]:
        side = conv.sides[d]
        if side.framer is None:
            side.framer = (WebSocketFramer() if conv.kind == "websocket"
                           else LengthPrefixFramer(plausible, aligned=aligned))
        for item in side.framer.feed(chunk):
            yield from self._message(conv, d, item)
            if conv.kind == "ignore":
                return

    #: bytes held back while a TCP conversation's first bytes could still be an HTTP header
    MAX_HEAD = 4096

    def _head(self, conv: _Conversation) -> bytes:
        first = conv.held[0][0]
        return b"".join(c.data for d, c, _ in conv.held if d == first and not c.gap)[:self.MAX_HEAD]

    def _head_incomplete(self, conv: _Conversation) -> bool:
        if sum(len(c.data) for _, c, _ in conv.held) >= 16 * self.MAX_HEAD:
            return False
        head = self._head(conv)
        low = head[:5].lower()
        if len(head) < 5 and (b"get ".startswith(low[:4]) or b"http/".startswith(low)):
            return True  # could still become "GET " / "HTTP/"
        return low.startswith((b"get ", b"http/")) and b"\r\n\r\n" not in head and len(head) < self.MAX_HEAD

    def _classify_held(self, conv: _Conversation) -> Iterator[Record]:
        conv.kind = self._classify(conv, self._head(conv))
        held, conv.held = conv.held, []
        if conv.kind == "ignore":
            conv.pending.clear()
            return
        for d, chunk, aligned in held:
            yield from self._feed(conv, d, chunk, aligned)
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

    # -- ENet ------------------------------------------------------------------------------------
    #: datagrams of a UDP conversation looked at for ENet before it is taken for plain Variants
    ENET_PROBE = 8

    def _is_enet(self, conv: _Conversation, payload: bytes) -> bool:
        ports = {conv.client[1], conv.server[1]}
        if ports & self.enet_ports:
            return True
        if not self.multiplayer or ports & self.ports or conv.confirmed or conv.udp_seen >= self.ENET_PROBE:
            return False
        conv.udp_seen += 1
        return self.heuristics and looks_like_enet(payload, self.enet_compression)

    def _enet(self, conv: _Conversation, d: str, seg: Segment) -> Iterator[Record]:
        if conv.enet is None:
            conv.kind = "enet"
            conv.pending.clear()
            conv.enet = EnetConversation(lambda major: self._session(major, "enet"), self.enet_control,
                                         self.enet_compression, guess_major=enet_godot_major)
        if not seg.payload:
            return
        for it in conv.enet.feed(seg.payload, d, seg.frame, seg.time, seg.frame_len):
            yield self._enet_record(conv, it)

    def _enet_record(self, conv: _Conversation, it: Item) -> Record:
        if conv.enet is not None and conv.enet.session is not None and not conv.confirmed:
            conv.confirmed = True
            conv.verdict = Verdict(conv.enet.session.dialect or "", f"ENet multiplayer: {conv.enet.evidence}", False)
        rec = self._base(conv, it.direction, Pdu(it.frame, it.time, 0, b"", 2, it.wire),
                         **record_fields(it.message, it.channel))
        if not conv.confirmed:
            rec.dialect = ""
        return rec

    # -- multiplayer -----------------------------------------------------------------------------
    def _session(self, major: int, transport: str) -> MultiplayerSession:
        dialect = self.fixed if self.fixed and get_dialect(self.fixed).family == major else None
        return MultiplayerSession(major, transport, dialect, self.rpc_names)

    def _check_websocket_multiplayer(self, conv: _Conversation, d: str, item: Pdu) -> None:
        """The first binary message of a WebSocket conversation says whether it is multiplayer."""
        conv.mp_checked = True
        found = websocket_multiplayer(item.data, d) if self.multiplayer else None
        if found is None:
            return
        major, evidence = found
        conv.mp = self._session(major, "websocket")
        conv.verdict = Verdict(conv.mp.dialect or "", evidence, False)
        conv.guess = None

    def _multiplayer(self, conv: _Conversation, d: str, item: Pdu | Skipped) -> Iterator[Record]:
        if isinstance(item, Skipped) or item.opcode == 1:
            yield from self._emit(conv, d, item)
            return
        msgs = conv.mp.decode(item.data, d)  # type: ignore[union-attr]
        for m in msgs:  # a message's wire bytes are shared by what it decodes to
            yield self._base(conv, d, item, wire_bytes=item.wire / len(msgs), **record_fields(m))

    # -- messages -------------------------------------------------------------------------------
    def _message(self, conv: _Conversation, d: str, item: Pdu | Skipped) -> Iterator[Record]:
        if conv.kind == "websocket" and not conv.mp_checked and isinstance(item, Pdu) and item.opcode == 2:
            self._check_websocket_multiplayer(conv, d, item)
            if conv.mp is not None:
                pending, conv.pending = conv.pending, []  # text messages before it
                for pd, pitem in pending:
                    yield from self._emit(conv, pd, pitem)
        if conv.mp is not None:
            yield from self._multiplayer(conv, d, item)
            return
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
        if conv.held:
            yield from self._classify_held(conv)
        if conv.enet is not None:
            for it in conv.enet.finish():
                yield self._enet_record(conv, it)
            return
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
        kw.setdefault("wire_bytes", item.wire)
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
                side.dbg_wire = item.wire
            else:
                yield self._base(conv, d, item, kind="variant", value=value, raw=item.data)
            return
        side.dbg_raw += item.data
        side.dbg_wire += item.wire
        if side.dbg_count is None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                name = side.dbg_name
                side.dbg_name = None
                yield self._base(conv, d, item, kind="error", raw=bytes(side.dbg_raw), message=name,
                                 wire_bytes=side.dbg_wire,
                                 error=f"offset {item.offset}: debugger message {name!r} has no argument count")
                return
            side.dbg_count = value
        else:
            side.dbg_args.append(value)
        if len(side.dbg_args) >= side.dbg_count:
            rec = self._base(conv, d, item, kind="debugger", message=side.dbg_name, value=side.dbg_args,
                             raw=bytes(side.dbg_raw), wire_bytes=side.dbg_wire)
            rec.offset = side.dbg_offset
            side.dbg_name, side.dbg_count, side.dbg_args = None, None, []
            yield rec


def read_pcap(path: Source, dialect: str = "auto", ports: Iterable[int] = (),
              debugger_ports: Iterable[int] = DEBUGGER_PORTS, heuristics: bool = True, *,
              rpc_names: Mapping[str, Any] | None = None, project: str | None = None,
              multiplayer: bool = True, enet_ports: Iterable[int] = (), enet_control: bool = False,
              enet_compression: str | None = None,
              on_frame: Callable[[Segment], None] | None = None) -> Iterator[Record]:
    """Every Godot message in a pcap/pcapng (gzip too) capture, in capture order per conversation.

    ``dialect="auto"`` guesses per conversation (see ``godot_dissect.detect``); ``ports`` are
    UDP/TCP ports that carry Godot Variants for sure; other ports are found by a heuristic unless
    ``heuristics=False``.

    High-level multiplayer (Godot 3 MultiplayerAPI, Godot 4 SceneMultiplayer over WebSocket and
    ENet) becomes records of the kinds in ``records.MULTIPLAYER_KINDS`` (``multiplayer=False``:
    read those conversations as plain Variants). Godot 4 RPC method ids get their names from
    ``rpc_names`` ({node path: [@rpc method names]}) and/or a project folder (``project``), each
    checked against the md5 the sender announced. UDP conversations that read as ENet (or use one
    of ``enet_ports``) are parsed and reassembled as ENet; ``enet_control=True`` also gives a record
    per ACKNOWLEDGE/PING/... (by default only CONNECT, VERIFY_CONNECT and DISCONNECT);
    ``enet_compression`` names the codec of compressed datagrams (it is not on the wire).

    ``path``: a file path, ``"-"`` (standard input) or a readable binary file object, read as a
    stream. ``on_frame(segment)`` is called for every UDP/TCP packet, in capture order, before the
    records it completes (for bandwidth and conversation tables; ``Segment.frame_len`` is its
    length on the wire). Each record's ``wire_bytes`` is its share of the frames that carried it.
    """
    return iter(PcapReader(path, dialect, ports, debugger_ports, heuristics, rpc_names=rpc_names,
                           project=project, multiplayer=multiplayer, enet_ports=enet_ports,
                           enet_control=enet_control, enet_compression=enet_compression, on_frame=on_frame))
