"""ENet commands -> the packets the receiving application gets, per direction of a conversation.

Fragments are joined per group (the spec's ``fragment_key``: channel + start_seq for reliable
fragments, channel + reliable_seq + start_seq for unreliable ones); retransmitted reliable commands
(same channel and reliable_seq), repeated unsequenced groups, repeated unreliable commands and
repeated fragments are delivered once. Packets come out in capture order: unlike ENet, late
unreliable packets are not dropped and reliable ones are not reordered.

Memory is bounded: at most ``max_groups`` open fragment groups holding at most ``max_bytes`` of
fragment data (ENet's own per-peer limit by default), and bounded windows of recently seen
sequence numbers; whatever is dropped to stay inside comes out as an error Payload.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from ..spec import enet as spec
from .model import Command, Datagram

#: recent sequence numbers remembered per channel for duplicate detection (ENet's reliable window)
SEEN_WINDOW = 4096


@dataclass
class Payload:
    """One packet as the receiving ENet hands it to Godot, or an error about one.

    ``delivery``: "reliable" | "unreliable" | "unsequenced", or "compressed" for the body of a
    compressed datagram nobody could decode (``data`` is then the compressed bytes, ``channel``
    None). ``frame``/``time``: where it completed; ``first_frame``: where its first fragment was.
    ``error``: set for fragment groups that could not be completed (``data`` empty).
    """

    channel: int | None
    data: bytes
    delivery: str
    frame: int
    time: float
    first_frame: int
    fragments: int = 1
    commands: tuple[str, ...] = ()
    reliable_seq: int | None = None
    error: str | None = None
    wire: float = 0.0  # share of the wire bytes of the frames that carried its data (Record.wire_bytes)


class _Recent:
    """A set that forgets its oldest members beyond ``limit``."""

    def __init__(self, limit: int = SEEN_WINDOW) -> None:
        self.limit = limit
        self._items: OrderedDict[object, None] = OrderedDict()

    def add(self, item: object) -> bool:
        """Add; False when it was already there."""
        if item in self._items:
            return False
        self._items[item] = None
        if len(self._items) > self.limit:
            self._items.popitem(last=False)
        return True


@dataclass
class _Group:
    delivery: str
    channel: int
    reliable_seq: int
    fragment_count: int
    total_length: int
    first_frame: int
    name: str
    start_seq: int
    parts: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    size: int = 0
    wire: float = 0.0


#: why a compressed datagram was not read: ENet does not say which codec the host chose
COMPRESSED_UNNAMED = ("compressed ENet datagram; the codec is not on the wire: name it with --enet-compression "
                      + "|".join(c.name for c in spec.COMPRESSIONS[1:]))


class EnetReassembler:
    """Feed the datagrams of one direction of one conversation, in capture order."""

    def __init__(self, max_groups: int = 256, max_bytes: int = spec.MAX_WAITING_DATA) -> None:
        self.max_groups = max_groups
        self.max_bytes = max_bytes
        self.duplicates = 0  # commands dropped as repeats
        self._connect_id: int | None = None
        self._weight = 0.0  # wire bytes per data byte of the datagram being fed
        self._reset()

    def _reset(self) -> None:
        self._reliable: dict[int, _Recent] = {}
        self._unreliable: dict[int, _Recent] = {}
        self._unsequenced = _Recent()
        self._groups: OrderedDict[tuple, _Group] = OrderedDict()
        self._pending = 0

    def feed(self, datagram: Datagram, frame: int, time: float, frame_len: int = 0) -> list[Payload]:
        """``frame_len``: the frame's length on the wire, shared by the commands' data bytes."""
        out: list[Payload] = []
        if datagram.opaque:
            if datagram.error is None:  # no codec named (a named codec that fails is the parser's error)
                out.append(Payload(None, datagram.body, "compressed", frame, time, frame, 0, (),
                                   wire=float(frame_len), error=COMPRESSED_UNNAMED))
            return out
        data_bytes = sum(len(c.data or b"") for c in datagram.commands if c.definition and c.definition.delivery)
        self._weight = frame_len / data_bytes if data_bytes else 0.0
        for cmd in datagram.commands:
            d = cmd.definition
            if d is None:
                continue
            if d.name in ("CONNECT", "VERIFY_CONNECT"):
                self._new_session(cmd.fields["connect_id"])
                continue
            if d.delivery is None:
                continue
            if d.fragment_key is not None:
                p = self._fragment(cmd, d, frame, time)
                if p is not None:
                    out.append(p)
                continue
            if not self._first_time(cmd, d):
                self.duplicates += 1
                continue
            out.append(Payload(cmd.channel, cmd.data or b"", d.delivery, frame, time, frame, 1, (d.name,),
                               cmd.reliable_seq, wire=self._weight * len(cmd.data or b"")))
        return out

    def finish(self) -> list[Payload]:
        """Error payloads for the fragment groups still open when the conversation ends."""
        out = [self._incomplete(g, "conversation ended", g.first_frame, 0.0) for g in self._groups.values()]
        self._groups.clear()
        self._pending = 0
        return out

    # --- internals ---

    def _new_session(self, connect_id: int) -> None:
        # a retransmitted CONNECT/VERIFY_CONNECT carries the same connect id: same session
        if connect_id != self._connect_id:
            self._connect_id = connect_id
            self._reset()

    def _first_time(self, cmd: Command, d: spec.CommandDef) -> bool:
        if d.delivery == "reliable":
            return self._reliable.setdefault(cmd.channel, _Recent()).add(cmd.reliable_seq)
        if d.delivery == "unsequenced":
            return self._unsequenced.add(cmd.fields["unsequenced_group"])
        return self._unreliable.setdefault(cmd.channel, _Recent()).add(
            (cmd.reliable_seq, cmd.fields.get("unreliable_seq")))

    def _fragment(self, cmd: Command, d: spec.CommandDef, frame: int, time: float) -> Payload | None:
        f = cmd.fields
        if d.delivery == "reliable" and not self._reliable.setdefault(cmd.channel, _Recent()).add(cmd.reliable_seq):
            self.duplicates += 1
            return None
        values = {**f, "channel": cmd.channel, "reliable_seq": cmd.reliable_seq}
        key = (d.number, *(values[k] for k in d.fragment_key or ()))
        g = self._groups.get(key)
        if g is None:
            seq = f["start_seq"] if d.delivery == "reliable" else cmd.reliable_seq
            g = self._groups[key] = _Group(d.delivery or "", cmd.channel, seq, f["fragment_count"],
                                           f["total_length"], frame, d.name, f["start_seq"])
        elif g.fragment_count != f["fragment_count"] or g.total_length != f["total_length"]:
            # ENet rejects such a fragment (and the rest of its datagram)
            return Payload(cmd.channel, b"", g.delivery, frame, time, g.first_frame, 0, (d.name,), cmd.reliable_seq,
                           error=f"fragment {f['fragment_number']} says {f['fragment_count']} fragments / "
                                 f"{f['total_length']} bytes, its group {g.fragment_count} / {g.total_length}")
        number = f["fragment_number"]
        if number in g.parts:
            self.duplicates += 1
            return None
        g.parts[number] = (f["fragment_offset"], cmd.data or b"")
        g.size += len(cmd.data or b"")
        g.wire += self._weight * len(cmd.data or b"")
        self._pending += len(cmd.data or b"")
        if len(g.parts) == g.fragment_count:
            del self._groups[key]
            self._pending -= g.size
            return self._assemble(g, frame, time)
        return self._evict(frame, time)

    def _assemble(self, g: _Group, frame: int, time: float) -> Payload:
        # ENet copies each fragment to its offset (clipped to totalLength); bytes no fragment
        # covers would be uninitialised memory there, so a group that leaves gaps is an error
        # here -- and the buffer is only allocated once the received bytes cover it.
        spans = sorted((off, min(off + len(data), g.total_length)) for off, data in g.parts.values())
        covered, reach = 0, 0
        for start, end in spans:
            if end > reach:
                covered += end - max(start, reach)
                reach = end
        if covered != g.total_length:
            return self._incomplete(g, f"fragments cover {covered} of {g.total_length} bytes", frame, time)
        buf = bytearray(g.total_length)
        for off, data in g.parts.values():
            piece = data[:g.total_length - off]
            buf[off:off + len(piece)] = piece
        return Payload(g.channel, bytes(buf), g.delivery, frame, time, g.first_frame, g.fragment_count, (g.name,),
                       g.reliable_seq, wire=g.wire)

    def _evict(self, frame: int, time: float) -> Payload | None:
        if len(self._groups) <= self.max_groups and self._pending <= self.max_bytes:
            return None
        _, g = self._groups.popitem(last=False)
        self._pending -= g.size
        return self._incomplete(g, f"dropped to bound memory ({self.max_groups} groups / {self.max_bytes} bytes)",
                                frame, time)

    def _incomplete(self, g: _Group, why: str, frame: int, time: float) -> Payload:
        return Payload(g.channel, b"", g.delivery, frame, time, g.first_frame, len(g.parts), (g.name,), g.reliable_seq,
                       wire=g.wire, error=f"incomplete {g.name} group start_seq={g.start_seq}: {len(g.parts)} of "
                             f"{g.fragment_count} fragments, {g.size} of {g.total_length} bytes ({why})")
