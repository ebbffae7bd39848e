"""What the Godot 4 engine printed while running tools/captures/godot4_mp (see main.gd's header).

``parse_log(stdout_lines)`` gives the recorded packets (wire.gd's PKT lines) and everything the
receiving and sending sides printed, grouped by the packet being processed, with the ARG/PROP lines
that follow an event attached to it.  Value fields (``ARG``/``PROP``) are report.gd's format,
read by make_godot4_captures.parse_fields.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from common import CaptureError
from make_godot4_captures import parse_fields, unhex

from godot_dissect.spec.multiplayer import TRANSFER_MODES

# events printed by the receiving side while it processed a packet: <kind> <seq> <uid> ...
SEQ_EVENTS = {"GOT", "RAW_GOT", "AUTH_GOT", "AUTHENTICATING", "PEER", "CONNECTED_TO_SERVER", "SERVER_DISCONNECTED",
              "SPAWN_FN", "SPAWNED", "DESPAWNED", "SYNCED", "DELTA"}
# how many ARG / PROP lines follow an event, from its own fields
_VALUES_AFTER = {"GOT": ("ARG", 6), "CALL": ("ARG", 5), "SPAWNED": ("PROP", 6), "SYNCED": ("PROP", 4),
                 "DELTA": ("PROP", 4)}


@dataclass
class Packet:
    seq: int
    src: int
    dst: int
    channel: int
    mode: int
    cause: int  # seq of the packet the sender was processing when it sent this one, -1: the scenario
    step: str
    data: bytes
    origin: int  # index in Log.origins of the CALL/RAW_SENT/AUTH_SENT line before it (-1: none)

    @property
    def transfer_mode(self) -> str:
        return TRANSFER_MODES[self.mode]


@dataclass
class Event:
    kind: str
    uid: int  # the peer that printed it
    f: list[str]  # the fields after <kind> (and after <seq> for SEQ_EVENTS)
    values: list[dict[str, Any]] = field(default_factory=list)  # ARG: parse_fields(); PROP: + "path"


@dataclass
class RpcTable:
    path: str
    md5: str
    methods: dict[int, str]  # method id -> name
    config: dict[str, dict[str, int]]


@dataclass
class Log:
    packets: list[Packet] = field(default_factory=list)
    by_seq: dict[int, list[Event]] = field(default_factory=lambda: defaultdict(list))
    unprompted: list[Event] = field(default_factory=list)  # events outside packet processing (seq -1)
    origins: list[Event] = field(default_factory=list)  # CALL / RAW_SENT / AUTH_SENT, in print order
    rpc_tables: dict[str, RpcTable] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)
    info: list[str] = field(default_factory=list)
    sink: dict[str, int] = field(default_factory=dict)
    done: int | None = None

    def events(self, seq: int, kind: str | None = None) -> list[Event]:
        return [e for e in self.by_seq.get(seq, []) if kind is None or e.kind == kind]

    @property
    def engine(self) -> str:
        for s in self.info:
            if s.startswith("engine "):
                return s[len("engine "):]
        return "?"


def cap_fields(stdout: list[str]) -> list[list[str]]:
    return [ln.rstrip("\r").split("\t")[1:] for ln in stdout if ln.startswith("@@CAP\t")]


def parse_log(stdout: list[str]) -> Log:
    log = Log()
    last_origin: dict[int, int] = {}  # uid -> index in log.origins
    want: tuple[Event, str, int] | None = None  # the event still collecting ARG/PROP lines
    table: RpcTable | None = None
    table_left = 0
    for f in cap_fields(stdout):
        kind = f[0]
        if kind in ("ARG", "PROP"):
            if want is None or want[1] != kind or len(want[0].values) >= want[2]:
                raise CaptureError(f"stray {kind} line: {f[:3]}")
            v = parse_fields(f[1:]) if kind == "ARG" else {"path": unhex(f[1]), **parse_fields(f[2:])}
            want[0].values.append(v)
            continue
        if want is not None and len(want[0].values) < want[2]:
            raise CaptureError(f"{want[0].kind} {want[0].f}: {len(want[0].values)} of {want[2]} {want[1]} lines")
        want = None
        if kind == "RPC":
            if table is None or table_left <= 0:
                raise CaptureError(f"stray RPC line {f}")
            mid, name = int(f[1]), f[2]
            table.methods[mid] = name
            table.config[name] = dict(zip(("rpc_mode", "transfer_mode", "call_local", "channel"),
                                          map(int, f[3:7]), strict=True))
            table_left -= 1
            continue
        if kind == "RPCS":
            table = RpcTable(f[1], f[2], {}, {})
            table_left = int(f[3])
            log.rpc_tables[table.path] = table
        elif kind == "PKT":
            seq, src, dst, ch, mode, cause = map(int, f[1:7])
            if seq != len(log.packets):
                raise CaptureError(f"packet seq {seq} out of order")
            log.packets.append(Packet(seq, src, dst, ch, mode, cause, unhex(f[7]), bytes.fromhex(f[8]),
                                      last_origin.get(src, -1)))
        elif kind in SEQ_EVENTS:
            ev = Event(kind, int(f[2]), f[3:])
            seq = int(f[1])
            (log.by_seq[seq] if seq >= 0 else log.unprompted).append(ev)
            if kind == "SPAWN_FN":
                want = (ev, "ARG", 1)
            elif kind in _VALUES_AFTER:
                vk, at = _VALUES_AFTER[kind]
                want = (ev, vk, int(f[at]))
        elif kind in ("CALL", "RAW_SENT", "AUTH_SENT"):
            ev = Event(kind, int(f[1]), f[2:])
            log.origins.append(ev)
            last_origin[ev.uid] = len(log.origins) - 1
            if kind == "CALL":
                want = (ev, "ARG", int(f[5]))
        elif kind == "STEP":
            log.steps.append(unhex(f[2]))
        elif kind == "INFO":
            log.info.append(unhex(f[1]))
        elif kind == "SINK":
            log.sink = dict(zip(("peer", "packets", "bytes", "last_cache_id"), map(int, f[1:5]), strict=True))
        elif kind == "DONE":
            log.done = int(f[1])
        elif kind == "FATAL":
            raise CaptureError("the engine script failed: " + unhex(f[1]))
        else:
            raise CaptureError(f"unknown line {kind}")
        if want is not None and want[2] == 0:
            want = None
    if want is not None and len(want[0].values) < want[2]:
        raise CaptureError(f"the log ends inside {want[0].kind}")
    if log.done is None:
        raise CaptureError("no DONE line: the scenario did not finish")
    if log.done != len(log.packets):
        raise CaptureError(f"DONE says {log.done} packets, {len(log.packets)} PKT lines")
    return log
