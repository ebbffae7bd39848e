"""How Godot messages ride on the wire, as data: the u32 length prefix, the remote debugger's ports
and message shapes, RFC 6455 WebSocket frames, the order dialects are tried in, and every limit the
capture reader holds itself to. The reader (``godot_dissect.pcap``), the scapy layers, the fuzzer
and the Lua generator read these; none writes its own copy.

The parsers here (``read_length_prefix``, ``parse_ws_header``, ``unmask``) are the one place
their layouts are turned into code in Python.

Sources: Godot 3.x ``PacketPeerStream`` / ``ScriptDebuggerRemote``, Godot 4.x
``RemoteDebuggerPeerTCP`` / ``WebSocketPeer`` sources, and RFC 6455.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from .row import row

# -- length-prefixed PDUs (StreamPeer.put_var, PacketPeerStream, the TCP debugger) ----------------
#: every PDU: u32 little-endian byte count of the body, then the body
LENGTH_PREFIX = struct.Struct("<I")
PREFIX_SIZE = LENGTH_PREFIX.size
#: the largest body we accept: the debuggers accept up to 8 MiB + 4 (RemoteDebuggerPeerTCP drops
#: ``size > 8 MiB + 4``; Godot 3's editor input buffer is 8 MiB - 4); StreamPeer has no limit of
#: its own but a reader needs one. A bigger claimed length is taken for lost synchronisation.
MAX_PDU = (8 << 20) + 4
#: a body is one encoded Variant: at least its 4-byte header, and a multiple of 4 bytes
MIN_BODY = 4
BODY_ALIGN = 4


def read_length_prefix(buf: bytes | bytearray | memoryview, pos: int = 0) -> int | None:
    """The body length claimed at ``pos``, or None when fewer than 4 bytes are there."""
    if len(buf) - pos < PREFIX_SIZE:
        return None
    return LENGTH_PREFIX.unpack_from(buf, pos)[0]


def length_prefixed(body: bytes, claimed: int | None = None) -> bytes:
    """``body`` with its prefix (``claimed`` overrides the length written, for malformed cases)."""
    return LENGTH_PREFIX.pack((len(body) if claimed is None else claimed) & 0xFFFFFFFF) + body


# -- the remote debugger ------------------------------------------------------------------------------
#: editor's default listening port (editor setting network/debug/remote_port; both majors)
DEBUGGER_PORTS = (6007,)


@row
class DebuggerShape:
    """How one direction of one Godot major's debugger groups PDUs into a message."""

    major: int
    direction: str  # "game->editor" | "editor->game" | "both"
    pdus: str  # the PDU sequence of one message
    array_items: tuple[str, ...] = ()  # a single-Array message: what its items are


#: the debugger message shapes (transports.md 4.2, 4.3)
DEBUGGER_SHAPES = (
    DebuggerShape(3, "game->editor", "String name, int N, then N PDUs (one argument each)"),
    DebuggerShape(3, "editor->game", "one Array", ("command: String", "args...")),
    DebuggerShape(4, "both", "one Array", ("name: String", "thread_id: int", "data: Array")),  # 4.2+
    DebuggerShape(4, "both", "one Array", ("name: String", "data: Array")),  # 4.0, 4.1
)
#: Godot 3 game->editor: the game's output buffer is 8 MiB - 4 and the smallest argument PDU is 8
#: bytes (prefix + a NIL header), so a message holds at most this many arguments; a bigger count
#: is taken for a damaged or hostile stream
MAX_DEBUGGER3_ARGS = ((8 << 20) - 4) // (PREFIX_SIZE + MIN_BODY)
#: Godot 3 game->editor: bytes of one message's PDUs held while it is assembled (the game's output
#: buffer); the rest of a bigger message is counted, not kept, and reported as an error
MAX_DEBUGGER3_MESSAGE = (8 << 20) - 4

# -- WebSocket (RFC 6455) -----------------------------------------------------------------------------
#: opcode -> name
WS_OPCODES = {0: "continuation", 1: "text", 2: "binary", 8: "close", 9: "ping", 10: "pong"}
WS_CONTINUATION, WS_TEXT, WS_BINARY = 0, 1, 2
#: opcodes from here up are control frames (never fragmented, may come between data frames)
WS_CONTROL_MIN = 8
WS_FIN = 0x80
WS_OPCODE_MASK = 0x0F
WS_RSV_SHIFT = 4
WS_MASKED = 0x80
WS_LEN7_MASK = 0x7F
#: 7-bit length values meaning "a 16-bit / 64-bit length follows" (network order)
WS_LEN16, WS_LEN64 = 126, 127
WS_LEN16_FIELD = struct.Struct("!H")
WS_LEN64_FIELD = struct.Struct("!Q")
WS_MASK_KEY_SIZE = 4
#: the largest WebSocket message a Godot peer takes in: the biggest inbound buffer any Godot
#: WebSocket peer is set up with is RemoteDebuggerPeerWebSocket's (1 << 23) - 1 bytes (multiplayer
#: peers default to 64 KiB); a frame or a message claiming more is no Godot traffic the engine
#: would read, and the rest of that direction is reported as one error, not buffered
MAX_WS_MESSAGE = 1 << 23
#: how an HTTP request / response (a WebSocket upgrade) starts
HTTP_STARTS = (b"GET ", b"HTTP")
#: an HTTP upgrade request/response is looked at up to this many bytes
MAX_HTTP_HEAD = 4096
#: TCP bytes held while an HTTP upgrade header has not ended (one delivered piece by piece); beyond it
#: the direction is no WebSocket the reader waits for
MAX_HTTP_HEAD_HELD = 16 * MAX_HTTP_HEAD
#: resync candidates (offsets whose claimed PDU body has not all arrived) kept at once; beyond it
#: the earliest is given up, so a stream where every offset claims a big PDU is scanned in linear
#: time and holds at most MAX_PDU bytes
MAX_RESYNC_CANDIDATES = 256


class WsHeader(NamedTuple):
    """One frame header: where its payload starts and how long it is (a tuple: one is made per
    frame)."""

    fin: bool
    rsv: int
    opcode: int
    masked: bool
    length: int  # payload bytes
    key: bytes  # masking key (b"" when unmasked)
    size: int  # header bytes (2 .. 14)
    len7: int  # the 7-bit length field as sent


def parse_ws_header(buf: bytes | bytearray, pos: int = 0) -> WsHeader | None:
    """The frame header at ``pos``, or None when it has not all arrived."""
    avail = len(buf) - pos
    if avail < 2:
        return None
    b0, b1 = buf[pos], buf[pos + 1]
    n = len7 = b1 & WS_LEN7_MASK
    size = 2
    if n == WS_LEN16:
        if avail < 4:
            return None
        n, size = WS_LEN16_FIELD.unpack_from(buf, pos + 2)[0], 4
    elif n == WS_LEN64:
        if avail < 10:
            return None
        n, size = WS_LEN64_FIELD.unpack_from(buf, pos + 2)[0], 10
    key = b""
    if b1 & WS_MASKED:
        if avail < size + WS_MASK_KEY_SIZE:
            return None
        key = bytes(buf[pos + size:pos + size + WS_MASK_KEY_SIZE])
        size += WS_MASK_KEY_SIZE
    return WsHeader(bool(b0 & WS_FIN), (b0 >> WS_RSV_SHIFT) & 7, b0 & WS_OPCODE_MASK, bool(b1 & WS_MASKED), n, key,
                    size, len7)


def unmask(data: bytes | bytearray | memoryview, key: bytes) -> bytes:
    """RFC 6455 5.3: XOR with the 4-byte key, repeated (the same operation masks)."""
    n = len(data)
    if not n:
        return b""
    k = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(data, "little") ^ int.from_bytes(k, "little")).to_bytes(n, "little")


# -- dialect detection ------------------------------------------------------------------------------
#: dialects tried on a conversation, in preference order on ties: real engines before builds and
#: paper dialects
CANDIDATES = ("godot4", "godot3", "godot4-double", "godot3-double", "godot4-doc-table")
#: messages a guess looks at before it must decide
MAX_SAMPLES = 8
#: while every message reads alike in all dialects, keep looking this long before settling
MAX_AMBIGUOUS_SAMPLES = 64
#: dialects the "is this a Godot message at all" heuristic tries
HEURISTIC_DIALECTS = ("godot4", "godot3")
#: nesting levels the decoder follows (Godot's own limit, Variant ``MAX_RECURSION_DEPTH``)
MAX_DEPTH = 1024
#: Dictionary keys of one Python hash one Dictionary may have (keys that are Arrays, Dictionaries or math values:
#: Python hashes those without a secret, so a message can give every key one hash and make Python's dict take time
#: quadratic in them; distinct keys share a hash by chance about never, and the engine never sends a key twice)
MAX_KEYS_OF_ONE_HASH = 64

# -- the capture reader's own limits (memory stays bounded whatever the capture holds) ----------------
#: conversations tracked at once; beyond it the least recently active one is finished (its
#: leftovers become error records) -- closed (FIN/RST) and idle conversations go first
MAX_CONVERSATIONS = 10_000
#: bytes held across all conversations (TCP out-of-order data, unfinished PDUs and messages, data
#: held while a dialect is guessed); beyond it the conversations holding the most are finished
MAX_HELD_BYTES = 64 << 20
#: a conversation with no packet for this many seconds of capture time is finished
IDLE_SECONDS = 600.0
#: TCP bytes held behind a gap (one direction) before the gap is declared lost
MAX_TCP_PENDING = 4 << 20
#: datagrams of a UDP conversation held while it is not yet known to be Godot
MAX_UDP_HELD = 64
#: items held while a conversation's dialect is guessed: its binary messages (at most MAX_AMBIGUOUS_SAMPLES
#: of them) and, in order between them, WebSocket text messages and skipped runs, which need no dialect and
#: tell none (a million empty text frames were all held); at this many the held items come out: those
#: that need no dialect alone if no binary message is among them, else after the dialect is settled
MAX_GUESS_HELD = 4 * MAX_AMBIGUOUS_SAMPLES
#: the most bytes one capture record may hold, as Wireshark's wiretap takes them: a classic pcap record
#: capturing more (WTAP_MAX_PACKET_SIZE_STANDARD) and a pcapng block longer than MAX_CAPTURE_BLOCK (its
#: MAX_BLOCK_SIZE: a 32-byte packet block head + 128 MiB + 128 KiB) make the capture damaged there, so a
#: length claimed by a damaged record never has the reader hold the rest of the file
MAX_CAPTURED_FRAME = 262_144
MAX_CAPTURE_BLOCK = 32 + (128 << 20) + (128 << 10)
#: interfaces one pcapng section may describe (each is remembered for its packets: a file of nothing but
#: Interface Description Blocks made memory grow with it); a capture tool writes a few, one per interface
#: captured on, and an Enhanced Packet Block names one with a u32
MAX_CAPTURE_INTERFACES = 1 << 16

#: a length-prefixed stream not yet known to be Godot: the longest first PDU whose missing bytes
#: the Lua dissector asks Wireshark to reassemble on the strength of its length prefix alone.
#: Reassembly costs Wireshark time per segment held, so a guess must stay small; a flow whose first
#: PDU is longer is recognised at a later PDU that arrives whole (confirmed flows have no such bound)
MAX_GUESSED_PDU = 4096
#: the most bytes of one PDU the Lua dissector asks Wireshark's TCP to reassemble (desegment_len).
#: Wireshark 4.0's reassembly walks the list of every segment it holds for a PDU each time it adds one
#: (epan/reassemble.c: LINK_FRAG and the completeness scan), so a PDU that arrives in m segments costs
#: m^2 whatever the dissector (DNS over TCP does the same). The rest of a longer PDU is collected by the
#: plugin, a segment at a time, in time linear in segments (within the capture's MAX_HELD_BYTES)
LUA_DESEGMENT_MAX = 4096
#: the longest PDU the Lua dissector resynchronises on after lost synchronisation (an implausible length
#: prefix, or a long PDU Wireshark stopped delivering): it holds the undecided bytes itself (Wireshark's
#: reassembly cannot be asked for "the next plausible PDU"), at most this many at once, so a skipped run
#: costs time linear in its bytes; a longer first PDU after the run is skipped too (the reader waits for it)
LUA_RESYNC_MAX = 4096
#: the most Variants (container elements and entries, Object properties, packed-array elements) the Lua
#: dissector shows for one call of a dissector (a frame's messages; a multiplayer packet with its
#: arguments): the rest are still read and checked, and said in one "… n more not shown" item with expert
#: info. Wireshark 4.0 stops a packet's tree at gui.max_tree_items (1,000,000) items with a "Dissector bug"
#: and drops the rest of it, and the details tree adds a few items per Variant (an 8 MB PDU holds 2 million)
LUA_MAX_SHOWN = 100_000
