"""``profile(path, **read_pcap_options)``: every table in one streaming pass over a capture.

    from godot_dissect.stats import profile
    p = profile("game.pcapng", interval=1.0)
    p.rpc.sort_values("wire_bytes", ascending=False)     # a pandas DataFrame
    p.table("bandwidth"), p.notes

The reader calls ``Profile.frame`` for every IP packet (its ``on_frame`` tap) before it yields
that packet's records, and each record goes to ``Profile.record``. Each table keeps one
accumulator per row (``stats.rows.Rows``, at most ``spec.stats.MAX_ROWS``), so memory follows the
number of distinct rows, not the length of the capture. The row definitions are in each table's
module docstring (``calls``, ``traffic``, ``enet``, ``variants``, ``expert``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..records import Record
from ..spec.stats import MAX_ROWS
from .calls import RpcTable, SyncTable
from .enet import EnetTable
from .expert import ExpertTable
from .traffic import Traffic
from .variants import VariantTable

if TYPE_CHECKING:
    import pandas

#: table names, as ``--table`` takes them
TABLES = ("rpc", "sync", "bandwidth", "enet", "variants", "conversations", "expert")
DEFAULT_TABLES = ("rpc", "sync", "bandwidth")
BY = ("channel", "method", "node")

_EMPTY = {
    "rpc": "no multiplayer RPC or rset in this capture",
    "sync": "no Godot 4 synchronizer, spawn or despawn in this capture",
    "bandwidth": "no Godot traffic in this capture",
    "enet": "no ENet conversation in this capture",
    "variants": "no plain Variant or debugger traffic in this capture",
    "conversations": "no UDP/TCP packet in this capture",
    "expert": "nothing to report",
}
_VARIANT_KINDS = frozenset(("variant", "debugger", "text"))
_SYNC_KINDS = frozenset(("sync", "spawn", "despawn"))


class Profile:
    """The accumulators of every table; ``table(name)`` / attributes give pandas DataFrames,
    ``rows(name)`` plain tuples in ``columns(name)`` order."""

    def __init__(self, interval: float = 1.0, by: str | None = None, series: bool = False,
                 enet_compression: str | None = None, tables: tuple[str, ...] = TABLES,
                 max_rows: int = MAX_ROWS) -> None:
        if by is not None and by not in BY:
            raise ValueError(f"by must be one of {', '.join(BY)}, not {by!r}")
        for name in tables:
            _check(name)
        #: the ENet table re-parses every ENet datagram: skipped unless asked for
        self.with_enet = "enet" in tables
        self.interval = interval
        self.by = by
        self.max_rows = max_rows
        self.traffic = Traffic(interval, by, series, max_rows)
        self._rpc = RpcTable(max_rows)
        self._sync = SyncTable(max_rows)
        self._enet = EnetTable(enet_compression, max_rows)
        self._variants = VariantTable(max_rows)
        self._expert = ExpertTable(max_rows)
        self.records = 0
        self.frames = 0
        self.notes: list[str] = []

    # -- the pass ----------------------------------------------------------------------------------
    def frame(self, seg: Any) -> None:
        self.frames += 1
        self.traffic.frame(seg)
        if self.with_enet:
            self._enet.frame(seg)

    def record(self, rec: Record) -> None:
        self.records += 1
        kind = rec.kind
        self.traffic.record(rec)
        if kind in _VARIANT_KINDS:
            self._variants.add(rec)
        elif kind == "rpc" or kind == "rset":
            self._rpc.add(rec)
        elif kind in _SYNC_KINDS:
            self._sync.add(rec)
        self._expert.add(rec)
        if self.with_enet and rec.transport == "udp":
            self._enet.record(rec)

    def finish(self) -> None:
        for name, t in (("rpc", self._rpc), ("sync", self._sync), ("variants", self._variants),
                        ("enet", self._enet), ("bandwidth", self.traffic), ("expert", self._expert)):
            if t.rows.folded:
                self._expert.note("note", "limit", None, name, f"{t.rows.folded} rows of {name} beyond "
                                                               f"{t.rows.limit} folded into (other)",
                                  count=t.rows.folded)
        if self._enet.dropped:
            self._expert.note("note", "limit", None, "enet", f"{self._enet.dropped} datagrams of UDP conversations not "
                              "yet known to be ENet or not, dropped unread (ENET_HELD_BYTES, ENET_CONVERSATIONS); "
                              "uncounted if they were ENet", count=self._enet.dropped)
        if self.traffic.folded:
            self._expert.note("note", "limit", None, "conversations",
                              f"{self.traffic.folded} frames of directions beyond {self.max_rows} counted in (other)",
                              count=self.traffic.folded)

    # -- tables ------------------------------------------------------------------------------------
    def columns(self, name: str) -> tuple[tuple[str, str | None], ...]:
        """(column, unit) pairs; unit: "bytes", "Bps", "ms", "s", "time" (capture time) or None."""
        from .calls import RPC_COLUMNS, SYNC_COLUMNS
        from .enet import ENET_COLUMNS
        from .expert import EXPERT_COLUMNS
        from .traffic import CONVERSATION_COLUMNS
        from .variants import VARIANT_COLUMNS
        return {"rpc": RPC_COLUMNS, "sync": SYNC_COLUMNS, "bandwidth": self.traffic.bandwidth_columns(),
                "enet": ENET_COLUMNS, "variants": VARIANT_COLUMNS, "conversations": CONVERSATION_COLUMNS,
                "expert": EXPERT_COLUMNS}[_check(name)]

    def rows(self, name: str) -> list[tuple]:
        """The table's rows, sorted by bytes (largest first)."""
        name = _check(name)
        if name == "enet" and not self.with_enet:
            raise KeyError("the enet table was not asked for: profile(..., tables=(..., 'enet'))")
        rows = {"rpc": self._rpc.records, "sync": self._sync.records, "bandwidth": self.traffic.bandwidth,
                "enet": self._enet.records, "variants": self._variants.records,
                "conversations": self.traffic.conversations, "expert": self._expert.records}[name]()
        cols = [c for c, _ in self.columns(name)]
        order = {"rpc": "wire_bytes", "sync": "wire_bytes", "bandwidth": "wire_bytes", "variants": "wire_bytes",
                 "conversations": "bytes", "enet": "reliable"}.get(name)
        if order is not None:
            i, j = cols.index(order), cols.index("app_bytes") if "app_bytes" in cols else cols.index(order)
            rows.sort(key=lambda r: (-(r[i] or 0), -(r[j] or 0)))
        return rows

    def empty_note(self, name: str) -> str:
        return _EMPTY[_check(name)]

    def table(self, name: str) -> pandas.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.rows(name), columns=[c for c, _ in self.columns(name)])

    @property
    def rpc(self) -> pandas.DataFrame:
        return self.table("rpc")

    @property
    def sync(self) -> pandas.DataFrame:
        return self.table("sync")

    @property
    def bandwidth(self) -> pandas.DataFrame:
        return self.table("bandwidth")

    @property
    def enet(self) -> pandas.DataFrame:
        return self.table("enet")

    @property
    def variants(self) -> pandas.DataFrame:
        return self.table("variants")

    @property
    def conversations(self) -> pandas.DataFrame:
        return self.table("conversations")

    @property
    def expert(self) -> pandas.DataFrame:
        return self.table("expert")


def _check(name: str) -> str:
    if name not in TABLES:
        raise KeyError(f"unknown table {name!r}; the tables are: {', '.join(TABLES)}")
    return name


def profile(source: Any, *, interval: float = 1.0, by: str | None = None, series: bool = False,
            tables: tuple[str, ...] = TABLES, max_rows: int = MAX_ROWS, **read_options: Any) -> Profile:
    """Read ``source`` (a capture path, "-" or a binary file object) once with
    ``read_pcap(source, **read_options)`` and return its :class:`Profile`.

    ``interval``: seconds per bandwidth window; ``by``: "channel", "node" or "method" (bandwidth
    rows per direction and that; the plot's stacks); ``series``: keep per-window series for
    ``stats.plot``; ``tables``: the tables wanted (the ``enet`` table costs a second parse of every
    ENet datagram, so it is kept only when asked for; the others cost little); ``max_rows``: rows
    per table before the rest are folded into "(other)" (``spec.stats.MAX_ROWS``).
    """
    from ..pcap.reader import read_pcap

    p = Profile(interval, by, series, read_options.get("enet_compression"), tuple(tables), max_rows)
    for rec in read_pcap(source, on_frame=p.frame, **read_options):
        p.record(rec)
    p.finish()
    return p
