"""ENet commands -> the packets the receiving application gets, per direction of a conversation.

Fragments are joined per group (the spec's ``fragment_key``: channel + start_seq for reliable
fragments, channel + reliable_seq + start_seq for unreliable ones); retransmitted reliable commands
(same channel and reliable_seq), repeated unsequenced groups, repeated unreliable commands and
repeated fragments are delivered once. Packets come out in capture order: unlike ENet, late
unreliable packets are not dropped and reliable ones are not reordered.

Memory is bounded by the spec's ``REASSEMBLY_*`` limits, counted in fragments and in bytes (a held
fragment is charged at least :data:`MIN_FRAGMENT_CHARGE`, the data of one fragment at ENet's
smallest MTU, so tiny fragments cost too): per channel (fragments), per direction of a peer
(groups, bytes) and across every reassembler sharing one :class:`FragmentBudget` (the capture's
``MAX_HELD_BYTES``; by default one budget per process, i.e. per capture read by the CLI).
A group that got no fragment for ``REASSEMBLY_STALE_SECONDS`` of capture time is given up. Every
group a bound cuts off comes out as an error Payload naming the bound, the fragments and the bytes.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from ..spec import enet as spec
from ..spec.transports import MAX_HELD_BYTES
from .build import fragment_length
from .model import Command, Datagram

#: the least a held fragment is charged: the data an ENet sender puts in a fragment at MIN_MTU
MIN_FRAGMENT_CHARGE = fragment_length(spec.MIN_MTU)


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


class SeenBudget:
    """The commands remembered by every window that shares it (one per capture read, as the fragment
    budget): past ``limit`` the least recently used window forgets its oldest, so many peers together
    hold what ``limit`` allows, not SEEN_WINDOW each."""

    def __init__(self, limit: int = spec.SEEN_TOTAL) -> None:
        self.limit = limit
        self.total = 0
        self._windows: OrderedDict[int, _Recent] = OrderedDict()  # id -> window, least recently used first

    def used(self, w: _Recent) -> None:
        self._windows[id(w)] = w
        self._windows.move_to_end(id(w))
        while self.total > self.limit:
            oldest = next(iter(self._windows.values()))
            if oldest._items:
                oldest._items.popitem(last=False)
                self.total -= 1
            if not oldest._items:
                oldest._items = OrderedDict()  # a dict keeps the table it grew to; the empty window does not
                del self._windows[id(oldest)]

    def release(self, w: _Recent) -> None:
        """A window nobody reads any more (its direction began a new session): its entries no longer count."""
        if self._windows.pop(id(w), None) is not None:
            self.total -= len(w._items)


class _Recent:
    """A set that forgets its oldest members beyond ``limit``, and when its budget says so."""

    def __init__(self, budget: SeenBudget, limit: int = spec.SEEN_WINDOW) -> None:
        self.limit = limit
        self.budget = budget
        self._items: OrderedDict[object, None] = OrderedDict()

    def __contains__(self, item: object) -> bool:
        return item in self._items

    def add(self, item: object) -> bool:
        """Add; False when it was already there."""
        if item in self._items:
            return False
        self._items[item] = None
        if len(self._items) > self.limit:
            self._items.popitem(last=False)
        else:
            self.budget.total += 1
        self.budget.used(self)
        return True


@dataclass(eq=False)
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
    size: int = 0  # data bytes held
    wire: float = 0.0
    cost: int = 0  # bytes charged: each fragment's data, at least MIN_FRAGMENT_CHARGE
    last_time: float = 0.0  # capture time of its latest fragment
    owner: EnetReassembler | None = None
    key: tuple = ()


class FragmentBudget:
    """The bytes held by the open fragment groups of every reassembler that shares it, and those
    groups in one least-recently-fed order, so the oldest (or stale) group anywhere goes first."""

    def __init__(self, max_bytes: int = MAX_HELD_BYTES,
                 stale_seconds: float = spec.REASSEMBLY_STALE_SECONDS) -> None:
        self.max_bytes = max_bytes
        self.stale_seconds = stale_seconds
        self.held = 0
        self._groups: OrderedDict[int, _Group] = OrderedDict()  # id(group) -> group, oldest first
        self.seen = SeenBudget()  # the windows of recent commands of the same reassemblers

    def touch(self, g: _Group) -> None:
        self._groups[id(g)] = g
        self._groups.move_to_end(id(g))

    def forget(self, g: _Group) -> None:
        self._groups.pop(id(g), None)
        self.held -= g.cost

    def enforce(self, now: float, frame: int) -> None:
        """Give up stale groups, then the oldest ones while more than ``max_bytes`` are held."""
        while self._groups:
            g = next(iter(self._groups.values()))
            if now - g.last_time > self.stale_seconds:
                why = f"no fragment for {self.stale_seconds:g} s (REASSEMBLY_STALE_SECONDS)"
            elif self.held > self.max_bytes:
                why = (f"dropped to bound memory: all peers hold {self.held} bytes > {self.max_bytes} "
                       f"(MAX_HELD_BYTES)")
            else:
                return
            assert g.owner is not None
            g.owner._drop(g, why, frame, now)


#: the budget of reassemblers made without one: the CLI reads one capture per process
DEFAULT_BUDGET = FragmentBudget()


#: why a compressed datagram was not read: ENet does not say which codec the host chose
COMPRESSED_UNNAMED = ("compressed ENet datagram; the codec is not on the wire: name it with --enet-compression "
                      + "|".join(c.name for c in spec.COMPRESSIONS[1:]))


class EnetReassembler:
    """Feed the datagrams of one direction of one conversation, in capture order."""

    def __init__(self, max_groups: int = spec.REASSEMBLY_PEER_GROUPS, max_bytes: int = spec.REASSEMBLY_PEER_BYTES,
                 max_channel_fragments: int = spec.REASSEMBLY_CHANNEL_FRAGMENTS,
                 budget: FragmentBudget | None = None) -> None:
        self.max_groups = max_groups
        self.max_bytes = max_bytes
        self.max_channel_fragments = max_channel_fragments
        self.budget = DEFAULT_BUDGET if budget is None else budget
        self.duplicates = 0  # commands dropped as repeats
        self._connect_id: int | None = None
        self._weight = 0.0  # wire bytes per data byte of the datagram being fed
        self._groups: OrderedDict[tuple, _Group] = OrderedDict()  # least recently fed first
        self._dropped: list[Payload] = []  # error payloads of groups a bound gave up
        self._reset()

    def _reset(self, frame: int = 0, time: float = 0.0) -> None:
        if getattr(self, "_late", None) and self._late[0]:
            self._dropped.append(self._late_report(frame, time))
        for w in (getattr(self, name, None) for name in ("_reliable", "_unreliable", "_unsequenced", "_given_up")):
            if w is not None:
                self.budget.seen.release(w)  # a session's windows end with it (a CONNECT storm)
        # (channel, sequence numbers) of this direction's recent commands, one window for all channels
        self._reliable = _Recent(self.budget.seen)
        self._unreliable = _Recent(self.budget.seen)
        self._unsequenced = _Recent(self.budget.seen)
        for g in list(self._groups.values()):
            self._drop(g, "a new ENet session began", frame, time)
        self._pending = 0  # bytes charged for this side's open groups (EnetConversation.held_bytes)
        self._channel_fragments: dict[int, int] = {}
        # (key, count, length) of groups a bound gave up: their late fragments cannot complete them, and one
        # error record per late fragment would be a flood: counted instead
        self._given_up = _Recent(self.budget.seen)
        self._late = [0, 0]  # fragments, bytes

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
                self._new_session(cmd.fields["connect_id"], frame, time)
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
        if self._dropped:
            out += self._dropped
            self._dropped = []
        return out

    def finish(self) -> list[Payload]:
        """Error payloads for the fragment groups still open when the conversation ends (and for
        any a bound gave up since the last feed)."""
        for g in list(self._groups.values()):
            self._drop(g, "conversation ended", g.first_frame, 0.0)
        if self._late[0]:
            self._dropped.append(self._late_report(0, 0.0))
        out, self._dropped = self._dropped, []
        return out

    def _late_report(self, frame: int, time: float) -> Payload:
        fragments, size = self._late
        self._late = [0, 0]
        return Payload(None, b"", "", frame, time, frame, fragments, ("SEND_FRAGMENT",),
                       error=f"{fragments} later fragments ({size} bytes) of groups given up before were dropped")

    # --- internals ---

    def _new_session(self, connect_id: int, frame: int, time: float) -> None:
        # a retransmitted CONNECT/VERIFY_CONNECT carries the same connect id: same session
        if connect_id != self._connect_id:
            self._connect_id = connect_id
            self._reset(frame, time)

    def _first_time(self, cmd: Command, d: spec.CommandDef) -> bool:
        if d.delivery == "reliable":
            return self._reliable.add((cmd.channel << 16) | cmd.reliable_seq)
        if d.delivery == "unsequenced":
            return self._unsequenced.add(cmd.fields["unsequenced_group"])
        return self._unreliable.add((cmd.channel, cmd.reliable_seq, cmd.fields.get("unreliable_seq")))

    def _fragment(self, cmd: Command, d: spec.CommandDef, frame: int, time: float) -> Payload | None:
        f = cmd.fields
        if d.delivery == "reliable" and not self._reliable.add((cmd.channel << 16) | cmd.reliable_seq):
            self.duplicates += 1
            return None
        values = {**f, "channel": cmd.channel, "reliable_seq": cmd.reliable_seq}
        key = (d.number, *(values[k] for k in d.fragment_key or ()))
        g = self._groups.get(key)
        if g is None and (key, f["fragment_count"], f["total_length"]) in self._given_up:
            self._late[0] += 1
            self._late[1] += len(cmd.data or b"")
            return None
        if g is None:
            seq = f["start_seq"] if d.delivery == "reliable" else cmd.reliable_seq
            g = self._groups[key] = _Group(d.delivery or "", cmd.channel, seq, f["fragment_count"],
                                           f["total_length"], frame, d.name, f["start_seq"], owner=self, key=key)
        elif g.fragment_count != f["fragment_count"] or g.total_length != f["total_length"]:
            # ENet rejects such a fragment (and the rest of its datagram)
            return Payload(cmd.channel, b"", g.delivery, frame, time, g.first_frame, 0, (d.name,), cmd.reliable_seq,
                           error=f"fragment {f['fragment_number']} says {f['fragment_count']} fragments / "
                                 f"{f['total_length']} bytes, its group {g.fragment_count} / {g.total_length}")
        number = f["fragment_number"]
        if number in g.parts:
            self.duplicates += 1
            return None
        data = cmd.data or b""
        cost = max(len(data), MIN_FRAGMENT_CHARGE)
        g.parts[number] = (f["fragment_offset"], data)
        g.size += len(data)
        g.wire += self._weight * len(data)
        g.cost += cost
        g.last_time = time
        self._pending += cost
        self.budget.held += cost
        self._channel_fragments[g.channel] = self._channel_fragments.get(g.channel, 0) + 1
        self._groups.move_to_end(key)
        self.budget.touch(g)
        if len(g.parts) == g.fragment_count:
            self._release(g)
            return self._assemble(g, frame, time)
        self._enforce(g.channel, frame, time)
        return None

    def _release(self, g: _Group) -> None:
        """Forget an open group (completed or given up) and what it held."""
        del self._groups[g.key]
        self._pending -= g.cost
        self._channel_fragments[g.channel] -= len(g.parts)
        self.budget.forget(g)

    def _drop(self, g: _Group, why: str, frame: int, time: float) -> None:
        self._release(g)
        self._given_up.add((g.key, g.fragment_count, g.total_length))
        self._dropped.append(self._incomplete(g, why, frame, time))

    def _enforce(self, channel: int, frame: int, time: float) -> None:
        """The bounds, narrowest first: this channel, this side of the peer, then every peer."""
        while self._channel_fragments.get(channel, 0) > self.max_channel_fragments:
            g = next(g for g in self._groups.values() if g.channel == channel)
            self._drop(g, f"dropped to bound memory: channel {channel} holds more than "
                          f"{self.max_channel_fragments} fragments (REASSEMBLY_CHANNEL_FRAGMENTS)", frame, time)
        while len(self._groups) > self.max_groups or self._pending > self.max_bytes:
            g = next(iter(self._groups.values()))
            self._drop(g, f"dropped to bound memory: this peer holds {len(self._groups)} groups / "
                          f"{self._pending} bytes, more than {self.max_groups} / {self.max_bytes} "
                          f"(REASSEMBLY_PEER_GROUPS / REASSEMBLY_PEER_BYTES)", frame, time)
        self.budget.enforce(time, frame)

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

    def _incomplete(self, g: _Group, why: str, frame: int, time: float) -> Payload:
        return Payload(g.channel, b"", g.delivery, frame, time, g.first_frame, len(g.parts), (g.name,), g.reliable_seq,
                       wire=g.wire, error=f"incomplete {g.name} group start_seq={g.start_seq}: {len(g.parts)} of "
                             f"{g.fragment_count} fragments, {g.size} of {g.total_length} bytes ({why})")
