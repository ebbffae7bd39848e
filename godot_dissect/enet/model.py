"""What a parsed ENet datagram is made of: the header, commands, and the error that stopped parsing."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..spec import enet as spec


@dataclass(frozen=True)
class EnetError:
    """Where (byte offset in the datagram, or in the decompressed body) and why parsing stopped."""

    offset: int
    reason: str

    def __str__(self) -> str:
        return f"offset {self.offset}: {self.reason}"


@dataclass
class Command:
    """One ENet command. ``fields`` holds the body fields of the spec's CommandDef by name;
    ``data`` the packet data of the data commands (None for control commands)."""

    number: int
    channel: int
    reliable_seq: int
    fields: dict[str, int] = field(default_factory=dict)
    data: bytes | None = None
    #: the flag bits of the command byte (ACKNOWLEDGE 0x80, UNSEQUENCED 0x40, and any unused bits)
    flags: int = 0
    #: byte offset of the command in the datagram (in the decompressed body when compressed)
    offset: int = 0

    @property
    def definition(self) -> spec.CommandDef | None:
        return spec.COMMANDS_BY_NUMBER.get(self.number)

    @property
    def name(self) -> str:
        d = self.definition
        return d.name if d is not None else f"UNKNOWN_{self.number}"

    @property
    def ack_requested(self) -> bool:
        return bool(spec.FLAG_ACKNOWLEDGE.get(self.flags))

    @property
    def unsequenced(self) -> bool:
        return bool(spec.FLAG_UNSEQUENCED.get(self.flags))

    @property
    def command_byte(self) -> int:
        return (self.flags & ~spec.COMMAND_NUMBER.mask & 0xFF) | spec.COMMAND_NUMBER.put(self.number)

    @property
    def size(self) -> int:
        """Bytes on the wire: header, fixed body and data."""
        d = self.definition
        return (d.size if d else spec.COMMAND_HEADER_SIZE) + len(self.data or b"")

    @property
    def delivery(self) -> str | None:
        d = self.definition
        return d.delivery if d else None

    def __getitem__(self, name: str) -> int:
        return self.fields[name]


@dataclass
class Datagram:
    """One UDP payload read as ENet.

    ``body`` is what followed the header: the command bytes, or when ``compressed`` the compressed
    bytes as sent (``decompressed`` then holds the decoded commands' bytes if a codec was given and
    worked, and ``compression`` names it). ``padding`` counts zero bytes after the last command of a
    decompressed body (FastLZ pads short inputs to 16 bytes; ENet stops at a zero command byte).
    """

    peer_id: int
    session_id: int
    compressed: bool
    sent_time: int | None
    commands: list[Command] = field(default_factory=list)
    error: EnetError | None = None
    header_size: int = 2
    body: bytes = b""
    checksum: int | None = None
    decompressed: bytes | None = None
    compression: str | None = None
    padding: int = 0

    @property
    def peer_word(self) -> int:
        return (spec.PEER_ID.put(self.peer_id) | spec.SESSION_ID.put(self.session_id)
                | spec.FLAG_COMPRESSED.put(int(self.compressed))
                | spec.FLAG_SENT_TIME.put(int(self.sent_time is not None)))

    @property
    def opaque(self) -> bool:
        """True when the commands could not be read because the body is compressed."""
        return self.compressed and self.decompressed is None
