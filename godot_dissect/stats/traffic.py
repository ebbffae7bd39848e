"""The ``bandwidth`` and ``conversations`` tables, from the reader's frame tap and the records.

A direction is (transport, source ip:port, destination ip:port); a conversation is both directions
of one UDP/TCP 5-tuple. Frame bytes are each frame's length on the wire (``Segment.frame_len``, the
pcap original length: link, IP, UDP/TCP headers and payload), so per direction they add up to what
``tshark -q -z conv,udp`` / ``conv,tcp`` prints for the same conversation.

``bandwidth`` — one row per direction of every conversation that carried Godot messages (with
``by``: per direction and channel / node / method):

- ``frames``, ``wire_bytes``: every frame of the direction, Godot or not (ENet ACK/PING, TCP
  handshake and ACKs, HTTP upgrade included). With ``by``, ``wire_bytes`` is the records' share
  (``Record.wire_bytes``), ``frames`` is empty, and a row ``(no message)`` holds the frame bytes no
  message accounts for (the direction's frame bytes minus its records' shares; no rates).
- the ``by`` column: ``channel`` = ``Record.channel`` (ENet channel; empty over TCP); ``node`` =
  ``Record.node``, else the multiplayer kind (``sys``, ``peer``...), else empty; ``method`` = the
  rpc/rset name (``#ID`` for an unnamed Godot 4 id), else the debugger message, else the kind.
- ``messages``, ``app_bytes``: records (ENet control records excluded) and their ``app_bytes``.
- ``app_min_Bps``/``app_mean_Bps``/``app_max_Bps`` and ``wire_*``: bytes per second over windows of
  ``interval`` seconds aligned on the capture's first frame (the editor profiler's Up/Down, for
  both layers): min and max over every window from the row's first active one to its last (idle
  windows between count as 0), mean = bytes / (windows x interval).
- ``src_peer``/``dst_peer``: the Godot peer id at that endpoint when the multiplayer layer said it.

``conversations`` — like ``tshark -z conv``: ``a`` is the source of the conversation's first frame;
frames and bytes each way and in total, ``start`` (capture time), ``duration``; ``godot``: what the
reader found in it (multiplayer, variant, debugger, text) and the ``dialect``; ``messages``,
``errors``.
"""

from __future__ import annotations

from typing import Any

from ..records import MULTIPLAYER_KINDS, Record
from ..spec.stats import MAX_INTERVAL, MAX_ROWS, MAX_SERIES_WINDOWS, MIN_INTERVAL
from .calls import method_name
from .rows import OTHER, Rows, Windows

NO_MESSAGE = "(no message)"

BANDWIDTH_COLUMNS = (("src", None), ("src_peer", None), ("dst", None), ("dst_peer", None), ("transport", None),
                     ("frames", None), ("wire_bytes", "bytes"), ("messages", None), ("app_bytes", "bytes"),
                     ("app_min_Bps", "Bps"), ("app_mean_Bps", "Bps"), ("app_max_Bps", "Bps"),
                     ("wire_min_Bps", "Bps"), ("wire_mean_Bps", "Bps"), ("wire_max_Bps", "Bps"))
CONVERSATION_COLUMNS = (("transport", None), ("a", None), ("b", None), ("godot", None), ("dialect", None),
                        ("frames_a_to_b", None), ("bytes_a_to_b", "bytes"), ("frames_b_to_a", None),
                        ("bytes_b_to_a", "bytes"), ("frames", None), ("bytes", "bytes"), ("messages", None),
                        ("errors", None), ("start", "time"), ("duration", "s"))


def _ep(ip: str, port: int) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


class _Direction:
    __slots__ = ("frames", "bytes", "first", "last", "windows")

    def __init__(self, t: float) -> None:
        self.frames = 0
        self.bytes = 0
        self.first = self.last = t
        self.windows = Windows()


class _Found:
    """What the records said about one conversation."""

    __slots__ = ("godot", "dialect", "messages", "errors")

    def __init__(self) -> None:
        self.godot = ""
        self.dialect = ""
        self.messages = 0
        self.errors = 0


class _Hop:
    """Cached per direction of the records: its key, conversation, endpoints, bandwidth row."""

    __slots__ = ("dkey", "found", "src", "dst", "row")

    def __init__(self, dkey: tuple, found: _Found, src: str, dst: str, row: Any) -> None:
        self.dkey, self.found, self.src, self.dst, self.row = dkey, found, src, dst, row


class _Series:
    """Wire bytes per window for the plot: per direction and label, plus every frame per direction.
    Past MAX_SERIES_WINDOWS windows from the earliest to the latest (frames before the first one in
    time have negative windows), pairs of windows merge (the window width doubles)."""

    def __init__(self) -> None:
        self.scale = 1
        self.lo: int | None = None  # the earliest and latest window seen, at scale 1
        self.hi = 0
        self.labelled: dict[tuple[Any, str], dict[int, float]] = {}
        self.frames: dict[Any, dict[int, float]] = {}

    def add(self, table: dict, key: Any, window: int, n: float) -> None:
        if self.lo is None:
            self.lo = self.hi = window
        elif window < self.lo:
            self.lo = window
        elif window > self.hi:
            self.hi = window
        while self.hi // self.scale - self.lo // self.scale >= MAX_SERIES_WINDOWS:
            self._coarsen()
        w = window // self.scale
        d = table.get(key)
        if d is None:
            d = table[key] = {}
        d[w] = d.get(w, 0.0) + n

    def _coarsen(self) -> None:
        self.scale *= 2
        for table in (self.labelled, self.frames):
            for key, d in table.items():
                merged: dict[int, float] = {}
                for w, n in d.items():
                    merged[w // 2] = merged.get(w // 2, 0.0) + n
                table[key] = merged


def check_interval(interval: float) -> None:
    """ValueError unless ``MIN_INTERVAL <= interval <= MAX_INTERVAL`` seconds (NaN and inf too)."""
    if not MIN_INTERVAL <= interval <= MAX_INTERVAL:
        raise ValueError(f"the interval must be between {MIN_INTERVAL:g} and {MAX_INTERVAL:g} seconds, not {interval}")


class Traffic:
    """Frame tap + records -> bandwidth and conversations (and the plot's series)."""

    def __init__(self, interval: float = 1.0, by: str | None = None, series: bool = False,
                 max_rows: int = MAX_ROWS) -> None:
        self.max_rows = max_rows
        check_interval(interval)
        self.interval = interval
        self.by = by
        self.t0: float | None = None
        self.directions: dict[tuple, _Direction] = {}
        self.folded = 0  # frames of directions beyond max_rows
        self.first_src: dict[tuple, tuple] = {}  # conversation -> direction key of its first frame
        self.found: dict[tuple, _Found] = {}
        # per bandwidth row: messages, app bytes, wire bytes (records), app windows, wire windows (records)
        # max_rows directions, and room for the "(other)" direction of each transport (udp, tcp) they fold into
        self.rows = Rows(lambda: [0, 0, 0.0, Windows(), Windows()], ((OTHER, OTHER, 0, OTHER, 0), OTHER),
                         max_rows + 2)
        self.peers: dict[str, int] = {}  # endpoint -> Godot peer id
        self.hops: dict[tuple, _Hop] = {}
        self.series = _Series() if series else None

    # -- frame tap -------------------------------------------------------------------------------
    def frame(self, seg: Any) -> None:
        t = seg.time
        if self.t0 is None:
            self.t0 = t
        proto = seg.proto
        key = (proto, seg.src, seg.sport, seg.dst, seg.dport)
        d = self.directions.get(key)
        if d is None:
            if len(self.directions) >= self.max_rows:  # a flood of flows: the rest share one "(other)" row
                self.folded += 1
                key = (proto, OTHER, 0, OTHER, 0)
                d = self.directions.get(key)
            if d is None:
                d = self.directions[key] = _Direction(t)
                conv = (proto, *sorted(((key[1], key[2]), (key[3], key[4]))))
                self.first_src.setdefault(conv, key)
        n = seg.frame_len
        d.frames += 1
        d.bytes += n
        # capture order is not always time order: the span is the earliest to the latest time, as tshark's
        if t > d.last:
            d.last = t
        elif t < d.first:
            d.first = t
        w = int((t - self.t0) // self.interval)  # floor: before t0 is window -1, -2 ...
        d.windows.add(w, n)
        if self.series is not None:
            self.series.add(self.series.frames, key, w, n)

    # -- records ---------------------------------------------------------------------------------
    def _hop(self, rec: Record) -> _Hop:
        proto = "udp" if rec.transport == "udp" else "tcp"
        a, b = (rec.src, rec.sport), (rec.dst, rec.dport)
        conv = (proto, *sorted((a, b)))
        f = self.found.get(conv)
        if f is None:
            if len(self.found) >= self.max_rows:  # a flood of conversations: the rest share one
                conv = (proto, (OTHER, 0), (OTHER, 0))
                f = self.found.get(conv)
            if f is None:
                f = self.found[conv] = _Found()
        dkey = (proto, rec.src, rec.sport, rec.dst, rec.dport)
        if dkey not in self.directions and len(self.directions) >= self.max_rows:
            dkey = (proto, OTHER, 0, OTHER, 0)  # its frames were folded: its messages go in the same row
        hop = _Hop(dkey, f, _ep(*a), _ep(*b), self.rows.get((dkey, None)) if self.by is None else None)
        if len(self.hops) < self.max_rows:
            self.hops[(rec.transport, *dkey[1:])] = hop
        return hop

    def record(self, rec: Record) -> None:
        hop = self.hops.get((rec.transport, rec.src, rec.sport, rec.dst, rec.dport)) or self._hop(rec)
        f = hop.found
        kind = rec.kind
        if kind == "error":
            f.errors += 1
        elif not f.godot:
            f.godot = "multiplayer" if kind in MULTIPLAYER_KINDS else kind
        if not f.dialect and rec.dialect:
            f.dialect = rec.dialect
        f.messages += 1
        if rec.relayed is False:  # a direct hop: its ends are the sender and the receiver
            peers = self.peers
            if rec.sender is not None and (hop.src in peers or len(peers) < self.max_rows):
                peers[hop.src] = rec.sender
            if rec.receiver is not None and (hop.dst in peers or len(peers) < self.max_rows):
                peers[hop.dst] = rec.receiver
        by = self.by
        if by is None:
            row = hop.row
        else:
            if by == "channel":
                label = rec.channel
            elif by == "node":
                label = rec.node or (kind if kind in MULTIPLAYER_KINDS else "")
            else:  # method
                label = method_name(rec) if kind in ("rpc", "rset") else (rec.message or kind)
            row = self.rows.get((hop.dkey, label))
        if self.t0 is None:
            self.t0 = rec.time
        w = int((rec.time - self.t0) // self.interval)
        wire = rec.wire_bytes
        if kind != "enet":
            app = rec.app_bytes
            if app is None:
                app = len(rec.raw)
            row[0] += 1
            row[1] += app
            row[3].add(w, app)
        row[2] += wire
        row[4].add(w, wire)
        if self.series is not None:
            stack = rec.node if by != "method" else (method_name(rec) if kind in ("rpc", "rset") else None)
            stack = stack or (rec.message if kind == "debugger" else kind)
            key = (hop.dkey, stack)
            if key not in self.series.labelled and len(self.series.labelled) >= self.max_rows:
                key = (hop.dkey, OTHER)  # a flood of distinct nodes or methods: one stack for the rest
            self.series.add(self.series.labelled, key, w, wire)

    # -- tables ----------------------------------------------------------------------------------
    def bandwidth_columns(self) -> tuple:
        if self.by is None:
            return BANDWIDTH_COLUMNS
        return (*BANDWIDTH_COLUMNS[:5], (self.by, None), *BANDWIDTH_COLUMNS[5:])

    def bandwidth(self) -> list[tuple]:
        iv = self.interval
        out = []
        record_wire: dict[tuple, float] = {}
        for (dkey, label), (msgs, app, wire, app_w, wire_w) in self.rows.items():
            proto, src, sport, dst, dport = dkey
            s, d = _ep(src, sport), _ep(dst, dport)
            head = (s, self.peers.get(s), d, self.peers.get(d), proto)
            if self.by is None:
                direction = self.directions.get(dkey)
                frames = direction.frames if direction else 0
                wire_total = direction.bytes if direction else wire
                wire_rates = direction.windows.rates(iv) if direction else wire_w.rates(iv)
                out.append((*head, frames, wire_total, msgs, app, *app_w.rates(iv), *wire_rates))
            else:
                record_wire[dkey] = record_wire.get(dkey, 0.0) + wire
                out.append((*head, label, None, wire, msgs, app, *app_w.rates(iv), *wire_w.rates(iv)))
        if self.by is not None:  # frame bytes no message accounts for
            for dkey, wire in record_wire.items():
                direction = self.directions.get(dkey)
                if direction is None:
                    continue
                proto, src, sport, dst, dport = dkey
                s, d = _ep(src, sport), _ep(dst, dport)
                rest = direction.bytes - wire
                out.append((s, self.peers.get(s), d, self.peers.get(d), proto, NO_MESSAGE, None,
                            round(rest, 3), 0, 0, None, None, None, None, None, None))
        if self.by is None:  # directions of Godot conversations that carried no message themselves
            have = {r[0:1] + r[2:3] + r[4:5] for r in out}
            for dkey, direction in self.directions.items():
                proto, src, sport, dst, dport = dkey
                conv = (proto, *sorted(((src, sport), (dst, dport))))
                s, d = _ep(src, sport), _ep(dst, dport)
                if conv in self.found and (s, d, proto) not in have:
                    out.append((s, self.peers.get(s), d, self.peers.get(d), proto, direction.frames, direction.bytes,
                                0, 0, 0.0, 0.0, 0.0, *direction.windows.rates(iv)))
        return out

    def conversations(self) -> list[tuple]:
        out = []
        convs: dict[tuple, list[_Direction | None]] = {}
        for dkey, d in self.directions.items():
            proto, src, sport, dst, dport = dkey
            conv = (proto, *sorted(((src, sport), (dst, dport))))
            pair = convs.setdefault(conv, [None, None])
            pair[0 if self.first_src[conv] == dkey else 1] = d
        for conv, (ab, ba) in convs.items():
            first = self.first_src[conv]
            proto, src, sport, dst, dport = first
            f = self.found.get(conv) or _Found()
            fa, ba_ = (ab.frames if ab else 0), (ba.frames if ba else 0)
            bab, bba = (ab.bytes if ab else 0), (ba.bytes if ba else 0)
            start = min(x.first for x in (ab, ba) if x is not None)
            end = max(x.last for x in (ab, ba) if x is not None)
            out.append((proto, _ep(src, sport), _ep(dst, dport), f.godot, f.dialect, fa, bab, ba_, bba, fa + ba_,
                        bab + bba, f.messages, f.errors, start, round(end - start, 6)))
        return out
