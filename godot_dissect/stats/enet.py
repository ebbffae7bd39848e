"""The ``enet`` table: ENet reliability per direction and channel.

The ENet conversations are the UDP conversations the reader read as ENet (known from its records:
an ENet control record or a multiplayer record on UDP). Their datagrams come from the frame tap and
are parsed again here with ``godot_dissect.enet.parse_datagram`` (the reader's ENet stage keeps no
per-command counts; re-parsing keeps this table independent of it). Datagrams of a UDP conversation
seen before the reader's verdict are held (at most ``ENET_HELD_DATAGRAMS`` per conversation and
``ENET_HELD_BYTES`` over all, for the ``ENET_CONVERSATIONS`` most recently active conversations:
non-Godot UDP never gets a verdict; what these limits drop is counted in the ``expert`` table).

One row per (src, dst, channel); channel 255 (``control``) holds the commands ENet sends outside
the channels (CONNECT, PING, DISCONNECT...):

- ``datagrams``: datagrams whose commands include one on this channel.
- ``reliable``: commands with the ACKNOWLEDGE flag; ``retransmissions``: reliable commands whose
  (channel, reliable sequence number) this direction already sent (within the last
  ``ENET_RELIABLE_WINDOW`` reliable commands of every direction).
- ``fragments``: SEND_FRAGMENT / SEND_UNRELIABLE_FRAGMENT commands; ``reassembled``: packets the
  reader put together from more than one fragment (its records' ``fields.fragments``).
- ``unreliable``: SEND_UNRELIABLE; ``unsequenced``: SEND_UNSEQUENCED; ``acks``: ACKNOWLEDGE
  commands this direction sent for the channel; ``disconnects``: DISCONNECT commands.
- ``rtt_min_ms``/``rtt_median_ms``/``rtt_max_ms``: for each ACKNOWLEDGE coming back, the capture time
  of the ACK minus the capture time of the first datagram of this direction whose header sent-time
  the ACK echoes (``received_sent_time``): the round trip as seen at the capture point, attributed
  to the direction and channel of the acknowledged command. The median is over at most
  ``MAX_RTT_SAMPLES`` samples per row (a reservoir sample beyond), and over ``ENET_RTT_TOTAL``
  samples of every row together (beyond, each row keeps the ``ENET_RTT_FLOOR`` it has).
"""

from __future__ import annotations

import random
from array import array
from collections import OrderedDict
from typing import Any

from ..enet import parse_datagram
from ..records import MULTIPLAYER_KINDS, Record
from ..spec.enet import COMMANDS_BY_NAME, CONTROL_CHANNEL, FLAG_ACKNOWLEDGE
from ..spec.stats import (
    ENET_CONVERSATIONS,
    ENET_HELD_BYTES,
    ENET_HELD_DATAGRAMS,
    ENET_RELIABLE_WINDOW,
    ENET_RTT_FLOOR,
    ENET_RTT_TOTAL,
    ENET_SENT_TIME_LAP,
    ENET_SENT_TIMES,
    MAX_ROWS,
    MAX_RTT_SAMPLES,
)
from .rows import OTHER, Rows
from .traffic import _ep

ENET_COLUMNS = (("src", None), ("dst", None), ("channel", None), ("datagrams", None), ("reliable", None),
                ("retransmissions", None), ("fragments", None), ("reassembled", None), ("unreliable", None),
                ("unsequenced", None), ("acks", None), ("disconnects", None), ("rtt_min_ms", "ms"),
                ("rtt_median_ms", "ms"), ("rtt_max_ms", "ms"), ("rtt_samples", None))
# row slots
_DG, _REL, _RETX, _FRAG, _REASM, _UNREL, _UNSEQ, _ACK, _DISC, _RTT, _NRTT = range(11)


_ACK_MASK = FLAG_ACKNOWLEDGE.mask
#: command number -> the row slot it counts in
_SLOT_OF_COMMAND = {COMMANDS_BY_NAME[name].number: slot for name, slot in (
    ("ACKNOWLEDGE", _ACK), ("SEND_FRAGMENT", _FRAG), ("SEND_UNRELIABLE_FRAGMENT", _FRAG),
    ("SEND_UNRELIABLE", _UNREL), ("SEND_UNSEQUENCED", _UNSEQ), ("DISCONNECT", _DISC))}


def _row() -> list[Any]:
    return [0, 0, 0, 0, 0, 0, 0, 0, 0, array("d"), 0]


class EnetTable:
    columns = ENET_COLUMNS

    def __init__(self, compression: str | None = None, max_rows: int = MAX_ROWS) -> None:
        self.max_rows = max_rows
        self.compression = compression
        #: conversation -> [verdict, held segments], least recently active first (ENET_CONVERSATIONS)
        self.state: OrderedDict[tuple, list[Any]] = OrderedDict()
        #: the undecided conversations holding datagrams, oldest first (ENET_HELD_BYTES over them all)
        self.undecided: OrderedDict[tuple, list[Any]] = OrderedDict()
        self.held = 0  # payload bytes held
        #: datagrams of undecided conversations dropped by ENET_HELD_BYTES / ENET_CONVERSATIONS
        self.dropped = 0
        self.rows = Rows(_row, (OTHER, OTHER, None), max_rows)
        self.seen: OrderedDict[tuple, None] = OrderedDict()  # recent (direction, channel, reliable seq)
        self.sent: OrderedDict[tuple, float] = OrderedDict()  # (direction, sent_time) -> capture time
        self.rng = random.Random(0)
        self.rtt_kept = 0  # samples over every row (ENET_RTT_TOTAL)
        self.ends: dict[tuple, tuple[str, str]] = {}  # direction -> (src, dst) endpoint strings

    def _state(self, src: str, sport: int, dst: str, dport: int) -> list[Any]:
        """[verdict, held segments] shared by both directions of a UDP conversation; verdict None
        (the reader has not said yet), "enet" or "other"."""
        a, b = (src, sport), (dst, dport)
        conv = (a, b) if a <= b else (b, a)
        state = self.state
        st = state.get(conv)
        if st is not None:
            state.move_to_end(conv)
            return st
        st = state[conv] = [None, []]
        if len(state) > ENET_CONVERSATIONS:  # forget the least recently active conversation
            old, gone = state.popitem(last=False)
            if self.undecided.pop(old, None) is not None:
                self._drop(gone)
        return st

    def _drop(self, st: list[Any]) -> None:
        self.held -= sum(len(seg.payload) for seg in st[1])
        self.dropped += len(st[1])
        st[1] = []

    def frame(self, seg: Any) -> None:
        if seg.proto != "udp" or not seg.payload:
            return
        st = self._state(seg.src, seg.sport, seg.dst, seg.dport)
        verdict = st[0]
        if verdict == "enet":
            self._datagram(seg)
        elif verdict is None:
            if len(st[1]) >= ENET_HELD_DATAGRAMS:
                return
            n = len(seg.payload)
            while self.held + n > ENET_HELD_BYTES and self.undecided:  # the oldest undecided conversations' go
                self._drop(self.undecided.popitem(last=False)[1])
            if not st[1]:
                a, b = (seg.src, seg.sport), (seg.dst, seg.dport)
                self.undecided[(a, b) if a <= b else (b, a)] = st
            st[1].append(seg)
            self.held += n

    def record(self, rec: Record) -> None:
        if rec.transport != "udp":
            return
        st = self._state(rec.src, rec.sport, rec.dst, rec.dport)
        verdict = st[0]
        if verdict == "other":
            return
        if verdict is None:  # the reader's verdict on a conversation whose datagrams are held
            enet = rec.kind in MULTIPLAYER_KINDS or (rec.kind == "error" and rec.command is not None)
            held = st[1]
            st[0], st[1] = ("enet" if enet else "other"), []
            a, b = (rec.src, rec.sport), (rec.dst, rec.dport)
            if self.undecided.pop((a, b) if a <= b else (b, a), None) is not None:
                self.held -= sum(len(seg.payload) for seg in held)
            if not enet:
                return
            for seg in held:
                self._datagram(seg)
        if rec.fields and rec.fields.get("fragments", 1) > 1:
            self._reassembled(rec)

    def _reassembled(self, rec: Record) -> None:
        self.rows.get((_ep(rec.src, rec.sport), _ep(rec.dst, rec.dport), rec.channel))[_REASM] += 1

    def _datagram(self, seg: Any) -> None:
        dg = parse_datagram(seg.payload, self.compression)
        d = (seg.src, seg.sport, seg.dst, seg.dport)
        ends = self.ends.get(d)
        if ends is None:
            ends = (_ep(seg.src, seg.sport), _ep(seg.dst, seg.dport))
            if len(self.ends) < self.max_rows:
                self.ends[d] = ends
        src, dst = ends
        if dg.sent_time is not None:
            sent = self.sent
            key = (d, dg.sent_time)
            prev = sent.get(key)
            if prev is None or seg.time - prev > ENET_SENT_TIME_LAP / 2:  # new, or a previous lap's
                if prev is not None:
                    del sent[key]
                sent[key] = seg.time
                if len(sent) > ENET_SENT_TIMES:
                    sent.popitem(last=False)
        touched = set()
        rows = self.rows
        seen = self.seen
        for cmd in dg.commands:
            ch = cmd.channel
            row = rows.get((src, dst, ch))
            if ch not in touched:
                touched.add(ch)
                row[_DG] += 1
            number = cmd.number
            if cmd.flags & _ACK_MASK:
                row[_REL] += 1
                key = (d, ch, cmd.reliable_seq)
                if key in seen:
                    row[_RETX] += 1
                else:
                    seen[key] = None
                    if len(seen) > ENET_RELIABLE_WINDOW:
                        seen.popitem(last=False)
            slot = _SLOT_OF_COMMAND.get(number)
            if slot is None:
                continue
            row[slot] += 1
            if slot == _ACK:
                echoed = cmd.fields.get("received_sent_time")
                t = self.sent.get(((seg.dst, seg.dport, seg.src, seg.sport), echoed))
                if t is not None and seg.time >= t:  # an ACK captured before its send (a clock stepped back,
                    # merged captures) says nothing of the round trip: a negative one is no sample
                    self._rtt(rows.get((dst, src, ch)), (seg.time - t) * 1000.0)

    def _rtt(self, row: list[Any], ms: float) -> None:
        row[_NRTT] += 1
        samples = row[_RTT]
        n = len(samples)
        if n < MAX_RTT_SAMPLES and (n < ENET_RTT_FLOOR or self.rtt_kept < ENET_RTT_TOTAL):
            samples.append(ms)
            self.rtt_kept += 1
        else:  # reservoir sampling over the samples this row could keep
            i = self.rng.randrange(row[_NRTT])
            if i < n:
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
