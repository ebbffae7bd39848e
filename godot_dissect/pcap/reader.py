"""``read_pcap``: capture -> Godot message records, streaming, in bounded memory.

The stages, each a module with one job:

    source.py         path | "-" | file object -> (time, frame bytes, original length)
    packets.py        frames -> UDP datagrams / TCP segments (``Segment``)
    conversations.py  segments -> conversations (state, bounded table); tcp.py: TCP byte streams
    framing.py        byte streams -> PDUs / WebSocket messages / skipped runs (and wire shares)
    inorder.py        the common TCP step (an in-order segment, a synchronised length-prefix
                      framer) compiled, with the lines of its PDUs written from C; the two above
                      stay the reference and take every other case
    detect.py         framing of a TCP conversation (``stream_head``), dialect (``DialectGuess``)
    decode.py         message body -> value in the conversation's dialect
    assembly.py       PDUs -> remote debugger messages; multiplayer.* for WebSocket / ENet sessions
    reader.py         (here) drives the stages and makes the records

A conversation holds at most a few messages back while its dialect is guessed; everything else it
holds is bounded per conversation and across the capture (``spec.transports`` limits: conversations,
held bytes, idle time), and whatever a bound cuts off becomes an error record.

Multiplayer: a UDP conversation that reads as ENet goes through ``multiplayer.enetflow`` (ENet
parsing and reassembly, then the Godot 3/4 multiplayer session); a WebSocket conversation whose
first binary message starts a multiplayer session (``detect.websocket_multiplayer``) goes through
a ``multiplayer.MultiplayerSession`` instead of the Variant decoder.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..detect import (
    DialectGuess,
    DialectVerdict,
    enet_godot_major,
    http_head,
    plausible,
    stream_head,
    websocket_multiplayer,
)
from ..errors import DecodeError
from ..fuzz.pcapout import capture_hint
from ..records import Record
from ..spec import get_dialect
from ..spec.transports import (
    DEBUGGER_PORTS,
    IDLE_SECONDS,
    MAX_CONVERSATIONS,
    MAX_DEPTH,
    MAX_GUESS_HELD,
    MAX_HELD_BYTES,
    MAX_HTTP_HEAD,
    MAX_HTTP_HEAD_HELD,
    MAX_UDP_HELD,
    WS_BINARY,
    WS_TEXT,
)
from .assembly import godot3_start, godot4_message
from .conversations import HELD_ITEM_COST, Conversation, ConversationTable, Framing, State
from .decode import decode_message
from .framing import LengthPrefixFramer, Pdu, Skipped, WebSocketFramer
from .inorder import in_order
from .packets import TCP_ACK, TCP_FIN, TCP_RST, TCP_SYN, CaptureError, Segment, segment_batches
from .source import Source
from .tcp import SEGMENT_COST, Chunk

if TYPE_CHECKING:
    from ..multiplayer import MultiplayerSession
    from ..multiplayer.enetflow import Item

# the ENet and multiplayer packages load when a capture needs them (start-up time): the imports in
# the functions below are a dictionary lookup once loaded
__all__ = ["DEBUGGER_PORTS", "PcapReader", "read_pcap"]
# states and framings as module names: looked up once per packet, they are on the hot path
_NEW, _UNCONFIRMED, _GUESSING, _DECODING, _IGNORED = (State.NEW, State.UNCONFIRMED, State.GUESSING, State.DECODING,
                                                      State.IGNORED)
_DATAGRAM, _ENET, _STREAM, _DEBUGGER, _WEBSOCKET = (Framing.DATAGRAM, Framing.ENET, Framing.STREAM,
                                                 Framing.DEBUGGER, Framing.WEBSOCKET)
Item_ = Pdu | Skipped
#: UDP datagrams shorter than this prove little (a lone 4-byte null): held until a longer one confirms
MIN_CONFIRMING_DATAGRAM = 8


class PcapReader:
    #: datagrams of a UDP conversation looked at for ENet before it is taken for plain Variants
    ENET_PROBE = 8
    #: bytes held back while a TCP conversation's first bytes could still be an HTTP header
    MAX_HEAD = MAX_HTTP_HEAD

    def __init__(self, path: Source, dialect: str = "auto", ports: Iterable[int] = (),
                 debugger_ports: Iterable[int] = DEBUGGER_PORTS, heuristics: bool = True, *,
                 rpc_names: Mapping[str, Any] | None = None, project: str | None = None,
                 multiplayer: bool = True, enet_ports: Iterable[int] = (), enet_control: bool = False,
                 enet_compression: str | None = None, on_frame: Callable[[Segment], None] | None = None,
                 max_conversations: int = MAX_CONVERSATIONS, max_held_bytes: int = MAX_HELD_BYTES,
                 idle_seconds: float = IDLE_SECONDS) -> None:
        self.path = path
        self.on_frame = on_frame
        self.multiplayer = multiplayer
        self.enet_ports = set(enet_ports)
        self.enet_control = enet_control
        self.enet_compression = enet_compression
        self.rpc_names = None
        if rpc_names or project:
            from ..multiplayer import RpcNames

            self.rpc_names = RpcNames.build(rpc_names, project)
        # a capture written by godot-dissect's fuzzer names its dialect and port (fuzz/pcapout.py)
        hint = capture_hint(path) if dialect == "auto" and not ports and isinstance(path, str) else None
        self.fixed_why = hint.evidence if hint else "chosen by the user"
        self.fixed = hint.dialect if hint else None if dialect == "auto" else get_dialect(dialect).name
        self.ports = set(hint.ports if hint else ports)
        self.debugger_ports = set(debugger_ports) | set(hint.debugger_ports if hint else ())
        self.heuristics = heuristics
        self.max_held_bytes = max_held_bytes
        self.table = ConversationTable(self.ports | self.debugger_ports | self.enet_ports, max_conversations,
                                       idle_seconds)
        self.clear_verdicts: Counter[str] = Counter()  # dialects of unambiguous conversations
        self.held_items = 0  # items conversations began to hold since the last packet (the budget's check counts them)

    @property
    def conversations(self) -> dict[tuple, Conversation]:
        """The conversations currently tracked (bounded), by key."""
        return self.table.by_key

    # -- main loop ----------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Record]:
        return self._run(self._variant)

    def lines(self, writer_of: Callable[[str, int], Callable[..., str | None] | None],
              line_of: Callable[[Record], str]) -> Iterator[str]:
        """Every record's line, ``line_of(record)``, for output that only writes the records out: a
        message of a conversation decoding plain Variants (what ``_variant`` makes a record of) is
        written by ``writer_of(dialect, MAX_DEPTH)`` (``records.variant_line_writer``: the same line,
        from the message's bytes, no record made) when that gives a writer and the writer a line."""
        writers: dict[str, Callable[..., str | None] | None] = {}
        variant = self._variant

        def writer(conv: Conversation, d: str) -> tuple[Callable[..., str | None], tuple] | None:
            """(write, its head arguments) of the conversation's direction, what ``line`` calls."""
            dialect = conv.verdict.dialect  # type: ignore[union-attr]
            write = writers.get(dialect, variant)
            if write is variant:
                write = writers[dialect] = writer_of(dialect, MAX_DEPTH)
            if write is None:
                return None
            src, dst = (conv.client, conv.server) if d == "c2s" else (conv.server, conv.client)
            return write, (src[0], src[1], dst[0], dst[1], "websocket" if conv.framing is _WEBSOCKET
                           else conv.transport, d, dialect)

        def line(conv: Conversation, d: str, frame: int, time: float, data: bytes, wire: float,
                 offset: int) -> str | Record:
            dialect = conv.verdict.dialect  # type: ignore[union-attr]
            write = writers.get(dialect, variant)
            if write is variant:  # first message of this dialect (the names come from verdicts: bounded)
                write = writers[dialect] = writer_of(dialect, MAX_DEPTH)
            if write is not None:
                src, dst = (conv.client, conv.server) if d == "c2s" else (conv.server, conv.client)
                s = write(data, frame, time, src[0], src[1], dst[0], dst[1],
                          "websocket" if conv.framing is _WEBSOCKET else conv.transport, d, dialect, offset, wire)
                if s is not None:
                    return s
            return variant(conv, d, frame, time, data, wire, offset)

        for item in self._run(line, writer):
            yield item if type(item) is str else line_of(item)  # type: ignore[arg-type]

    def _run(self, variant: Callable[..., Any],
             writer: Callable[[Conversation, str], tuple[Callable[..., str | None], tuple] | None] | None = None
             ) -> Iterator[Any]:
        """The records (``variant`` makes those of plain Variant messages: a Record, or its line;
        ``writer(conv, d)``, when given, the line writer of a direction that ``inorder.in_order`` calls
        itself, or None)."""
        tap = self.on_frame
        table = self.table
        lookup = table.lookup
        check_every = self.max_held_bytes >> 4
        fed = 0  # bytes taken in since the held-bytes budget was last checked (a segment: SEGMENT_COST more)
        datagrams = not self.enet_ports  # ENet ports make every UDP conversation go through _udp's ENet check
        try:
            for batch in segment_batches(self.path):  # (a list per run of packets: no generator per packet)
                for seg in batch:
                    if seg is None:
                        continue  # not an IP packet of UDP or TCP
                    if tap is not None:
                        tap(seg)
                    conv, d = lookup(seg)
                    udp = seg.proto == "udp"
                    if udp and conv is not None and conv.state is _DECODING and conv.framing is _DATAGRAM and datagrams:
                        # the common case (what _udp and _emit do for it), without their generators
                        if seg.payload:
                            yield variant(conv, d, seg.frame, seg.time, seg.payload, seg.frame_len, 0)
                            fed += len(seg.payload) + SEGMENT_COST
                            if fed > check_every:
                                fed = 0
                                yield from self._enforce_budget()
                        continue
                    if not udp and conv is not None and conv.state is _DECODING and conv.mp is None \
                            and conv.framing is not _DEBUGGER and not seg.flags & (TCP_SYN | TCP_FIN | TCP_RST):
                        # the common TCP case (what _tcp and _feed do for it), without their generators
                        if not seg.payload:
                            continue  # a bare ACK
                        side = conv.sides[d]  # type: ignore[index]
                        framer = side.framer
                        if framer is not None:
                            if in_order is None:
                                pdus = None
                            elif writer is None:
                                pdus = in_order(side.tcp, framer, seg, None)
                            else:
                                w = side.line
                                if w is None or w[0] is not conv.verdict:  # made again when the dialect changes
                                    w = side.line = (conv.verdict, writer(conv, d))
                                pdus = in_order(side.tcp, framer, seg, w[1])
                            if pdus is not None:  # in order, whole PDUs (compiled: what the loop below does)
                                if not pdus or type(pdus[-1]) is not Pdu:  # all written (the Pdus, if any, come last)
                                    yield from pdus
                                else:
                                    for item in pdus:  # a Pdu, or what the line writer wrote (a line, or a row)
                                        yield variant(conv, d, item.frame, item.time, item.data, item.wire,
                                                      item.offset) if type(item) is Pdu else item
                            else:
                                for chunk in side.tcp.add(seg):
                                    for item in framer.feed(chunk):
                                        if type(item) is Pdu and item.opcode == WS_BINARY:
                                            yield variant(conv, d, item.frame, item.time, item.data, item.wire,
                                                          item.offset)
                                        else:
                                            yield from self._emit(conv, d, item)
                            if side.tcp.closed and conv.closed and conv.quiet:  # (this direction first: cheaper)
                                table.remove(conv)  # nothing left to report: forget it now
                            fed += len(seg.payload) + SEGMENT_COST
                            if fed > check_every:
                                fed = 0
                                yield from self._enforce_budget()
                            continue
                    if conv is not None and not udp and seg.flags & TCP_SYN and not seg.flags & TCP_ACK \
                            and self._new_connection(conv, d, seg):
                        table.remove(conv)
                        yield from self._finish(conv, "a new connection (SYN) reused its addresses and ports")
                        conv = None
                    if conv is None:
                        for old in table.to_evict(seg.time):
                            yield from self._finish(old, self._evicted_why(old, seg.time))
                        conv, d = self._new(seg)
                    if conv.state is _IGNORED:
                        continue
                    if not udp and not seg.payload and not seg.flags & (TCP_SYN | TCP_FIN | TCP_RST):
                        continue  # a bare ACK of a known conversation: nothing for the TCP stage (tcp.add ignores it)
                    if udp:
                        yield from self._udp(conv, d, seg)
                    else:
                        yield from self._tcp(conv, d, seg)
                        if conv.sides is not None and conv.closed and conv.quiet:
                            table.remove(conv)  # nothing left to report: forget it now
                    # (items it held count as what they take: 2-byte WebSocket frames can hold 100x their bytes)
                    fed += len(seg.payload) + SEGMENT_COST + HELD_ITEM_COST * self.held_items
                    self.held_items = 0
                    if fed > check_every:
                        fed = 0
                        yield from self._enforce_budget()
        except CaptureError:  # a capture cut short or damaged: what its conversations hold comes out first
            yield from self._finish_all()
            raise
        yield from self._finish_all()

    def _finish_all(self) -> Iterator[Record]:
        """The end of the capture: every conversation finished (what it holds reported)."""
        table = self.table
        for conv in table:
            table.remove(conv)
            yield from self._finish(conv)

    def _new(self, seg: Segment) -> tuple[Conversation, str]:
        conv, d = self.table.create(seg)
        if self.fixed:
            conv.verdict = DialectVerdict(self.fixed, self.fixed_why, False)
        else:
            conv.guess = DialectGuess()
        return conv, d

    @staticmethod
    def _new_connection(conv: Conversation, d: str, seg: Segment) -> bool:
        """A SYN on a conversation already seen: a new connection unless it repeats the first SYN (same
        ISN, as Wireshark's TCP keeps it: a retransmitted SYN, also after data has flowed)."""
        if conv.sides is None:
            return False
        tcp = conv.side(d).tcp
        if conv.closed:
            return True
        if tcp.isn is not None:
            return seg.seq != tcp.isn
        return tcp.next_seq is not None and (seg.seq + 1) & 0xFFFFFFFF != tcp.next_seq

    def _evicted_why(self, conv: Conversation, now: float) -> str:
        if now - conv.last_time > self.table.idle_seconds:
            return f"the conversation was idle for more than {self.table.idle_seconds:g} s"
        return f"more than {self.table.max_conversations} conversations at once (--max-conversations)"

    def _enforce_budget(self) -> Iterator[Record]:
        total, heaviest = self.table.heaviest_first()
        for n, conv in heaviest:
            if total <= self.max_held_bytes:
                return
            total -= n
            self.table.remove(conv)
            yield from self._finish(conv, f"the capture's conversations held more than {self.max_held_bytes} bytes "
                                          f"(--max-held-bytes); this one held the most")

    def _known_port(self, conv: Conversation) -> bool:
        return conv.client[1] in self.ports or conv.server[1] in self.ports

    # -- UDP ------------------------------------------------------------------------------------
    def _udp(self, conv: Conversation, d: str, seg: Segment) -> Iterator[Record]:
        if conv.state is _DECODING and conv.framing is _DATAGRAM and not self.enet_ports:
            # the common case: a Godot UDP conversation whose dialect is known
            if seg.payload:
                yield from self._emit(conv, d, Pdu(seg.frame, seg.time, 0, seg.payload, WS_BINARY, seg.frame_len))
            return
        if conv.framing is _ENET or (seg.payload and self._is_enet(conv, seg.payload)):
            yield from self._enet(conv, d, seg)
            return
        if conv.framing is None:
            conv.framing, conv.state = _DATAGRAM, _UNCONFIRMED
        if not seg.payload:
            return
        pdu = Pdu(seg.frame, seg.time, 0, seg.payload, WS_BINARY, seg.frame_len)
        if conv.state is _UNCONFIRMED:
            if self._known_port(conv):
                pass
            elif not self.heuristics or not plausible(seg.payload):
                return
            elif len(seg.payload) < MIN_CONFIRMING_DATAGRAM:
                if len(conv.pending) < MAX_UDP_HELD:
                    conv.pending.append((d, pdu))
                    self.held_items += 1
                    if conv.guess is not None:
                        conv.guess.add(pdu.data)
                return
            yield from self._confirm(conv)
        yield from self._message(conv, d, pdu)

    def _variant(self, conv: Conversation, d: str, frame: int, time: float, data: bytes, wire: float,
                 offset: int) -> Record:
        """What ``_emit`` makes of one binary message of a conversation that is decoding plain Variants
        (no multiplayer session, no debugger framing), without its generator."""
        src, dst = (conv.client, conv.server) if d == "c2s" else (conv.server, conv.client)
        transport = "websocket" if conv.framing is _WEBSOCKET else conv.transport
        try:
            value = decode_message(conv, data, self.clear_verdicts)[0]
        except DecodeError as e:
            v = conv.verdict
            return Record(frame, time, src[0], src[1], dst[0], dst[1], transport, d, v.dialect,  # type: ignore[union-attr]
                          "error", raw=data, offset=offset, error=str(e), evidence=v.evidence,  # type: ignore[union-attr]
                          wire_bytes=wire)
        v = conv.verdict
        return Record(frame, time, src[0], src[1], dst[0], dst[1], transport, d, v.dialect,  # type: ignore[union-attr]
                      "variant", value, data, offset, evidence=v.evidence, wire_bytes=wire)  # type: ignore[union-attr]

    def _confirm(self, conv: Conversation) -> Iterator[Record]:
        """The conversation is Godot: guess its dialect, or (already known) let what it held out."""
        if conv.verdict is None:
            conv.state = _GUESSING
            return
        conv.state = _DECODING
        pending, conv.pending = conv.pending, []
        for pd, item in pending:  # in capture order, before the message that confirmed it
            yield from self._emit(conv, pd, item)

    def _is_enet(self, conv: Conversation, payload: bytes) -> bool:
        enet_ports = self.enet_ports
        if enet_ports and (conv.client[1] in enet_ports or conv.server[1] in enet_ports):
            return True
        state = conv.state
        if state is _DECODING or state is _GUESSING or conv.probes >= self.ENET_PROBE or not self.multiplayer \
                or self._known_port(conv):
            return False
        conv.probes += 1
        if not self.heuristics:
            return False
        from ..enet import looks_like_enet

        return looks_like_enet(payload, self.enet_compression)

    # -- ENet -----------------------------------------------------------------------------------
    def _enet(self, conv: Conversation, d: str, seg: Segment) -> Iterator[Record]:
        if conv.enet is None:
            conv.framing, conv.state = _ENET, _UNCONFIRMED
            conv.pending.clear()
            from ..multiplayer.enetflow import EnetConversation

            conv.enet = EnetConversation(lambda major: self._session(major, "enet"), self.enet_control,
                                         self.enet_compression, guess_major=enet_godot_major)
        if not seg.payload:
            return
        for it in conv.enet.feed(seg.payload, d, seg.frame, seg.time, seg.frame_len):
            yield self._enet_record(conv, it)

    def _enet_record(self, conv: Conversation, it: Item) -> Record:
        if conv.enet is not None and conv.enet.session is not None and conv.state is not _DECODING:
            conv.state = _DECODING
            conv.verdict = DialectVerdict(conv.enet.session.dialect or "", f"ENet multiplayer: {conv.enet.evidence}",
                                          False)
        from ..multiplayer.records import record_fields

        rec = self._record(conv, it.direction, Pdu(it.frame, it.time, 0, b"", WS_BINARY, it.wire),
                           **record_fields(it.message, it.channel))
        if conv.state is not _DECODING:
            rec.dialect = ""
        return rec

    # -- TCP ------------------------------------------------------------------------------------
    def _tcp(self, conv: Conversation, d: str, seg: Segment) -> Iterator[Record]:
        tcp = conv.side(d).tcp
        aligned_before = tcp.next_seq is not None or bool(seg.flags & TCP_SYN)
        chunks = tcp.add(seg)
        if seg.flags & TCP_RST:  # a reset ends both directions
            for s in conv.sides.values():  # type: ignore[union-attr]
                s.tcp.closed = True
        if conv.state is _NEW:
            # the framing shows in the first bytes: an HTTP upgrade needs its whole header, which
            # tiny segments deliver piece by piece
            for c in chunks:  # (the head and the count kept as they come: a trickle of tiny segments is linear)
                conv.held.append((d, c, aligned_before))
                self.held_items += 1
                conv.held_size += len(c.data)
                if d == conv.held[0][0] and not c.gap and len(conv.head) < self.MAX_HEAD:
                    conv.head += c.data[:self.MAX_HEAD - len(conv.head)]
            if not conv.held or self._head_incomplete(conv):
                return
            yield from self._classify_held(conv)
            return
        for chunk in chunks:
            yield from self._feed(conv, d, chunk, aligned_before)
            if conv.state is _IGNORED:
                return

    def _feed(self, conv: Conversation, d: str, chunk: Chunk, aligned: bool) -> Iterator[Record]:
        side = conv.side(d)
        if side.framer is None:
            side.framer = (WebSocketFramer() if conv.framing is _WEBSOCKET
                           else LengthPrefixFramer(plausible, aligned=aligned))
        items = side.framer.feed(chunk)
        if conv.state is _DECODING and conv.mp is None and conv.framing is not _DEBUGGER:
            # the common case: Variants of a conversation whose dialect is known (what _message and _emit
            # do for them, without their generators)
            for item in items:
                if type(item) is Pdu and item.opcode == WS_BINARY:
                    yield self._variant(conv, d, item.frame, item.time, item.data, item.wire, item.offset)
                else:
                    yield from self._emit(conv, d, item)
            return
        for item in items:
            yield from self._message(conv, d, item)
            if conv.state is _IGNORED:
                return

    @staticmethod
    def _head(conv: Conversation) -> bytes:
        """The first MAX_HEAD bytes of the held direction that sent first (its chunks after a gap left out)."""
        return bytes(conv.head)

    def _head_incomplete(self, conv: Conversation) -> bool:
        if conv.held_size >= MAX_HTTP_HEAD_HELD:
            return False
        return http_head(self._head(conv)) == "more"

    def _classify_held(self, conv: Conversation) -> Iterator[Record]:
        kind = stream_head(self._head(conv), {conv.client[1], conv.server[1]}, self.ports, self.debugger_ports,
                           self.heuristics)
        held, conv.held = conv.held, []
        conv.held_size, conv.head = 0, bytearray()
        if kind is None:
            self._ignore(conv)
            return
        conv.framing, conv.state = Framing(kind), _UNCONFIRMED
        for d, chunk, aligned in held:
            yield from self._feed(conv, d, chunk, aligned)
            if conv.state is _IGNORED:
                return

    def _ignore(self, conv: Conversation) -> None:
        conv.state = _IGNORED
        conv.pending.clear()
        conv.held, conv.held_size, conv.head = [], 0, bytearray()
        if conv.sides is not None:  # nothing of it is held any more
            for s in conv.sides.values():
                s.framer = s.debugger = None
                s.tcp.pending.clear()
                s.tcp.pending_bytes = 0

    # -- multiplayer -----------------------------------------------------------------------------
    def _session(self, major: int, transport: str) -> MultiplayerSession:
        dialect = self.fixed if self.fixed and get_dialect(self.fixed).family == major else None
        from ..multiplayer import MultiplayerSession

        return MultiplayerSession(major, transport, dialect, self.rpc_names)

    def _websocket_first_binary(self, conv: Conversation, d: str, item: Pdu) -> Iterator[Record]:
        """The first binary message of a WebSocket conversation says whether it is multiplayer."""
        found = websocket_multiplayer(item.data, d) if self.multiplayer else None
        if found is None:
            conv.state = _GUESSING if conv.verdict is None else _DECODING
            return
        major, evidence = found
        conv.mp = self._session(major, "websocket")
        conv.verdict = DialectVerdict(conv.mp.dialect or "", evidence, False)
        conv.guess = None
        conv.state = _DECODING
        pending, conv.pending = conv.pending, []  # text messages before it
        for pd, pitem in pending:
            yield from self._emit(conv, pd, pitem)

    def _multiplayer(self, conv: Conversation, d: str, item: Item_) -> Iterator[Record]:
        if isinstance(item, Skipped) or item.opcode == WS_TEXT:
            yield from self._emit(conv, d, item)
            return
        from ..multiplayer.records import record_fields

        msgs = conv.mp.decode(item.data, d)
        for m in msgs:  # a message's wire bytes are shared by what it decodes to
            yield self._record(conv, d, item, wire_bytes=item.wire / len(msgs), **record_fields(m))

    # -- messages -------------------------------------------------------------------------------
    def _message(self, conv: Conversation, d: str, item: Item_) -> Iterator[Record]:
        if conv.state is _DECODING and conv.mp is None:  # the common case: straight to decoding
            yield from self._emit(conv, d, item)
            return
        binary = isinstance(item, Pdu) and item.opcode == WS_BINARY
        if conv.state is _UNCONFIRMED and binary:
            if conv.framing is _WEBSOCKET:
                yield from self._websocket_first_binary(conv, d, item)  # type: ignore[arg-type]
            elif conv.framing in (_STREAM, _DEBUGGER):
                if not (self._known_port(conv) or conv.framing is _DEBUGGER) and not plausible(item.data):  # type: ignore[union-attr]
                    self._ignore(conv)  # the heuristic's first PDU is not a Godot message
                    return
                yield from self._confirm(conv)
        if conv.mp is not None:
            yield from self._multiplayer(conv, d, item)
            return
        if conv.verdict is None:
            if binary:
                conv.guess.add(item.data)  # type: ignore[union-attr]
            conv.pending.append((d, item))
            self.held_items += 1
            if not conv.guess.decided:  # type: ignore[union-attr]
                if len(conv.pending) < MAX_GUESS_HELD:
                    return
                if not conv.guess.samples:  # type: ignore[union-attr]  # nothing to guess from: out, still guessing
                    pending, conv.pending = conv.pending, []
                    for pd, pitem in pending:
                        yield from self._emit(conv, pd, pitem)
                    return
            self._decide(conv)
            pending, conv.pending = conv.pending, []
            for pd, pitem in pending:
                yield from self._emit(conv, pd, pitem)
            return
        yield from self._emit(conv, d, item)

    def _decide(self, conv: Conversation) -> None:
        conv.verdict = conv.guess.verdict(self.clear_verdicts)  # type: ignore[union-attr]
        if conv.state is _GUESSING:
            conv.state = _DECODING
        if conv.verdict.family_clear:
            self.clear_verdicts[conv.verdict.dialect] += 1

    def _finish(self, conv: Conversation, why: str | None = None) -> Iterator[Record]:
        """The conversation ends (end of capture, or ``why``): report everything it still holds."""
        if conv.state is _IGNORED:
            return
        if conv.held:
            yield from self._classify_held(conv)
            if conv.state is _IGNORED:
                return
        if conv.enet is not None:
            for it in conv.enet.finish():
                yield self._enet_record(conv, it)
            return
        for d, side in (conv.sides or {}).items():
            if side.framer is None:
                continue
            while side.tcp.pending:
                for chunk in side.tcp.flush_gap():
                    for item in side.framer.feed(chunk):
                        yield from self._message(conv, d, item)
            for item in side.framer.finish(why):
                yield from self._message(conv, d, item)
        unproven = conv.state is _UNCONFIRMED and (
            conv.framing is _DATAGRAM
            or conv.framing is _STREAM and not self._known_port(conv))
        if conv.pending and not unproven:
            if conv.guess is not None and conv.verdict is None:
                self._decide(conv)
            pending, conv.pending = conv.pending, []
            for d, item in pending:
                yield from self._emit(conv, d, item)
        for d, side in (conv.sides or {}).items():
            if side.debugger is not None:
                msg, side.debugger = side.debugger, None
                yield self._record(conv, d, Pdu(side.framer.frame if side.framer else 0, side.framer.time if side.framer
                                                else 0.0, msg.offset, b""), **msg.cut(why))

    def _record(self, conv: Conversation, d: str, item: Item_, **kw: Any) -> Record:
        src, dst = (conv.client, conv.server) if d == "c2s" else (conv.server, conv.client)
        transport = "websocket" if conv.framing is _WEBSOCKET else conv.transport
        v = conv.verdict
        kw.setdefault("wire_bytes", item.wire)
        kw.setdefault("offset", item.offset)
        return Record(item.frame, item.time, src[0], src[1], dst[0], dst[1], transport, d,
                      v.dialect if v else "", evidence=v.evidence if v else "", **kw)

    def _emit(self, conv: Conversation, d: str, item: Item_) -> Iterator[Record]:
        if isinstance(item, Skipped):
            yield self._record(conv, d, item, kind="error", error=f"offset {item.offset}: {item.size} bytes "
                                                                    f"skipped: {item.reason}")
            return
        if item.opcode == WS_TEXT:
            yield self._record(conv, d, item, kind="text", value=item.data.decode("utf-8", "replace"),
                               raw=item.data)
            return
        try:
            value, dialect = decode_message(conv, item.data, self.clear_verdicts)
        except DecodeError as e:
            yield self._record(conv, d, item, kind="error", raw=item.data, error=str(e))
            return
        if conv.framing is _DEBUGGER:
            yield from self._debugger(conv, d, item, value, dialect)
            return
        yield self._record(conv, d, item, kind="variant", value=value, raw=item.data)

    def _debugger(self, conv: Conversation, d: str, item: Pdu, value: Any, dialect: str) -> Iterator[Record]:
        if get_dialect(dialect).family >= 4:
            yield self._record(conv, d, item, **godot4_message(item, value))
            return
        side = conv.side(d)
        if side.debugger is None:
            fields, side.debugger = godot3_start(item, value, lambda data: decode_message(conv, data,
                                                                                         self.clear_verdicts)[0])
            if fields is not None:
                yield self._record(conv, d, item, **fields)
            return
        fields = side.debugger.add(item, value)
        if fields is not None:
            side.debugger = None
            yield self._record(conv, d, item, **fields)


def read_pcap(path: Source, dialect: str = "auto", ports: Iterable[int] = (),
              debugger_ports: Iterable[int] = DEBUGGER_PORTS, heuristics: bool = True, *,
              rpc_names: Mapping[str, Any] | None = None, project: str | None = None,
              multiplayer: bool = True, enet_ports: Iterable[int] = (), enet_control: bool = False,
              enet_compression: str | None = None, on_frame: Callable[[Segment], None] | None = None,
              max_conversations: int = MAX_CONVERSATIONS, max_held_bytes: int = MAX_HELD_BYTES) -> Iterator[Record]:
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

    Memory is bounded: at most ``max_conversations`` conversations are tracked and they hold at
    most ``max_held_bytes`` in all (defaults in ``spec.transports``); a conversation finished early
    to stay inside reports what it held as error records.
    """
    return iter(PcapReader(path, dialect, ports, debugger_ports, heuristics, rpc_names=rpc_names,
                           project=project, multiplayer=multiplayer, enet_ports=enet_ports,
                           enet_control=enet_control, enet_compression=enet_compression, on_frame=on_frame,
                           max_conversations=max_conversations, max_held_bytes=max_held_bytes))
