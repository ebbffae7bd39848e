"""``top``: a live network profiler from the wire, refreshed every second (the editor's Network
Profiler for any build of the game).

    godot-dissect top -i lo -f 'udp port 7000'      # live, through dumpcap
    godot-dissect top game.pcapng                   # a capture file, played at full speed

A reader thread feeds every frame (the reader's ``on_frame`` tap) and record into the statistics of
``godot_dissect.stats.Profile`` (busiest RPC methods, nodes and synchronizers: totals since the start)
and into ``Rates`` (each endpoint's Up/Down bytes per second over the last second, application and
wire). The screen is a rich ``Live`` view; Ctrl-C ends it (and the capture) cleanly.
"""

from __future__ import annotations

import argparse
import collections
import threading
import time
from collections.abc import Callable
from typing import Any

from ..pcap.reader import read_pcap
from ..records import Record
from ..spec.cli import MAX_REFRESH, MIN_REFRESH
from ..spec.stats import MAX_ROWS
from ..stats import Profile
from ..stats.render import human_bytes
from .live import LiveError, start_live
from .options import add_live_options, add_read_options, live_args_problem, read_options, usage_error

#: the window of the Up/Down rates, in seconds, and how many bins it is kept in
RATE_WINDOW = 1.0
_BINS = 10
#: rows per table on the screen, and errors remembered
TOP_ROWS = 8
RECENT_ERRORS = 6


def register(sub: argparse._SubParsersAction) -> None:
    t = sub.add_parser("top", help="live network profiler: peers' Up/Down B/s, busiest methods, recent errors",
                       description="A full-screen view refreshed every second: every peer's Up/Down bytes per "
                                   "second (application and wire), the busiest nodes, RPC/rset methods and "
                                   "synchronizers, and the most recent errors. Live with -i IFACE (dumpcap), or "
                                   "from a capture file. Ctrl-C ends it.")
    t.add_argument("capture", nargs="?", help="a capture file (or - for standard input) instead of -i")
    add_live_options(t)
    add_read_options(t)
    t.add_argument("--refresh", type=float, default=1.0, metavar="S", help="seconds between screens (default 1)")
    t.add_argument("--once", action="store_true",
                   help="read everything, print the screen once (no full-screen mode) and exit")
    t.set_defaults(run=run_top)


def _ep(ip: str, port: int) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


#: the row endpoints beyond ``spec.stats.MAX_ROWS`` are counted in
OTHER = "(other)"


class Rates:
    """Up/Down bytes of every endpoint over the last ``RATE_WINDOW`` seconds, in ``_BINS`` bins: wire
    bytes from the frame tap, application bytes from the records. Memory: at most ``MAX_ROWS`` endpoints
    (idle ones are forgotten first, then the rest is counted as ``(other)``) x ``_BINS`` bins."""

    def __init__(self) -> None:
        self.bins: dict[str, dict[int, list[float]]] = {}  # endpoint -> bin -> [up wire, up app, down wire, down app]
        self.totals: dict[str, list[float]] = {}
        self.godot: set[str] = set()  # endpoints that carried Godot records
        self.peer: dict[str, int] = {}  # endpoint -> Godot peer id
        self.latest = 0.0
        self._swept = -1  # the bin of the last sweep for idle endpoints

    def _add(self, ep: str, t: float, column: int, n: float) -> None:
        b = int(t * _BINS / RATE_WINDOW)
        per = self.bins.get(ep)
        if per is None:
            if len(self.bins) >= MAX_ROWS:  # a flood of endpoints: forget the idle ones (once a bin), else fold
                if b != self._swept:
                    self._swept = b
                    self._forget_idle(b)
                if len(self.bins) >= MAX_ROWS:
                    ep = OTHER
            per = self.bins.setdefault(ep, {})
        # a bin _BINS or more before the latest time's is never shown: not kept (a capture whose times go
        # backwards would otherwise add one per frame, each scanned again per new bin)
        floor = int(self.latest * _BINS / RATE_WINDOW) - _BINS
        if b > floor:
            row = per.get(b)
            if row is None:
                row = per[b] = [0.0, 0.0, 0.0, 0.0]
                for old in [k for k in per if k <= floor]:
                    del per[old]
            row[column] += n
        self.totals.setdefault(ep, [0.0, 0.0, 0.0, 0.0])[column] += n

    def _forget_idle(self, now_bin: int) -> None:
        for ep in [e for e, per in self.bins.items() if not per or max(per) <= now_bin - _BINS]:
            del self.bins[ep]
            if ep not in self.godot:
                self.totals.pop(ep, None)

    def frame(self, seg: Any) -> None:
        self.latest = max(self.latest, seg.time)
        size = seg.frame_len or len(seg.payload)
        self._add(_ep(seg.src, seg.sport), seg.time, 0, size)
        self._add(_ep(seg.dst, seg.dport), seg.time, 2, size)

    def record(self, rec: Record) -> None:
        src, dst = _ep(rec.src, rec.sport), _ep(rec.dst, rec.dport)
        for ep in (src, dst):
            if ep in self.godot or len(self.godot) < MAX_ROWS:
                self.godot.add(ep)
        if rec.kind == "enet":  # ENet control: no application bytes
            return
        self.latest = max(self.latest, rec.time)
        app = rec.app_bytes if getattr(rec, "app_bytes", None) is not None else len(rec.raw)
        self._add(src, rec.time, 1, app)
        self._add(dst, rec.time, 3, app)
        for ep, peer in ((src, getattr(rec, "sender", None)), (dst, getattr(rec, "receiver", None))):
            if isinstance(peer, int) and peer > 0 and (ep in self.peer or len(self.peer) < MAX_ROWS):
                self.peer[ep] = peer  # a flood of clients: the first MAX_ROWS endpoints keep a peer id

    def rows(self, now: float) -> list[tuple[str, int | None, float, float, float, float, float, float]]:
        """(endpoint, peer, up app, up wire, down app, down wire B/s, total up wire, total down wire)."""
        last = int(now * _BINS / RATE_WINDOW)
        out = []
        for ep in self.godot:
            sums = [0.0, 0.0, 0.0, 0.0]
            for b, row in self.bins.get(ep, {}).items():
                if last - _BINS < b <= last:
                    for i in range(4):
                        sums[i] += row[i]
            tot = self.totals.get(ep, [0.0] * 4)
            out.append((ep, self.peer.get(ep), sums[1] / RATE_WINDOW, sums[0] / RATE_WINDOW, sums[3] / RATE_WINDOW,
                        sums[2] / RATE_WINDOW, tot[0], tot[2]))
        out.sort(key=lambda r: (-(r[3] + r[5]), -(r[6] + r[7]), r[0]))
        return out


class TopState:
    """Everything the screen shows, fed by the reader thread (under ``lock``)."""

    def __init__(self, live: bool) -> None:
        self.lock = threading.Lock()
        self.profile = Profile(interval=RATE_WINDOW)
        self.rates = Rates()
        self.errors: collections.deque[Record] = collections.deque(maxlen=RECENT_ERRORS)
        self.records = 0
        self.frames = 0
        self.done = False
        self.failure: str | None = None
        self.live = live
        self.started = time.time()

    def frame(self, seg: Any) -> None:
        with self.lock:
            self.frames += 1
            self.profile.frame(seg)
            self.rates.frame(seg)

    def record(self, rec: Record) -> None:
        with self.lock:
            self.records += 1
            self.profile.record(rec)
            self.rates.record(rec)
            if rec.kind == "error":
                self.errors.append(rec)

    def now(self) -> float:
        """The end of the rate window: the wall clock live, the last packet's time from a file."""
        return time.time() if self.live and not self.done else self.rates.latest


def busiest(profile: Profile, limit: int = TOP_ROWS) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """(methods, nodes, synchronizers): rows sorted by wire bytes, largest first."""
    cols = [c for c, _ in profile.columns("rpc")]
    i = {c: k for k, c in enumerate(cols)}
    methods: dict[tuple[str, str, str], list[float]] = {}
    nodes: dict[str, list[float]] = {}
    for r in profile.rows("rpc"):
        key = (r[i["node"]] or "", r[i["kind"]], r[i["name"]] or "")
        for table, k in ((methods, key), (nodes, key[0])):
            acc = table.setdefault(k, [0, 0.0, 0.0])  # type: ignore[arg-type]
            acc[0] += r[i["count"]] or 0
            acc[1] += r[i["app_bytes"]] or 0
            acc[2] += r[i["wire_bytes"]] or 0
    m = sorted(((*k, *v) for k, v in methods.items()), key=lambda x: -x[5])[:limit]
    n = sorted(((k, *v) for k, v in nodes.items()), key=lambda x: -x[3])[:limit]
    scols = [c for c, _ in profile.columns("sync")]
    j = {c: k for k, c in enumerate(scols)}
    syncs: dict[str, list[float]] = {}
    for r in profile.rows("sync"):
        acc = syncs.setdefault(str(r[j["object"]]), [0, 0.0, 0.0])
        acc[0] += (r[j["syncs"]] or 0) + (r[j["deltas"]] or 0)
        acc[1] += r[j["app_bytes"]] or 0
        acc[2] += r[j["wire_bytes"]] or 0
    s = sorted(((k, *v) for k, v in syncs.items()), key=lambda x: -x[3])[:limit]
    return m, n, s


def render(state: TopState, source: str) -> Any:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    with state.lock:
        now = state.now()
        peers = state.rates.rows(now)
        methods, nodes, syncs = busiest(state.profile)
        errors = list(state.errors)
        records, frames = state.records, state.frames
    status = "capture ended" if state.done else ("capturing" if state.live else "reading")
    head = Text(f"godot-dissect top — {source} — {status}: {frames} frames, {records} Godot messages"
                + (f" — {state.failure}" if state.failure else "") + "   (Ctrl-C to quit)", style="bold")

    pt = Table(title="peers (per second over the last second; totals on the wire)", title_justify="left",
               expand=True)
    for c in ("endpoint", "peer", "Up app", "Up wire", "Down app", "Down wire", "total up", "total down"):
        pt.add_column(c, justify="left" if c in ("endpoint", "peer") else "right")
    for ep, peer, ua, uw, da, dw, tu, td in peers[:TOP_ROWS * 2]:
        pt.add_row(ep, "" if peer is None else str(peer), human_bytes(ua, "/s"), human_bytes(uw, "/s"),
                   human_bytes(da, "/s"), human_bytes(dw, "/s"), human_bytes(tu), human_bytes(td))

    mt = Table(title="busiest methods (RPC / rset)", title_justify="left", expand=True)
    for c in ("node", "kind", "method", "count", "app", "wire"):
        mt.add_column(c, justify="right" if c in ("count", "app", "wire") else "left")
    for node, kind, name, count, app, wire in methods:
        mt.add_row(node, kind, name, str(int(count)), human_bytes(app), human_bytes(wire))

    nt = Table(title="busiest nodes", title_justify="left", expand=True)
    for c in ("node", "calls", "app", "wire"):
        nt.add_column(c, justify="left" if c == "node" else "right")
    for node, count, app, wire in nodes:
        nt.add_row(node, str(int(count)), human_bytes(app), human_bytes(wire))

    st = Table(title="busiest synchronizers", title_justify="left", expand=True)
    for c in ("object", "syncs", "app", "wire"):
        st.add_column(c, justify="left" if c == "object" else "right")
    for obj, count, app, wire in syncs:
        st.add_row(obj, str(int(count)), human_bytes(app), human_bytes(wire))

    et = Table(title="recent errors", title_justify="left", expand=True)
    et.add_column("frame", justify="right")
    et.add_column("from → to")
    et.add_column("error")
    for rec in errors:
        et.add_row(str(rec.frame), f"{_ep(rec.src, rec.sport)} → {_ep(rec.dst, rec.dport)}", (rec.error or "")[:160])
    parts: list[Any] = [head, pt, mt, nt]
    if syncs:
        parts.append(st)
    parts.append(et)
    return Group(*parts)


def _reader(state: TopState, source: Any, options: dict[str, Any]) -> Callable[[], None]:
    def run() -> None:
        try:
            for rec in read_pcap(source, on_frame=state.frame, **options):
                state.record(rec)
        except Exception as e:  # noqa: BLE001 - shown on the screen, the view stays up
            state.failure = str(e)
        finally:
            state.done = True

    return run


def run_top(args: argparse.Namespace) -> int:
    problem = live_args_problem(args, "top")
    if problem:
        return usage_error(problem)
    if not MIN_REFRESH <= args.refresh <= MAX_REFRESH:
        return usage_error(f"--refresh {args.refresh}: between {MIN_REFRESH:g} and {MAX_REFRESH:g} seconds")
    try:
        options = read_options(args)
    except ValueError as e:
        return usage_error(str(e))
    live = None
    try:
        live = start_live(args)
        source: Any = live.stream if live is not None else args.capture
        name = args.capture if live is None else (
            f"live on {args.interface}" + (f" ({args.capture_filter})" if args.capture_filter else ""))
    except LiveError as e:
        return usage_error(str(e))
    state = TopState(live is not None)
    thread = threading.Thread(target=_reader(state, source, options), daemon=True)
    thread.start()
    try:
        if args.once:
            thread.join()
            _print_once(state, name)
        else:
            _screen(state, name, args.refresh, thread)
    except KeyboardInterrupt:
        pass
    finally:
        if live is not None:
            live.__exit__(None, None, None)
    failed = live.failure(wait=1.0) if live is not None else None
    if failed:
        return usage_error(failed)
    if state.failure and state.done:  # a capture that cannot be read (no such file, not a capture): as stats says
        return usage_error(state.failure)
    return 0


def _print_once(state: TopState, name: str) -> None:
    from rich.console import Console

    Console(width=160).print(render(state, name))


def _screen(state: TopState, name: str, refresh: float, thread: threading.Thread) -> None:
    from rich.live import Live

    with Live(render(state, name), screen=True, auto_refresh=False, redirect_stderr=False) as view:
        while True:
            time.sleep(refresh)
            view.update(render(state, name), refresh=True)
            if state.done and state.live:  # live capture ended (-a): show the last screen once more, then go
                time.sleep(refresh)
                return
