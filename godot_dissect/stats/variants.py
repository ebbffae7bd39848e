"""The ``variants`` table: plain Variant traffic (UDP datagrams, length-prefixed TCP, WebSocket
``put_var``, the remote debugger).

One row per (src, dst, transport, kind, what): ``kind`` is the record kind (``variant``,
``debugger``, ``text``); ``what`` is the top-level type's engine name (``Dictionary``,
``PackedByteArray``...), for a Dictionary with string keys ``Dictionary{key,key...}`` (its sorted
keys, the game-state pattern), for the debugger the message name. ``count``, ``app_bytes``
(``Record.app_bytes``: the message as ``get_var``/``put_var`` see it, length prefix excluded),
``wire_bytes`` (``Record.wire_bytes``).
"""

from __future__ import annotations

from ..records import Record, app_size
from ..spec.stats import KEYSET_CACHE, MAX_ROWS
from .rows import OTHER, Rows
from .traffic import _ep

VARIANT_COLUMNS = (("src", None), ("dst", None), ("transport", None), ("kind", None), ("what", None),
                   ("count", None), ("app_bytes", "bytes"), ("wire_bytes", "bytes"))
#: at most this many characters of a Dictionary's key list go into the row key
KEYSET_CHARS = 120


def what(rec: Record, keysets: dict[tuple, str] | None = None) -> str:
    """The row's ``what``; ``keysets`` caches Dictionary key tuples (in the order sent) -> label."""
    if rec.kind == "debugger":
        return rec.message or ""
    if rec.kind == "text":
        return "text"
    v = rec.value
    if type(v) is dict and v:
        order = tuple(v)
        # checked before the cache: hashing a non-string key (a hostile Dictionary key nested 1024
        # deep) would recurse, and such a Dictionary's label is only its type
        if not all(type(k) is str for k in order):
            return rec.type
        if keysets is not None and order in keysets:
            return keysets[order]
        keys = ",".join(sorted(order))
        label = "Dictionary{" + (keys if len(keys) <= KEYSET_CHARS else keys[:KEYSET_CHARS] + "...") + "}"
        if keysets is not None and len(keysets) < KEYSET_CACHE:
            keysets[order] = label
        return label
    return rec.type


class VariantTable:
    columns = VARIANT_COLUMNS

    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        self.rows = Rows(lambda: [0, 0, 0.0], (OTHER, OTHER, "", "", OTHER), max_rows)
        self.keysets: dict[tuple, str] = {}
        self.ends: dict[tuple, tuple[str, str]] = {}

    def add(self, rec: Record) -> None:
        d = (rec.src, rec.sport, rec.dst, rec.dport)
        ends = self.ends.get(d)
        if ends is None:
            ends = (_ep(rec.src, rec.sport), _ep(rec.dst, rec.dport))
            if len(self.ends) < KEYSET_CACHE:
                self.ends[d] = ends
        key = (*ends, rec.transport, rec.kind, what(rec, self.keysets))
        row = self.rows.rows.get(key) or self.rows.get(key)
        row[0] += 1
        row[1] += app_size(rec)
        row[2] += rec.wire_bytes

    def records(self) -> list[tuple]:
        return [(*k, *v) for k, v in self.rows.items()]
