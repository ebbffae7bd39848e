"""The ``enet`` table: ENet reliability per direction and channel.

The ENet conversations are the UDP conversations the reader read as ENet (known from its records:
an ENet control record or a multiplayer record on UDP). Their datagrams come from the frame tap and
are parsed again here with ``godot_dissect.enet.parse_datagram`` (the reader's ENet stage keeps no
per-command counts; re-parsing keeps this table independent of it). Datagrams of a UDP conversation
seen before the reader's verdict are held (at most ``ENET_HELD_DATAGRAMS``).

One row per (src, dst, channel); channel 255 (``control``) holds the commands ENet sends outside
the channels (CONNECT, PING, DISCONNECT...):

- ``datagrams``: datagrams whose commands include one on this channel.
- ``reliable``: commands with the ACKNOWLEDGE flag; ``retransmissions``: reliable commands whose
  (channel, reliable sequence number) this direction already sent (within the last
  ``ENET_RELIABLE_WINDOW`` numbers).
- ``fragments``: SEND_FRAGMENT / SEND_UNRELIABLE_FRAGMENT commands; ``reassembled``: packets the
  reader put together from more than one fragment (its records' ``fields.fragments``).
- ``unreliable``: SEND_UNRELIABLE; ``unsequenced``: SEND_UNSEQUENCED; ``acks``: ACKNOWLEDGE
  commands this direction sent for the channel; ``disconnects``: DISCONNECT commands.
- ``rtt_min_ms``/``rtt_median_ms``/``rtt_max_ms``: for each ACKNOWLEDGE coming back, the capture time
  of the ACK minus the capture time of the first datagram of this direction whose header sent-time
  the ACK echoes (``received_sent_time``): the round trip as seen at the capture point, attributed
  to the direction and channel of the acknowledged command.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from typing import Any

from ..enet import parse_datagram
from ..records import MULTIPLAYER_KINDS, Record
from ..spec.stats import ENET_HELD_DATAGRAMS, ENET_RELIABLE_WINDOW, ENET_SENT_TIMES, MAX_RTT_SAMPLES
from .rows import OTHER, Rows
from .traffic import _ep

ENET_COLUMNS = (("src", None), ("dst", None), ("channel", None), ("datagrams", None), ("reliable", None),
                ("retransmissions", None), ("fragments", None), ("reassembled", None), ("unreliable", None),
                ("unsequenced", None), ("acks", None), ("disconnects", None), ("rtt_min_ms", "ms"),
                ("rtt_median_ms", "ms"), ("rtt_max_ms", "ms"), ("rtt_samples", None))
CONTROL_CHANNEL = 0xFF
# row slots
_DG, _REL, _RETX, _FRAG, _REASM, _UNREL, _UNSEQ, _ACK, _DISC, _RTT, _NRTT = range(11)


def _row() -> list[Any]:
    return [0, 0, 0, 0, 0, 0, 0, 0, 0, [], 0]


class EnetTable:
    columns = ENET_COLUMNS

    def __init__(self, compression: str | None = None) -> None:
        self.compression = compression
        self.state: dict[tuple, Any] = {}  # conversation -> "enet" | "other" | [held segments]
        self.rows = Rows(_row, (OTHER, OTHER, None))
        self.seen: dict[tuple, OrderedDict] = {}  # (direction, channel) -> recent reliable seqs
        self.sent: dict[tuple, OrderedDict] = {}  # direction -> sent_time -> capture time
        self.rng = random.Random(0)

    @staticmethod
    def _conv(proto: str, a: tuple, b: tuple) -> tuple:
        return (proto, *sorted((a, b)))

    def frame(self, seg: Any) -> None:
        if seg.proto != "udp" or not seg.payload:
            return
        conv = self._conv("udp", (seg.src, seg.sport), (seg.dst, seg.dport))
        st = self.state.get(conv)
        if st == "enet":
            self._datagram(seg)
        elif st is None:
            self.state[conv] = [seg]
        elif isinstance(st, list) and len(st) < ENET_HELD_DATAGRAMS:
            st.append(seg)

    def record(self, rec: Record) -> None:
        if rec.transport != "udp":
            return
        conv = self._conv("udp", (rec.src, rec.sport), (rec.dst, rec.dport))
        st = self.state.get(conv)
        if isinstance(st, list):  # the reader's verdict on a conversation whose datagrams are held
            enet = rec.kind in MULTIPLAYER_KINDS or (rec.kind == "error" and rec.command is not None)
            held, st = st, "enet" if enet else "other"
            self.state[conv] = st
            if enet:
                for seg in held:
                    self._datagram(seg)
        if st == "enet" and rec.fields and rec.fields.get("fragments", 1) > 1:
            self._reassembled(rec)

    def _reassembled(self, rec: Record) -> None:
        self.rows.get((_ep(rec.src, rec.sport), _ep(rec.dst, rec.dport), rec.channel))[_REASM] += 1

    def _datagram(self, seg: Any) -> None:
        dg = parse_datagram(seg.payload, self.compression)
        d = (seg.src, seg.sport, seg.dst, seg.dport)
        src, dst = _ep(seg.src, seg.sport), _ep(seg.dst, seg.dport)
        if dg.sent_time is not None:
            times = self.sent.setdefault(d, OrderedDict())
            if dg.sent_time not in times:
                times[dg.sent_time] = seg.time
                if len(times) > ENET_SENT_TIMES:
                    times.popitem(last=False)
        touched = set()
        for cmd in dg.commands:
            ch = cmd.channel
            row = self.rows.get((src, dst, ch))
            if ch not in touched:
                touched.add(ch)
                row[_DG] += 1
            name = cmd.name
            if cmd.ack_requested:
                row[_REL] += 1
                seen = self.seen.setdefault((d, ch), OrderedDict())
                if cmd.reliable_seq in seen:
                    row[_RETX] += 1
                else:
                    seen[cmd.reliable_seq] = None
                    if len(seen) > ENET_RELIABLE_WINDOW:
                        seen.popitem(last=False)
            if name == "ACKNOWLEDGE":
                row[_ACK] += 1
                echoed = cmd.fields.get("received_sent_time")
                back = (seg.dst, seg.dport, seg.src, seg.sport)
                t = self.sent.get(back, {}).get(echoed)
                if t is not None:
                    self._rtt(self.rows.get((dst, src, ch)), (seg.time - t) * 1000.0)
            elif name in ("SEND_FRAGMENT", "SEND_UNRELIABLE_FRAGMENT"):
                row[_FRAG] += 1
            elif name == "SEND_UNRELIABLE":
                row[_UNREL] += 1
            elif name == "SEND_UNSEQUENCED":
                row[_UNSEQ] += 1
            elif name == "DISCONNECT":
                row[_DISC] += 1

    def _rtt(self, row: list[Any], ms: float) -> None:
        row[_NRTT] += 1
        samples = row[_RTT]
        if len(samples) < MAX_RTT_SAMPLES:
            samples.append(ms)
        else:  # reservoir sampling: every sample equally likely to be kept
            i = self.rng.randrange(row[_NRTT])
            if i < MAX_RTT_SAMPLES:
                samples[i] = ms

    def records(self) -> list[tuple]:
        out = []
        for (src, dst, ch), r in self.rows.items():
            s = sorted(r[_RTT])
            rtt = (round(s[0], 3), round(s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2,
                                         3), round(s[-1], 3)) if s else (None, None, None)
            channel = "control" if ch == CONTROL_CHANNEL else ch
            out.append((src, dst, channel, *r[:_RTT], *rtt, r[_NRTT]))
        return out
