"""ENet 1.3 as Godot bundles it (``thirdparty/enet``), as data.

Source: ``thirdparty/enet/enet/protocol.h`` and ``protocol.c`` of godotengine/godot (upstream
lsalzman/enet 1.3). Every multi-byte field is big-endian (``BYTE_ORDER``). A UDP datagram is::

    [u16 peer_id word][u16 sent_time, only if the SENT_TIME flag is set]
    [u32 checksum, only if the host installed a checksum callback -- Godot never does]
    command, command, ...          (everything after the header is compressed when COMPRESSED is set)

and a command is the 4-byte command header, the command's fixed body (``CommandDef.fields``) and,
for the five data commands, ``data_length`` bytes of packet data. The parser, builder, scapy layers,
the Lua generator and the fuzzer all read these tables; nothing else spells a command number, a
field width or a limit.
"""

from __future__ import annotations

import struct
from functools import cached_property

# the compressor table is a module of its own: the command line needs its names at start-up, this module
# only when a capture has ENet
from .enet_compressions import COMPRESSIONS, COMPRESSIONS_BY_NAME, Compression  # noqa: F401
from .row import row
from .words import BIG, BitField, IntField, joined_format

#: ``struct`` byte-order prefix of every ENet field (network order).
BYTE_ORDER = BIG


def enet_field(name: str, code: str, c_name: str, meaning: str) -> IntField:
    """An ENet field as protocol.h has it: name, ``struct`` code (network order), C name, meaning."""
    return IntField(name, BYTE_ORDER + code, meaning, c_name)



@row
class Check:
    """A rule ENet's receiver applies to a command (``enet_protocol_handle_*``); breaking it makes
    ENet drop the command and the rest of the datagram (``goto commandError``).

    ``left`` is a field name (``"channel"``, ``"data_length"``, ...); ``right`` an int constant, a
    field name, or ``(field, "-", field)``. ``op`` is one of ``< <= > >= != ==``: the relation that
    must HOLD for the command to be accepted.
    """

    left: str
    op: str
    right: int | str | tuple[str, str, str]
    reason: str


@row
class CommandDef:
    """One ENet command: number, protocol.h name, fixed body fields after the 4-byte command header.

    ``data_length``: the body field giving the length of the packet data that follows the fixed
    part (None: no data). ``delivery``: how the receiving ENet hands the data to the application
    (None for control commands). ``fragment_key``: fields that name the fragment group a fragment
    belongs to (None: not a fragment). ``needs_peer``: False only for CONNECT, the one command
    accepted in a datagram whose header peer id is ``UNASSIGNED_PEER_ID``.
    """

    number: int
    name: str
    fields: tuple[IntField, ...]
    meaning: str
    data_length: str | None = None
    delivery: str | None = None
    fragment_key: tuple[str, ...] | None = None
    needs_peer: bool = True
    checks: tuple[Check, ...] = ()
    sent_flags: tuple[int, ...] = ()

    @property
    def c_name(self) -> str:
        return f"ENET_PROTOCOL_COMMAND_{self.name}"

    @cached_property  # read per command in every datagram parsed
    def body_format(self) -> str:
        return joined_format(self.fields, BYTE_ORDER)

    @cached_property  # read per command in every datagram parsed
    def size(self) -> int:
        """Bytes of header + fixed body, ``commandSizes[number]`` in protocol.c (data not included)."""
        return COMMAND_HEADER_SIZE + struct.calcsize(self.body_format)

    @cached_property  # read per command in every datagram parsed
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)


# --- protocol limits (protocol.h enum, enet.h host defaults) ---------------------------------------
MIN_MTU = 576                      # ENET_PROTOCOL_MINIMUM_MTU
MAX_MTU = 4096                     # ENET_PROTOCOL_MAXIMUM_MTU
MAX_PACKET_COMMANDS = 32           # ENET_PROTOCOL_MAXIMUM_PACKET_COMMANDS: most commands a sender puts in one datagram
MIN_WINDOW_SIZE = 4096             # ENET_PROTOCOL_MINIMUM_WINDOW_SIZE
MAX_WINDOW_SIZE = 65536            # ENET_PROTOCOL_MAXIMUM_WINDOW_SIZE
MIN_CHANNEL_COUNT = 1              # ENET_PROTOCOL_MINIMUM_CHANNEL_COUNT
MAX_CHANNEL_COUNT = 255            # ENET_PROTOCOL_MAXIMUM_CHANNEL_COUNT
MAX_PEER_ID = 0xFFF                # ENET_PROTOCOL_MAXIMUM_PEER_ID
MAX_FRAGMENT_COUNT = 1024 * 1024   # ENET_PROTOCOL_MAXIMUM_FRAGMENT_COUNT
#: ENET_HOST_DEFAULT_MAXIMUM_PACKET_SIZE: largest packet (and fragment totalLength) a host accepts;
#: Godot does not change it.
MAX_PACKET_SIZE = 32 * 1024 * 1024
#: ENET_HOST_DEFAULT_MAXIMUM_WAITING_DATA: bytes a peer may have queued for the application.
MAX_WAITING_DATA = 32 * 1024 * 1024
#: ENET_HOST_DEFAULT_MTU: 1400 in the ENet of Godot 3.x, 1392 in later ENet 1.3 (Godot 4.x).
DEFAULT_MTU = {3: 1400, 4: 1392}
#: header peer id of a peer that has no id yet: only CONNECT is accepted from it.
UNASSIGNED_PEER_ID = MAX_PEER_ID
#: channelID of the peer-level commands (CONNECT, VERIFY_CONNECT, DISCONNECT, PING, limits).
CONTROL_CHANNEL = 0xFF
#: sequence numbers are u16 and wrap.
SEQ_MODULO = 1 << 16

# --- protocol header ---------------------------------------------------------------------------------
HEADER_PEER_WORD = enet_field("peer_word", "H", "peerID", "peer id of the receiver, session id and flags")
HEADER_BITS = (
    BitField("peer_id", 0, 12, "the receiver's peer index at the sender (0xFFF: not assigned yet, CONNECT)"),
    BitField("session_id", 12, 2, "session id, changes on every reconnect of the same peer slot"),
    BitField("compressed", 14, 1, "everything after the header is compressed (codec chosen by the host, "
                                  "not on the wire)"),
    BitField("has_sent_time", 15, 1, "a u16 sent time follows (set whenever a command asks for an ACK)"),
)
HEADER_SENT_TIME = enet_field("sent_time", "H", "sentTime", "low 16 bits of the sender's service time in ms, echoed "
                                                       "back in ACKs for the round-trip time")
HEADER_CHECKSUM = enet_field("checksum", "I", "checksum", "CRC32 over the datagram, only with a checksum callback "
                                                     "(ENet's enet_crc32); Godot never installs one")
PEER_ID, SESSION_ID, FLAG_COMPRESSED, FLAG_SENT_TIME = HEADER_BITS

# --- command header ----------------------------------------------------------------------------------
COMMAND_HEADER = (
    enet_field("command", "B", "command", "command number (low nibble) and flags"),
    enet_field("channel", "B", "channelID", "channel (0xFF: peer-level control command)"),
    enet_field("reliable_seq", "H", "reliableSequenceNumber", "reliable sequence number on that channel"),
)
COMMAND_HEADER_FORMAT = joined_format(COMMAND_HEADER, BYTE_ORDER)
COMMAND_HEADER_SIZE = struct.calcsize(COMMAND_HEADER_FORMAT)
COMMAND_BITS = (
    BitField("number", 0, 4, "ENET_PROTOCOL_COMMAND_MASK: the command number"),
    BitField("unsequenced", 6, 1, "ENET_PROTOCOL_COMMAND_FLAG_UNSEQUENCED (SEND_UNSEQUENCED)"),
    BitField("ack_requested", 7, 1, "ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE: the receiver must ACK this command"),
)
COMMAND_NUMBER, FLAG_UNSEQUENCED, FLAG_ACKNOWLEDGE = COMMAND_BITS
_ACK, _UNSEQ = FLAG_ACKNOWLEDGE.mask, FLAG_UNSEQUENCED.mask

# --- shared field lists ------------------------------------------------------------------------------
_DATA_LENGTH = enet_field("data_length", "H", "dataLength", "bytes of packet data after the fixed part")
_CONNECT_FIELDS = (
    enet_field("outgoing_peer_id", "H", "outgoingPeerID", "the sender's own peer index for this connection"),
    enet_field("incoming_session_id", "B", "incomingSessionID", "session id (0xFF: let the receiver choose)"),
    enet_field("outgoing_session_id", "B", "outgoingSessionID", "session id (0xFF: let the receiver choose)"),
    enet_field("mtu", "I", "mtu", "the sender's MTU, clamped to MIN_MTU..MAX_MTU"),
    enet_field("window_size", "I", "windowSize", "reliable window size in bytes"),
    enet_field("channel_count", "I", "channelCount", "channels wanted (Godot 3.x: 3, Godot 4.x: 255)"),
    enet_field("incoming_bandwidth", "I", "incomingBandwidth", "bytes/s, 0 = unlimited"),
    enet_field("outgoing_bandwidth", "I", "outgoingBandwidth", "bytes/s, 0 = unlimited"),
    enet_field("packet_throttle_interval", "I", "packetThrottleInterval", "ms"),
    enet_field("packet_throttle_acceleration", "I", "packetThrottleAcceleration", "throttle step up"),
    enet_field("packet_throttle_deceleration", "I", "packetThrottleDeceleration", "throttle step down"),
    enet_field("connect_id", "I", "connectID", "random id of this connection attempt (copied, never byte-swapped)"),
)
_FRAGMENT_FIELDS = (
    enet_field("start_seq", "H", "startSequenceNumber", "sequence number of the group's first fragment"),
    _DATA_LENGTH,
    enet_field("fragment_count", "I", "fragmentCount", "fragments in the group"),
    enet_field("fragment_number", "I", "fragmentNumber", "index of this fragment"),
    enet_field("total_length", "I", "totalLength", "length of the reassembled packet"),
    enet_field("fragment_offset", "I", "fragmentOffset", "where this fragment's data goes in the packet"),
)
_DATA_CHANNEL = Check("channel", "<", MAX_CHANNEL_COUNT, "data command on a channel the peer cannot have")
_DATA_SIZE = Check("data_length", "<=", MAX_PACKET_SIZE, "dataLength above the host's maximum packet size")
_FRAGMENT_CHECKS = (
    Check("fragment_count", "<=", MAX_FRAGMENT_COUNT, "fragmentCount above ENET_PROTOCOL_MAXIMUM_FRAGMENT_COUNT"),
    Check("fragment_number", "<", "fragment_count", "fragmentNumber not below fragmentCount"),
    Check("total_length", "<=", MAX_PACKET_SIZE, "totalLength above the host's maximum packet size"),
    Check("fragment_offset", "<", "total_length", "fragmentOffset not below totalLength"),
    Check("data_length", "<=", ("total_length", "-", "fragment_offset"), "fragment runs past totalLength"),
)

COMMANDS: tuple[CommandDef, ...] = (
    CommandDef(1, "ACKNOWLEDGE", (
        enet_field("received_reliable_seq", "H", "receivedReliableSequenceNumber", "reliable_seq of the command acked"),
        enet_field("received_sent_time", "H", "receivedSentTime", "sent_time of the datagram that carried it"),
    ), "acknowledges one reliable command (header channel = the acked command's channel)", sent_flags=(0,)),
    CommandDef(2, "CONNECT", (*_CONNECT_FIELDS,
                              enet_field("data", "I", "data", "user data; Godot: the client's unique peer id")),
               "client asks to connect (channel 0xFF, from the unassigned peer id)", needs_peer=False,
               sent_flags=(_ACK,),
               checks=(Check("channel_count", ">=", MIN_CHANNEL_COUNT, "channelCount below the minimum"),
                       Check("channel_count", "<=", MAX_CHANNEL_COUNT, "channelCount above the maximum"))),
    CommandDef(3, "VERIFY_CONNECT", _CONNECT_FIELDS, "server accepts a CONNECT (channel 0xFF)", sent_flags=(_ACK,),
               checks=(Check("channel_count", ">=", MIN_CHANNEL_COUNT, "channelCount below the minimum"),
                       Check("channel_count", "<=", MAX_CHANNEL_COUNT, "channelCount above the maximum"))),
    CommandDef(4, "DISCONNECT", (enet_field("data", "I", "data", "user data; Godot 3.x: the sender's unique id"),),
               "orderly disconnect (UNSEQUENCED instead of ACKNOWLEDGE when not connected, and from "
               "enet_peer_disconnect_now)", sent_flags=(_ACK, _UNSEQ)),
    CommandDef(5, "PING", (), "keep-alive (reliable, channel 0xFF)", sent_flags=(_ACK,)),
    CommandDef(6, "SEND_RELIABLE", (_DATA_LENGTH,), "a reliable, ordered packet", data_length="data_length",
               delivery="reliable", checks=(_DATA_CHANNEL, _DATA_SIZE), sent_flags=(_ACK,)),
    CommandDef(7, "SEND_UNRELIABLE", (
        enet_field("unreliable_seq", "H", "unreliableSequenceNumber", "unreliable sequence number on the channel"),
        _DATA_LENGTH,
    ), "an unreliable, sequenced packet", data_length="data_length", delivery="unreliable",
        checks=(_DATA_CHANNEL, _DATA_SIZE), sent_flags=(0,)),
    CommandDef(8, "SEND_FRAGMENT", _FRAGMENT_FIELDS, "one fragment of a reliable packet larger than the MTU "
               "(each fragment has its own reliable_seq = start_seq + fragment_number)",
               data_length="data_length", delivery="reliable", fragment_key=("channel", "start_seq"),
               checks=(_DATA_CHANNEL, Check("data_length", ">", 0, "empty fragment"), _DATA_SIZE,
                       *_FRAGMENT_CHECKS,
                       Check("total_length", ">=", "fragment_count", "totalLength below fragmentCount")),
               sent_flags=(_ACK,)),
    CommandDef(9, "SEND_UNSEQUENCED", (
        enet_field("unsequenced_group", "H", "unsequencedGroup", "per-peer counter; duplicates are dropped"),
        _DATA_LENGTH,
    ), "an unreliable, unordered packet (command byte 0x49)", data_length="data_length",
        delivery="unsequenced", checks=(_DATA_CHANNEL, _DATA_SIZE), sent_flags=(_UNSEQ,)),
    CommandDef(10, "BANDWIDTH_LIMIT", (
        enet_field("incoming_bandwidth", "I", "incomingBandwidth", "bytes/s, 0 = unlimited"),
        enet_field("outgoing_bandwidth", "I", "outgoingBandwidth", "bytes/s, 0 = unlimited"),
    ), "new bandwidth limits", sent_flags=(_ACK,)),
    CommandDef(11, "THROTTLE_CONFIGURE", (
        enet_field("packet_throttle_interval", "I", "packetThrottleInterval", "ms"),
        enet_field("packet_throttle_acceleration", "I", "packetThrottleAcceleration", "throttle step up"),
        enet_field("packet_throttle_deceleration", "I", "packetThrottleDeceleration", "throttle step down"),
    ), "new throttle parameters", sent_flags=(_ACK,)),
    CommandDef(12, "SEND_UNRELIABLE_FRAGMENT", _FRAGMENT_FIELDS, "one fragment of an unreliable packet larger "
               "than the MTU (sent only with ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT; start_seq is an "
               "unreliable sequence number)", data_length="data_length", delivery="unreliable",
               fragment_key=("channel", "reliable_seq", "start_seq"),
               checks=(_DATA_CHANNEL, _DATA_SIZE, *_FRAGMENT_CHECKS), sent_flags=(0,)),
)
#: ENET_PROTOCOL_COMMAND_COUNT: numbers at or above it (and 0, NONE) end ENet's command loop.
COMMAND_COUNT = 13
COMMAND_NONE = 0
COMMANDS_BY_NUMBER: dict[int, CommandDef] = {c.number: c for c in COMMANDS}
COMMANDS_BY_NAME: dict[str, CommandDef] = {c.name: c for c in COMMANDS}
#: delivery kinds of the data commands, in the order Payload.delivery documents them.
DELIVERIES = ("reliable", "unreliable", "unsequenced")


#: Godot fingerprints in CONNECT / VERIFY_CONNECT: channel_count -> Godot major version
#: (3.x NetworkedMultiplayerENet default channel_count = SYSCH_MAX = 3; 4.x ENetMultiplayerPeer passes 0,
#: which its ENetConnection turns into ENET_PROTOCOL_MAXIMUM_CHANNEL_COUNT).
GODOT_MAJOR_BY_CHANNEL_COUNT = {3: 3, 255: 4}
#: CONNECT ``data`` carries the client's Godot unique peer id (random, >= 2).
GODOT_CONNECT_DATA = "client unique peer id"


# --- this dissector's reassembly bounds (godot_dissect.enet.reassembly; not ENet's own) ----------------
# Held fragments are counted in fragments and in bytes: each is charged at least the data an ENet
# sender puts in one fragment at MIN_MTU (build.fragment_length(MIN_MTU), 548 bytes; as the Lua
# plugin charges them), so tiny or empty fragments cannot hold memory for free. Across the capture
# the reader's MAX_HELD_BYTES (spec/transports.py) bounds them, as it bounds everything held.
#: open fragment groups of one direction of one peer
REASSEMBLY_PEER_GROUPS = 256
#: bytes charged that one direction of one peer may hold: ENet's own per-peer limit
REASSEMBLY_PEER_BYTES = MAX_WAITING_DATA
#: fragments one channel of one peer may hold: a packet of MAX_PACKET_SIZE cut at the minimum MTU
#: (less at most 64 bytes of headers) needs no more
REASSEMBLY_CHANNEL_FRAGMENTS = -(-MAX_PACKET_SIZE // (MIN_MTU - 64))
#: a group that got no fragment for this long (capture time) is given up: ENet's
#: ENET_PEER_TIMEOUT_MAXIMUM (ms) -- the sender's peer would have timed out by then
REASSEMBLY_STALE_SECONDS = 30.0
#: commands remembered per direction of a peer, all channels together, to tell a retransmission from a
#: new command (ENet's reliable window is 4096 sequence numbers of a channel): one window, not one per
#: channel, so 255 channels of never-repeated sequence numbers hold what one channel does
SEEN_WINDOW = 4096
#: commands remembered by all directions of all peers of a capture together (~100 bytes each): past it
#: the least recently active direction forgets its oldest, so a flood from many peers stays bounded
SEEN_TOTAL = 1 << 16
