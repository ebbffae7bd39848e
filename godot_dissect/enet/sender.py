"""Sequence numbers the way one ENet peer assigns them to one connection
(``enet_peer_send`` + ``enet_peer_setup_outgoing_command``), for crafting realistic traffic."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..spec import enet as spec
from . import build
from .model import Command

_U16 = spec.SEQ_MODULO - 1


@dataclass
class EnetSender:
    """Turns packets into numbered commands. ``reliable``/``unsequenced``/``unreliable_fragment``
    are ENet's packet flags (ENET_PACKET_FLAG_*); Godot 3 sends unreliable packets UNSEQUENCED,
    Godot 4 UNSEQUENCED | UNRELIABLE_FRAGMENT."""

    channel_count: int
    mtu: int = spec.DEFAULT_MTU[3]
    reliable_seq: list[int] = field(default_factory=list)      # per channel: last reliable seq
    unreliable_seq: list[int] = field(default_factory=list)    # per channel: last unreliable seq
    control_seq: int = 0       # peer-level reliable seq (channel 0xFF)
    unsequenced_group: int = 0

    def __post_init__(self) -> None:
        self.reliable_seq = self.reliable_seq or [0] * self.channel_count
        self.unreliable_seq = self.unreliable_seq or [0] * self.channel_count

    def send(self, channel: int, data: bytes, *, reliable: bool = True, unsequenced: bool = False,
             unreliable_fragment: bool = False) -> list[Command]:
        if not 0 <= channel < self.channel_count:
            raise ValueError(f"channel {channel} outside 0..{self.channel_count - 1}")
        step = build.fragment_length(self.mtu)
        if len(data) > step:
            if unreliable_fragment and not reliable and self.unreliable_seq[channel] < _U16:
                start = (self.unreliable_seq[channel] + 1) & _U16
                self.unreliable_seq[channel] = start  # one unreliable seq for the whole group
                return build.fragments(channel, data, start, mtu=self.mtu, reliable=False,
                                       reliable_seq=self.reliable_seq[channel])
            start = (self.reliable_seq[channel] + 1) & _U16
            frags = build.fragments(channel, data, start, mtu=self.mtu)
            self.reliable_seq[channel] = (start + len(frags) - 1) & _U16
            self.unreliable_seq[channel] = 0
            return frags
        if unsequenced and not reliable:
            self.unsequenced_group = (self.unsequenced_group + 1) & _U16
            return [build.send_unsequenced(channel, self.unsequenced_group, data)]
        if reliable or self.unreliable_seq[channel] >= _U16:
            self.reliable_seq[channel] = (self.reliable_seq[channel] + 1) & _U16
            self.unreliable_seq[channel] = 0
            return [build.send_reliable(channel, self.reliable_seq[channel], data)]
        self.unreliable_seq[channel] = (self.unreliable_seq[channel] + 1) & _U16
        return [build.send_unreliable(channel, self.reliable_seq[channel], self.unreliable_seq[channel], data)]

    def next_control_seq(self) -> int:
        """The reliable seq of the next peer-level command (CONNECT is 1, then PING, DISCONNECT, ...)."""
        self.control_seq = (self.control_seq + 1) & _U16
        return self.control_seq
