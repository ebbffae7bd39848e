"""Godot's high-level multiplayer protocols as data.

* Godot 3.x ``MultiplayerAPI`` (core/io/multiplayer_api.cpp, 3.1-3.6): a plain command byte, then
  method/property names as C strings and standard Variants.
* Godot 4.x ``SceneMultiplayer`` (modules/multiplayer/scene_*.cpp): a command byte with flag bits,
  numeric node and method ids, *compressed* Variants, replication and SYS packets.
* The transport headers around them: Godot 3's ENet peer header and channel-0 system messages,
  Godot 3's 9-byte WebSocket header, Godot 4's WebSocket peer-id message, the ENet channel maps.

Every layout is a tuple of field descriptions (:class:`Int`, :class:`Choice`, :class:`Text`,
:class:`Blob`, :class:`When`, :class:`Repeat`, :class:`Switch`) that a reader walks in order, like
dpkt's ``__hdr__`` or a Kaitai ``seq``: the Python decoder and encoder
(``godot_dissect.multiplayer.layout``), the scapy layers and the Lua generator all walk these same
tuples. Integers carry their ``struct`` code with the byte order (``"<I"`` = u32 little-endian,
what Godot's ``encode_uint32`` writes); named bit ranges of an integer are :class:`BitField`.

Values a later field depends on are referred to by name: a :class:`Choice` picks its width from a
bit range read before it, a :class:`When` holds when its :class:`Cond` is true, a :class:`Blob`
takes its size from an earlier integer, and ``at``/``end`` name an earlier value that is a byte
offset inside the same packet (Godot's "path appended at the end" trick).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType

from .row import row
from .words import BitField, IntField

# --------------------------------------------------------------------------------------------
# the field vocabulary
# --------------------------------------------------------------------------------------------


@row
class Int(IntField):
    """A fixed-width integer item (``words.IntField``: ``code`` with its byte order, ``"<i"``), with
    named bit ranges and value names."""

    bits: tuple[BitField, ...] = ()
    values: Mapping[int, str] | None = None  # names of the values (command enums)
    kind = "int"


@row
class Choice:
    """An integer whose width is chosen by an earlier value: ``codes[value of selector]``.

    A selector value missing from ``codes`` is an error (the engine's "Was not possible to extract
    the ... compression mode").
    """

    name: str
    selector: str
    codes: Mapping[int, str]
    meaning: str = ""
    bits: Mapping[str, tuple[BitField, ...]] = field(default_factory=dict)  # by code: bits of that width
    kind = "choice"


@row
class Text:
    """UTF-8 text ended by a NUL (the NUL is consumed).

    ``size``: a fixed field of that many bytes (the md5 hex: 32 characters + NUL, the NUL not
    checked by the engine). ``to_end``: the engine reads the text from here to the end of the
    packet (``parse_utf8(p, len - ofs)``): it stops at the first NUL, which the sender always
    writes but the receiver does not require. Otherwise the NUL must be there (Godot 3 method
    names: "Invalid packet received. Size too small."). ``at``: the text starts at the byte offset
    held by that earlier value instead of at the current position (the node path appended at the
    end of an RPC).
    """

    name: str
    meaning: str = ""
    size: int | None = None
    to_end: bool = False
    at: str | None = None
    kind = "text"


@row
class Blob:
    """Raw bytes whose meaning ``content`` says (see :data:`BLOB_CONTENTS`).

    Length: ``size`` names an earlier integer holding it; otherwise up to the offset held by the
    value named ``end`` (when the ``end_when`` conditions hold) or to the end of the packet.
    """

    name: str
    content: str
    meaning: str = ""
    size: str | None = None
    end: str | None = None
    end_when: tuple[Cond, ...] = ()  # ``end`` applies only when these hold
    kind = "blob"


@row
class Cond:
    """``value_of(name) OP operand`` with ``op`` one of ``==``, ``!=``, ``&`` (any bit set)."""

    name: str
    op: str
    operand: int


@row
class When:
    """``item`` is present only when every condition holds."""

    conds: tuple[Cond, ...]
    item: FieldItem
    kind = "when"

    @property
    def name(self) -> str:
        return self.item.name


@row
class Repeat:
    """A group of fields repeated ``count`` times (the name of an earlier integer), or, without a
    count, while more than ``more_than`` bytes are left (the engine's ``while (ofs + N < len)``)."""

    name: str
    items: tuple[FieldItem, ...]
    meaning: str = ""
    count: str | None = None
    more_than: int = 0
    kind = "repeat"

    @property
    def min_size(self) -> int:
        return sum(i.size for i in self.items if isinstance(i, Int))


@row
class Switch:
    """The rest of the packet is one of ``cases``, chosen by the value named ``selector``."""

    selector: str
    cases: Mapping[int, Form]
    meaning: str = ""
    kind = "switch"

    @property
    def name(self) -> str:
        return self.selector + ":case"


FieldItem = Int | Choice | Text | Blob | When | Repeat | Switch

#: what a :class:`Blob` holds, for the consumers that show it
BLOB_CONTENTS = MappingProxyType({
    "bytes": "opaque bytes (send_bytes, auth data)",
    "utf8": "UTF-8 text of the given size, the last byte the NUL written by encode_cstring",
    "variants": "argc standard Variants (encode_variant)",
    "variant": "one standard Variant (encode_variant)",
    "compressed_args": "RPC arguments: argc compressed Variants, or with byte_only the bytes of one "
                       "PackedByteArray argument (no argument at all when empty)",
    "compressed_variant": "one compressed Variant (COMPRESSED_VARIANT)",
    "compressed_variants": "compressed Variants back to back; how many is in the replication "
                           "config, not on the wire",
    "packet": "a whole SceneMultiplayer packet (relayed)",
})


@row
class ItemIndex:
    """Which item of one item list refers to which, by name: what every reader and writer of the
    list looks up (computed once per list by :func:`index_of`). ``flat`` is the list with each
    :class:`When` unwrapped into (item, its conditions); Repeat groups have their own index."""

    flat: tuple[tuple[FieldItem, tuple[Cond, ...]], ...]
    sizes: Mapping[str, Blob]  # integer name -> the Blob whose byte size it holds
    counts: Mapping[str, Repeat]  # integer name -> the Repeat whose group count it holds
    bits: Mapping[str, tuple[Int | Choice, BitField]]  # bit range name -> its integer and the range
    choices: Mapping[str, Choice]  # selector name -> the Choice whose width it picks
    at_texts: tuple[tuple[Text, tuple[Cond, ...]], ...]  # texts placed at an offset an integer holds


_INDEXES: dict[int, tuple[tuple[FieldItem, ...], ItemIndex]] = {}


def index_of(items: tuple[FieldItem, ...]) -> ItemIndex:
    """The cross-reference index of an item list (a Form's, a Repeat group's), built once."""
    got = _INDEXES.get(id(items))
    if got is not None and got[0] is items:
        return got[1]
    flat = tuple((it.item, it.conds) if isinstance(it, When) else (it, ()) for it in items)
    bits: dict[str, tuple[Int | Choice, BitField]] = {}
    for it, _ in flat:
        if isinstance(it, Int):
            for b in it.bits:
                bits[b.name] = (it, b)
        elif isinstance(it, Choice):
            for bs in it.bits.values():
                for b in bs:
                    bits[b.name] = (it, b)
    index = ItemIndex(
        flat=flat,
        sizes=MappingProxyType({it.size: it for it, _ in flat if isinstance(it, Blob) and it.size}),
        counts=MappingProxyType({it.count: it for it, _ in flat if isinstance(it, Repeat) and it.count}),
        bits=MappingProxyType(bits),
        choices=MappingProxyType({it.selector: it for it, _ in flat if isinstance(it, Choice)}),
        at_texts=tuple((it, c) for it, c in flat if isinstance(it, Text) and it.at),
    )
    _INDEXES[id(items)] = (items, index)  # the list is kept alive with it, so its id stays its own
    return index


@row
class Form:
    """One layout of a packet body: ``items`` after the command byte (or, for transport headers,
    from byte 0); ``min_size``/``exact_size`` are the engine's length checks on the whole packet.
    ``index``: which item refers to which (:class:`ItemIndex`)."""

    name: str
    items: tuple[FieldItem, ...]
    min_size: int = 0
    exact_size: int | None = None
    meaning: str = ""
    since: str | None = None  # first engine version with this form
    until: str | None = None  # last engine version with this form
    when: tuple[Cond, ...] = ()  # chosen by the command byte's flags

    @property
    def index(self) -> ItemIndex:
        return index_of(self.items)


@row
class Command:
    """A multiplayer command: its number, engine enum name, the record kind it becomes, its forms."""

    id: int
    name: str
    kind: str
    forms: tuple[Form, ...]
    meaning: str = ""
    since: str | None = None
    #: bit ranges of the command byte this command gives a meaning (Godot 4 flags)
    flags: tuple[BitField, ...] = ()

    @property
    def c_name(self) -> str:
        return f"NETWORK_COMMAND_{self.name}"


@row
class Protocol:
    """A multiplayer packet protocol: how the first byte names the command, and the commands."""

    name: str
    major: int
    command_byte: Int  # bit range "command" = the command number
    commands: tuple[Command, ...]
    meaning: str = ""

    def command(self, number: int) -> Command | None:
        for c in self.commands:
            if c.id == number:
                return c
        return None

    def by_name(self, name: str) -> Command:
        for c in self.commands:
            if c.name == name:
                return c
        raise KeyError(name)


def _names(*names: str) -> Mapping[int, str]:
    return MappingProxyType(dict(enumerate(names)))


U8, U16, U32, I32, U64 = "<B", "<H", "<I", "<i", "<Q"

# --------------------------------------------------------------------------------------------
# Godot 3.x MultiplayerAPI (core/io/multiplayer_api.cpp)
# --------------------------------------------------------------------------------------------

#: bit 31 of an RPC/RSET target: the low 31 bits are the offset of a node path appended at the end
#: of the packet, sent to peers that have not confirmed the path yet
INLINE_PATH_FLAG = 0x80000000
_TARGET_BITS = (
    BitField("inline_path", 31, 1, "set: the node path is a C string at offset path_offset of this packet"),
    BitField("path_offset", 0, 31, "with inline_path: offset of the node path; without: (the whole value) "
                               "the sender's path cache id"),
)
_G3_TARGET = Int("target", U32, "node: the sender's path cache id, or inline_path + path_offset",
                 bits=_TARGET_BITS)
_INLINE = (Cond("inline_path", "==", 1),)
_G3_INLINE_PATH = When(_INLINE,
                       Text("node_path", "node path relative to the multiplayer root", to_end=True,
                            at="path_offset"))

GODOT3 = Protocol(
    name="godot3-multiplayer",
    major=3,
    command_byte=Int("command", U8, "the whole byte is the command (no flags in 3.x)",
                     bits=(BitField("command", 0, 8),)),
    meaning="Godot 3.1-3.6 MultiplayerAPI (3.0 the same inside SceneTree, without RAW)",
    commands=(
        Command(0, "REMOTE_CALL", "rpc", meaning="rpc(), rpc_id(), rpc_unreliable*(): call a method",
                forms=(Form("call", (
                    _G3_TARGET,
                    Text("method", "method name"),
                    Int("argc", U8, "argument count"),
                    Blob("args", "variants", "the arguments", end="path_offset", end_when=_INLINE),
                    _G3_INLINE_PATH,
                ), min_size=6),)),
        Command(1, "REMOTE_SET", "rset", meaning="rset(), rset_id(), rset_unreliable*(): set a property",
                forms=(Form("set", (
                    _G3_TARGET,
                    Text("property", "property name"),
                    Blob("value", "variant", "the new value", end="path_offset", end_when=_INLINE),
                    _G3_INLINE_PATH,
                ), min_size=6),)),
        Command(2, "SIMPLIFY_PATH", "simplify_path", meaning="sender's path cache: id -> node path",
                forms=(Form("simplify", (
                    Int("path_id", U32, "cache id in the sender's namespace (from 1)"),
                    Text("node_path", "node path relative to the multiplayer root", to_end=True),
                ), min_size=5),)),
        Command(3, "CONFIRM_PATH", "confirm_path", meaning="receiver's ack of a SIMPLIFY_PATH",
                forms=(Form("confirm", (
                    Text("node_path", "the confirmed node path", to_end=True),
                ), min_size=2),)),
        Command(4, "RAW", "raw", since="3.1", meaning="send_bytes()",
                forms=(Form("raw", (Blob("data", "bytes", "the bytes given to send_bytes()"),), min_size=2),)),
    ),
)

# --------------------------------------------------------------------------------------------
# Godot 4.x SceneMultiplayer (modules/multiplayer/scene_multiplayer.h and scene_*_interface.cpp)
# --------------------------------------------------------------------------------------------

CMD_MASK = 0x07  # SceneMultiplayer::CMD_MASK: the command number in the low 3 bits
CMD_FLAG_SHIFTS = (4, 5, 6, 7)  # CMD_FLAG_0_SHIFT .. CMD_FLAG_3_SHIFT: per-command flags
NODE_ID_COMPRESSION = _names("u8", "u16", "u32")  # NETWORK_NODE_ID_COMPRESSION_8/16/32
NAME_ID_COMPRESSION = _names("u8", "u16")  # NETWORK_NAME_ID_COMPRESSION_8/16
#: method ids are indexes into the node's RPC names sorted; bit 15 = configured on the Node itself
#: (rpc_config / C++), clear = the script's @rpc methods
NODE_RPC_FLAG = 0x8000
#: md5 hex of the concatenated RPC names (node-level names sorted, then script names sorted)
MD5_HEX_SIZE = 33  # 32 characters + the NUL of encode_cstring

#: a conversation's path caches, spawned nodes and synchronizers: entries of each over all its sending
#: peers (beyond, the oldest entry of the least recently announcing peer is dropped: a per-peer bound alone
#: let 4096 forged peers hold 4096 x 65536 entries, ~430 bytes each) and sending peers (the least recently
#: announcing one's caches dropped beyond; ENet hosts take at most 4095 peers, ENET_PROTOCOL_MAXIMUM_PEER_ID).
#: What is dropped shows as an "unresolved" id later, as for an id announced before the capture began.
MAX_CACHE_ENTRIES = 65536
MAX_CACHE_SENDERS = 4096
SPAWN_CUSTOM_SCENE_ID = 0xFF  # MultiplayerSpawner::INVALID_ID: a custom spawn with an argument
#: SYS packets: command byte, sys command, i32 peer (+ payload)
SYS_CMD_SIZE = 6
#: characters a spawned node's name may not contain (String::validate_node_name, 4.x; "@" of
#: auto-generated names is allowed on purpose)
INVALID_NODE_NAME_CHARS = '.:/"%'

_RPC_FLAGS = (
    BitField("node_comp", 4, 2, "width of node_id", NODE_ID_COMPRESSION),
    BitField("name_comp", 6, 1, "width of method_id", NAME_ID_COMPRESSION),
    BitField("byte_only", 7, 1, "no argc: no arguments, or the raw bytes of one PackedByteArray"),
)
_SYNC_FLAGS = (BitField("delta", 4, 1, "delta synchronisation (4.1+)"),)
_NODE_ID_BITS = MappingProxyType({U32: _TARGET_BITS})

_SYS_ITEMS_PEER = (Int("peer", I32, "peer id"),)
SYS_COMMANDS = MappingProxyType({
    0: Form("AUTH", (Blob("auth", "bytes", "authentication data for the auth callback; "
                                           "none = 'authentication completed' notification"),),
            min_size=2, meaning="SYS_COMMAND_AUTH: send_auth() data, or exactly [07 00] = complete_auth()"),
    1: Form("ADD_PEER", _SYS_ITEMS_PEER, min_size=SYS_CMD_SIZE,
            meaning="SYS_COMMAND_ADD_PEER: server -> client, another client joined (server relay)"),
    2: Form("DEL_PEER", _SYS_ITEMS_PEER, min_size=SYS_CMD_SIZE,
            meaning="SYS_COMMAND_DEL_PEER: server -> client, another client left"),
    3: Form("RELAY", (Int("peer", I32, "client -> server: destination (0 all, -id all but id); "
                                     "server -> client: the original sender"),
                      Blob("packet", "packet", "the relayed SceneMultiplayer packet")),
            min_size=SYS_CMD_SIZE + 1,
            meaning="SYS_COMMAND_RELAY: a packet between two clients through the server"),
})

_SYNC_ENTRY_NET_ID = Int("net_id", U32, "synchronizer: spawn-assigned net id, or with path_cache "
                                        "the sender's path cache id of the MultiplayerSynchronizer",
                         bits=(BitField("path_cache", 31, 1), BitField("id", 0, 31)))
#: the two readings of a SYNC entry's net id (the session resolves each to a node)
SYNC_PATH_CACHE, SYNC_ID = _SYNC_ENTRY_NET_ID.bits

GODOT4 = Protocol(
    name="godot4-scenemultiplayer",
    major=4,
    command_byte=Int("command", U8, "command number (bits 0-2) and per-command flags (bits 4-7)",
                     bits=(BitField("command", 0, 3, "NetworkCommands"),)),
    meaning="Godot 4.0-4.6 SceneMultiplayer",
    commands=(
        Command(0, "REMOTE_CALL", "rpc", flags=_RPC_FLAGS, meaning="rpc(), rpc_id(): call a method",
                forms=(Form("call", (
                    Choice("node_id", "node_comp", MappingProxyType({0: U8, 1: U16, 2: U32}),
                           "the sender's path cache id; as u32 also inline_path + path_offset "
                           "(not all targets confirmed the path)", bits=_NODE_ID_BITS),
                    Choice("method_id", "name_comp", MappingProxyType({0: U8, 1: U16}),
                           "index into the node's sorted RPC names; bit 15 = node-level config"),
                    When((Cond("byte_only", "==", 0),), Int("argc", U8, "argument count")),
                    Blob("args", "compressed_args", "the arguments", end="path_offset", end_when=_INLINE),
                    When(_INLINE,
                         Text("node_path", "node path relative to the multiplayer root", to_end=True,
                              at="path_offset")),
                ), min_size=1),)),
        Command(1, "SIMPLIFY_PATH", "simplify_path", meaning="sender's path cache: cache id -> node path",
                forms=(Form("simplify", (
                    Text("md5", "md5_text() of the node's RPC names concatenated (get_rpc_md5)",
                         size=MD5_HEX_SIZE),
                    Int("cache_id", U32, "cache id in the sender's namespace (from 1)"),
                    Text("node_path", "node path relative to the multiplayer root", to_end=True),
                ), min_size=38),)),
        Command(2, "CONFIRM_PATH", "confirm_path", meaning="receiver's ack of a SIMPLIFY_PATH",
                forms=(
                    Form("id", (Int("valid", U8, "1: the md5 matched the receiver's RPC names"),
                                Int("cache_id", U32, "the confirmed cache id")),
                         exact_size=6, since="4.3", meaning="PR #87190 (not in the 4.2 branch)"),
                    Form("path", (Int("valid", U8, "1: the md5 matched the receiver's RPC names"),
                                  Text("node_path", "the confirmed node path", to_end=True)),
                         min_size=3, since="4.0", until="4.2"),
                )),
        Command(3, "RAW", "raw", meaning="send_bytes()",
                forms=(Form("raw", (Blob("data", "bytes", "the bytes given to send_bytes()"),), min_size=2),)),
        Command(4, "SPAWN", "spawn", meaning="MultiplayerSpawner: a node spawned on the authority",
                forms=(Form("spawn", (
                    Int("scene_id", U8, "index in the spawner's spawnable scenes; 255 = custom spawn",
                        values=MappingProxyType({SPAWN_CUSTOM_SCENE_ID: "custom"})),
                    Int("spawner_id", U32, "the sender's path cache id of the MultiplayerSpawner"),
                    Int("net_id", U32, "net id of the spawned node"),
                    Int("sync_count", U32, "number of synchronizer net ids"),
                    Int("name_len", U32, "size of the node name, NUL included"),
                    Repeat("sync_ids", (Int("sync_id", U32, "net id of a MultiplayerSynchronizer"),),
                           count="sync_count"),
                    Blob("name", "utf8", "the spawned node's name", size="name_len"),
                    When((Cond("scene_id", "==", SPAWN_CUSTOM_SCENE_ID),),
                         Int("arg_size", U32, "size of the spawn argument")),
                    When((Cond("scene_id", "==", SPAWN_CUSTOM_SCENE_ID),),
                         Blob("arg", "compressed_variant", "the custom spawn argument", size="arg_size")),
                    Blob("state", "compressed_variants", "spawn properties of the synchronizers"),
                ), min_size=18),)),
        Command(5, "DESPAWN", "despawn", meaning="MultiplayerSpawner: a spawned node removed",
                forms=(Form("despawn", (Int("net_id", U32, "net id of the despawned node"),), min_size=5),)),
        Command(6, "SYNC", "sync", flags=_SYNC_FLAGS, meaning="MultiplayerSynchronizer state",
                forms=(
                    Form("sync", (
                        Int("time", U16, "sync net time (older states are dropped)"),
                        Repeat("entries", (_SYNC_ENTRY_NET_ID,
                                           Int("size", U32, "size of the state"),
                                           Blob("state", "compressed_variants", "sync properties", size="size")),
                               more_than=8),
                    ), min_size=11, when=(Cond("delta", "==", 0),), meaning="full state, unreliable"),
                    Form("delta", (
                        Repeat("entries", (_SYNC_ENTRY_NET_ID,
                                           Int("indexes", U64, "bit mask of the changed properties"),
                                           Int("size", U32, "size of the changed values"),
                                           Blob("state", "compressed_variants", "changed properties",
                                                size="size")),
                               more_than=16),
                    ), min_size=11, when=(Cond("delta", "==", 1),), since="4.1",
                        meaning="changed properties only, reliable"),
                )),
        Command(7, "SYS", "sys", meaning="system messages: auth, peers, relay",
                forms=(Form("sys", (
                    Int("sys_command", U8, "SysCommands", values=MappingProxyType(
                        {k: f.name for k, f in SYS_COMMANDS.items()})),
                    Switch("sys_command", SYS_COMMANDS),
                ), min_size=2),)),
    ),
)

PROTOCOLS = MappingProxyType({3: GODOT3, 4: GODOT4})

#: the compressed Variant encoding of Godot 4 (MultiplayerAPI::encode_and_compress_variant)
@row
class CompressedVariant:
    type_bits: BitField
    mode_bits: BitField
    bool_value_bits: BitField
    int_codes: Mapping[int, str]  # mode -> struct code of the value that follows the meta byte
    meaning: str


COMPRESSED_VARIANT = CompressedVariant(
    type_bits=BitField("type", 0, 6, "Variant type id (VARIANT_META_TYPE_MASK 0x3F)"),
    mode_bits=BitField("mode", 6, 2, "INT: width of the value (VARIANT_META_EMODE_MASK 0xC0)"),
    bool_value_bits=BitField("value", 7, 1, "BOOL: the value (VARIANT_META_BOOL_MASK 0x80)"),
    int_codes=MappingProxyType({0: "<b", 1: "<h", 2: "<i", 3: "<q"}),  # ENCODE_8/16/32/64
    meaning="BOOL: one meta byte; INT: meta byte + the value in the narrowest width that holds it; "
            "any other type: the standard encode_variant bytes, whose first byte already is the type",
)

# --------------------------------------------------------------------------------------------
# transports around the packets
# --------------------------------------------------------------------------------------------


@row
class Channel:
    number: int
    name: str
    meaning: str


@row
class EnetSend:
    """How an ENet multiplayer peer sends a packet of one transfer mode: the channel (by name, for
    transfer channel 0), the ENet command, and the command of its fragments when it is larger than
    the MTU allows (spec.enet command names)."""

    channel: str
    command: str
    fragment: str


#: MultiplayerPeer.TransferMode (3.x NetworkedMultiplayerPeer the same numbers)
TRANSFER_MODES = _names("unreliable", "unreliable_ordered", "reliable")


@row
class ChannelMap:
    """ENet channels of a Godot major version; a custom transfer channel N goes to ENet channel
    ``N + custom_offset``; ``sends``: transfer mode name -> :class:`EnetSend`."""

    major: int
    channels: tuple[Channel, ...]
    custom_offset: int
    meaning: str
    sends: Mapping[str, EnetSend] = field(default_factory=dict)

    def name(self, enet_channel: int) -> str:
        for c in self.channels:
            if c.number == enet_channel:
                return c.name
        return f"custom {enet_channel - self.custom_offset}"

    def enet_channel(self, transfer_channel: int, mode: str) -> int:
        """The ENet channel a packet of transfer ``mode`` on ``transfer_channel`` goes on."""
        if transfer_channel > 0:
            return transfer_channel + self.custom_offset
        want = self.sends[mode].channel
        return next(c.number for c in self.channels if c.name == want)


ENET_CHANNELS = MappingProxyType({
    3: ChannelMap(3, (
        Channel(0, "config", "SYSMSG_ADD_PEER / SYSMSG_REMOVE_PEER from the server (ENET3_SYSMSG)"),
        Channel(1, "reliable", "TRANSFER_MODE_RELIABLE"),
        Channel(2, "unreliable", "TRANSFER_MODE_UNRELIABLE (unsequenced) and _ORDERED"),
    ), custom_offset=0, meaning="NetworkedMultiplayerENet SYSCH_CONFIG/RELIABLE/UNRELIABLE; "
                                "set_transfer_channel(N > 0) sends on ENet channel N",
       # 3.x never sets ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT: big unreliable packets go reliable
       sends=MappingProxyType({
           "reliable": EnetSend("reliable", "SEND_RELIABLE", "SEND_FRAGMENT"),
           "unreliable": EnetSend("unreliable", "SEND_UNSEQUENCED", "SEND_FRAGMENT"),
           "unreliable_ordered": EnetSend("unreliable", "SEND_UNRELIABLE", "SEND_FRAGMENT"),
       })),
    4: ChannelMap(4, (
        Channel(0, "reliable", "TRANSFER_MODE_RELIABLE on channel 0"),
        Channel(1, "unreliable", "TRANSFER_MODE_UNRELIABLE / _ORDERED on channel 0"),
    ), custom_offset=1, meaning="ENetMultiplayerPeer SYSCH_RELIABLE/UNRELIABLE; custom channel N "
                                "is ENet channel N + 1",
       # ENetMultiplayerPeer::put_packet: unreliable modes add ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT
       sends=MappingProxyType({
           "reliable": EnetSend("reliable", "SEND_RELIABLE", "SEND_FRAGMENT"),
           "unreliable": EnetSend("unreliable", "SEND_UNSEQUENCED", "SEND_UNRELIABLE_FRAGMENT"),
           "unreliable_ordered": EnetSend("unreliable", "SEND_UNRELIABLE", "SEND_UNRELIABLE_FRAGMENT"),
       })),
})

#: Godot 3 ENet data channels: each packet starts with this header (NetworkedMultiplayerENet).
ENET3_PEER_HEADER = (
    Form("3.2+", (Int("src", U32, "the sending peer's id (checked by the server)"),
                  Int("dst", I32, "target: 1 server, 0 all, -id all but id, else that peer")),
         min_size=8, since="3.2", meaning="PR #25004 'Save 4 bytes in ENet multiplayer protocol'"),
    Form("3.0-3.1", (Int("src", U32, "the sending peer's id"), Int("dst", I32, "target peer"),
                     Int("flags", U32, "packet flags (0, 1, 2)")),
         min_size=12, since="3.0", until="3.1"),
)

#: Godot 3 ENet channel 0: server -> client peer announcements, 8 bytes.
ENET3_SYSMSG = Form("sysmsg", (
    Int("sysmsg", U32, "what happened", values=_names("ADD_PEER", "REMOVE_PEER")),
    Int("peer", U32, "the peer that joined or left"),
), min_size=8, meaning="NetworkedMultiplayerENet SYSMSG_* on SYSCH_CONFIG (server relay)")

#: Godot 3 WebSocketMultiplayerPeer: every message starts with this header (PROTO_SIZE 9).
WS3_TYPES = _names("SYS_NONE", "SYS_ADD", "SYS_DEL", "SYS_ID")
WS3_HEADER = Form("ws3", (
    Int("type", U8, "SYS_NONE: data; else a system message from the server", values=WS3_TYPES),
    Int("from", U32, "the sending peer (1 for system messages)"),
    Int("to", I32, "target peer (0 for system messages)"),
), min_size=9, meaning="Godot 3 WebSocketMultiplayerPeer header")
WS3_SYS = Form("ws3-sys", (Int("peer", I32, "the peer that joined, left, or your id"),), min_size=4,
               meaning="payload of SYS_ADD / SYS_DEL / SYS_ID")

#: Godot 4 WebSocketMultiplayerPeer: the server's first binary message is the client's peer id;
#: the client closes the connection when it is not exactly 4 bytes or the id is below 2.
WS4_PEER_ID = Form("peer_id", (Int("peer", I32, "the client's unique id"),), exact_size=4,
                   meaning="first server -> client message of WebSocketMultiplayerPeer")
WS4_MIN_PEER_ID = 2

#: what the record kinds mean (docs, CLI help): in spec/record_kinds.py, which loads without this module
from .record_kinds import RECORD_KINDS  # noqa: E402, F401 - re-exported
