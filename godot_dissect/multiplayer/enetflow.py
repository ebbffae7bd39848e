"""One UDP conversation that speaks ENet: datagrams -> ENet control messages and the Godot
multiplayer messages inside the reassembled packets.

ENet parsing and reassembly are ``godot_dissect.enet``; the Godot major version comes from the
CONNECT fingerprint (channel count 3 = Godot 3, 255 = Godot 4) or, for a capture that starts after
the handshake, from which protocol the first packets read as (``detect.enet_godot_major``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..enet import Command, Datagram, EnetReassembler, Payload, godot_major_from_connect, parse_datagram
from .message import MpMessage
from .session import MultiplayerSession

#: ENet commands that become records by default; the rest only with ``control=True``
DEFAULT_CONTROL = ("CONNECT", "VERIFY_CONNECT", "DISCONNECT")
#: packets held back while the Godot major version is unknown
MAX_HELD = 32


@dataclass
class Item:
    """One message and where it completed."""

    frame: int
    time: float
    direction: str  # "c2s" | "s2c": held packets can come out with the other direction's datagram
    message: MpMessage
    channel: int | None = None
    wire: float = 0.0  # share of the wire bytes of the frames that carried it (Record.wire_bytes)


@dataclass
class EnetConversation:
    make_session: Callable[[int], MultiplayerSession]
    control: bool | Iterable[str] = False  # True: every control command; else the names in DEFAULT_CONTROL
    compression: str | None = None  # ENet codec the hosts use (not on the wire)
    major: int | None = None
    guess_major: Callable[[bytes, int | None, str], int | None] | None = None
    session: MultiplayerSession | None = None
    client_id: int | None = None
    reassemblers: dict[str, EnetReassembler] = field(
        default_factory=lambda: {"c2s": EnetReassembler(), "s2c": EnetReassembler()})
    held: list[tuple[str, Payload]] = field(default_factory=list)
    votes: dict[int, int] = field(default_factory=dict)
    evidence: str = ""  # why this Godot major

    def feed(self, datagram: bytes, direction: str, frame: int, time: float, frame_len: int = 0) -> list[Item]:
        out: list[Item] = []
        dg = parse_datagram(datagram, self.compression)
        for cmd in dg.commands:
            if cmd.name in ("CONNECT", "VERIFY_CONNECT"):
                major = godot_major_from_connect(cmd)
                if major is not None and self.major is None:
                    self.major = major
                    self.evidence = f"{cmd.name} channel count {cmd.fields.get('channel_count')} = Godot {major}"
                if cmd.name == "CONNECT":
                    self.client_id = cmd.fields.get("data")
            if self._shows(cmd.name):
                out.append(Item(frame, time, direction, self._control(dg, cmd, datagram), cmd.channel))
        if self.session is None and self.major is not None:
            self._start(self.major)
        if dg.error is not None:
            msg = MpMessage(kind="error", command="ENET", raw=datagram)
            carried = any(c.data for c in dg.commands)  # else the error gets the frame's share
            out.append(Item(frame, time, direction, msg.fail(dg.error.offset, dg.error.reason), None,
                            0.0 if carried else float(frame_len)))
        for p in self.reassemblers[direction].feed(dg, frame, time, frame_len):
            out += self._payload(direction, p)
        return out

    @property
    def held_bytes(self) -> int:
        """Bytes held: open fragment groups and packets waiting for the Godot major version."""
        groups = sum(getattr(r, "_pending", 0) for r in self.reassemblers.values())
        return groups + sum(len(p.data) for _, p in self.held)

    def finish(self) -> list[Item]:
        out: list[Item] = []
        for d, r in self.reassemblers.items():
            for p in r.finish():
                out += self._payload(d, p)
        if self.held:
            self._start(max(self.votes, key=lambda k: (self.votes[k], k)) if self.votes else 4)
            out += self._release()
        return out

    # -- internals ---------------------------------------------------------------------------------
    def _shows(self, name: str) -> bool:
        if self.control is True:
            return True
        if self.control:
            return name in self.control  # type: ignore[operator]
        return name in DEFAULT_CONTROL

    def _control(self, dg: Datagram, cmd: Command, datagram: bytes) -> MpMessage:
        fields: dict[str, object] = {"peer_id": dg.peer_id, "reliable_seq": cmd.reliable_seq, **cmd.fields}
        major = godot_major_from_connect(cmd)
        if major is not None:
            fields["godot_major"] = major
        return MpMessage(kind="enet", command=cmd.name, raw=datagram, fields=fields)

    def _payload(self, direction: str, p: Payload) -> list[Item]:
        if p.error is not None:
            msg = MpMessage(kind="error", command="ENET", raw=p.data)
            msg.fields.update(delivery=p.delivery, commands=list(p.commands))
            return [Item(p.frame, p.time, direction, msg.fail(0, p.error), p.channel, p.wire)]
        if self.session is None and self.major is not None:
            self._start(self.major)
        if self.session is None:
            guess = self.guess_major(p.data, p.channel, direction) if self.guess_major else None
            if guess is not None:
                self.votes[guess] = self.votes.get(guess, 0) + 1
            self.held.append((direction, p))
            if len(self.votes) == 1 and sum(self.votes.values()) >= 2 or len(self.held) >= MAX_HELD:
                self._start(max(self.votes, key=lambda k: (self.votes[k], k)) if self.votes else 4)
                return self._release()
            return []
        return self._decode(direction, p)

    def _start(self, major: int) -> None:
        if not self.evidence:
            self.evidence = (f"{self.votes.get(major, 0)} of the first {len(self.held)} packets read as Godot {major}"
                             f" only" if self.votes else f"no CONNECT and no telling packet: Godot {major} assumed")
        self.major = major
        self.session = self.make_session(major)
        self.session.direction_known = self.client_id is not None  # the CONNECT says who the client is
        if self.client_id is not None:
            self.session.client_id = self.client_id

    def _release(self) -> list[Item]:
        held, self.held = self.held, []
        out: list[Item] = []
        for d, p in held:
            out += self._decode(d, p)
        return out

    def _decode(self, direction: str, p: Payload) -> list[Item]:
        assert self.session is not None
        if self.client_id is not None and self.session.client_id is None:
            self.session.client_id = self.client_id
        out = []
        msgs = self.session.decode(p.data, direction, p.channel)
        for m in msgs:  # the packet's wire bytes are shared by what it decodes to
            m.fields["delivery"] = p.delivery
            if p.fragments > 1:
                m.fields.update(fragments=p.fragments, first_frame=p.first_frame)
            out.append(Item(p.frame, p.time, direction, m, p.channel, p.wire / len(msgs)))
        return out
