"""Conversations stage: segments -> conversations (the 5-tuple, both directions), with an explicit
state, in a bounded table.

A conversation goes NEW -> UNCONFIRMED -> GUESSING -> DECODING (or IGNORED): its framing is
chosen, then its first whole message shows it is Godot, then its dialect is guessed while its
first messages are held, then everything is decoded as it comes. The table holds at most
``max_conversations``; closed (FIN/RST both ways, or RST) and idle conversations are finished
first, then the least recently active. What a finished conversation still held becomes error
records (the reader's ``finish``), never a silent drop.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..detect import DialectGuess, DialectVerdict
from ..spec.transports import IDLE_SECONDS, MAX_CONVERSATIONS
from .packets import TCP_ACK, TCP_SYN, Segment
from .tcp import Chunk, TcpDirection

#: capture seconds between two moves of a conversation to the recent end of the table
_TOUCH = 1.0


class State(enum.Enum):
    NEW = "new"  # nothing known: TCP bytes held until the framing shows, UDP probed for ENet
    UNCONFIRMED = "unconfirmed"  # framing chosen by a heuristic; no whole Godot message seen yet
    GUESSING = "guessing"  # Godot; the dialect is guessed from the first messages, which are held
    DECODING = "decoding"  # dialect known: every message is decoded as it comes
    IGNORED = "ignored"  # not Godot: its packets are dropped


class Framing(enum.Enum):
    DATAGRAM = "udp"  # one Variant per UDP datagram
    STREAM = "stream"  # u32-length-prefixed PDUs
    DEBUGGER = "debugger"  # length-prefixed PDUs grouped into debugger messages
    WEBSOCKET = "websocket"  # RFC 6455 messages
    ENET = "enet"  # ENet datagrams carrying the high-level multiplayer


@dataclass
class Side:
    """One direction of a TCP conversation."""

    tcp: TcpDirection = field(default_factory=TcpDirection)
    framer: Any = None  # LengthPrefixFramer | WebSocketFramer, made when the framing is known
    debugger: Any = None  # assembly.Godot3Debugger: a Godot 3 game's message being assembled
    #: (the verdict it was made for, the line writer inorder.in_order calls): the reader's cache
    line: Any = None


#: what one item a conversation holds costs in memory beyond its bytes: a TCP chunk held before the framing shows
#: (its (direction, Chunk, aligned) tuple, the Chunk, its bytes object and time: ~190 bytes measured) or a message
#: held while the conversation is unconfirmed or its dialect guessed (its tuple, Pdu and bytes: ~280 bytes), counted
#: in ``held_bytes`` so that a trickle of tiny segments or datagrams meets the capture's held-bytes budget as its
#: memory does, not as its few bytes
HELD_ITEM_COST = 256


@dataclass(eq=False)
class Conversation:
    key: tuple
    transport: str  # "udp" | "tcp"
    client: tuple[str, int]
    server: tuple[str, int]
    state: State = State.NEW
    framing: Framing | None = None
    verdict: DialectVerdict | None = None
    guess: DialectGuess | None = None
    #: messages held while the conversation is UNCONFIRMED or GUESSING, in capture order
    pending: list[tuple[str, Any]] = field(default_factory=list)
    sides: dict[str, Side] | None = None  # TCP only
    held: list[tuple[str, Chunk, bool]] = field(default_factory=list)  # TCP bytes before the framing shows
    held_size: int = 0  # bytes of ``held``
    head: bytearray = field(default_factory=bytearray)  # its first MAX_HTTP_HEAD bytes in the first direction
    mp: Any = None  # MultiplayerSession of a WebSocket multiplayer conversation
    enet: Any = None  # EnetConversation of an ENet conversation
    probes: int = 0  # UDP datagrams looked at for ENet
    last_time: float = 0.0

    def side(self, d: str) -> Side:
        if self.sides is None:
            self.sides = {"c2s": Side(), "s2c": Side()}
        return self.sides[d]

    @property
    def closed(self) -> bool:
        """Both directions ended (FIN or RST each way)."""
        sides = self.sides
        return sides is not None and sides["c2s"].tcp.closed and sides["s2c"].tcp.closed

    @property
    def quiet(self) -> bool:
        """Nothing held and nothing left to report: the conversation can be forgotten silently."""
        if self.held or self.pending:
            return False
        for s in (self.sides or {}).values():
            if s.tcp.pending or s.debugger is not None or (s.framer is not None and not s.framer.quiet):
                return False
        return True

    @property
    def held_bytes(self) -> int:
        """Bytes this conversation holds (for the capture's memory budget)."""
        n = self.held_size + HELD_ITEM_COST * (len(self.held) + len(self.pending))
        for _, item in self.pending:
            n += len(getattr(item, "data", b""))
        if self.sides is not None:
            for s in self.sides.values():
                n += s.tcp.pending_bytes
                if s.framer is not None:
                    n += s.framer.held_bytes
                if s.debugger is not None:
                    n += s.debugger.held_bytes
        if self.enet is not None:
            n += self.enet.held_bytes
        return n


class ConversationTable:
    """Conversations by key, least recently active first; bounded."""

    def __init__(self, server_ports: set[int], max_conversations: int = MAX_CONVERSATIONS,
                 idle_seconds: float = IDLE_SECONDS) -> None:
        self.server_ports = server_ports
        self.max_conversations = max_conversations
        self.idle_seconds = idle_seconds
        self.by_key: OrderedDict[tuple, Conversation] = OrderedDict()

    def __len__(self) -> int:
        return len(self.by_key)

    def __iter__(self) -> Iterator[Conversation]:
        return iter(list(self.by_key.values()))

    def lookup(self, seg: Segment) -> tuple[Conversation | None, str]:
        """The conversation of ``seg`` (None: a new one must be made) and the segment's direction."""
        a, b = (seg.src, seg.sport), (seg.dst, seg.dport)
        key = (seg.proto, a, b) if a <= b else (seg.proto, b, a)
        conv = self.by_key.get(key)
        if conv is None:
            return None, ""
        if seg.time - conv.last_time > _TOUCH:  # recency to the second is enough (and cheaper)
            self.by_key.move_to_end(key)
            conv.last_time = seg.time
        return conv, ("c2s" if a == conv.client else "s2c")

    def create(self, seg: Segment) -> tuple[Conversation, str]:
        a, b = (seg.src, seg.sport), (seg.dst, seg.dport)
        key = (seg.proto, a, b) if a <= b else (seg.proto, b, a)
        client, server = a, b
        if seg.proto == "tcp" and seg.flags & TCP_SYN and seg.flags & TCP_ACK:
            client, server = b, a  # first packet seen is the SYN-ACK
        elif seg.dport not in self.server_ports and seg.sport in self.server_ports:
            client, server = b, a  # mid-stream: the known port is the server's
        conv = self.by_key[key] = Conversation(key, seg.proto, client, server, last_time=seg.time)
        return conv, ("c2s" if a == client else "s2c")

    def remove(self, conv: Conversation) -> None:
        if self.by_key.get(conv.key) is conv:
            del self.by_key[conv.key]

    def to_evict(self, now: float) -> Iterator[Conversation]:
        """Conversations to finish before a new one is made: idle ones, then the least recently
        active while the table is full."""
        while self.by_key:
            conv = next(iter(self.by_key.values()))
            if now - conv.last_time > self.idle_seconds or len(self.by_key) >= self.max_conversations:
                self.remove(conv)
                yield conv
            else:
                return

    def heaviest_first(self) -> tuple[int, list[tuple[int, Conversation]]]:
        """Bytes held by all conversations, and (bytes, conversation) of those holding any, the most first (to
        finish while the capture's budget is exceeded: each held_bytes taken once, not once per conversation
        finished)."""
        held = [(conv.held_bytes, conv) for conv in self.by_key.values()]
        held = [x for x in held if x[0]]
        held.sort(key=lambda x: x[0], reverse=True)
        return sum(n for n, _ in held), held
