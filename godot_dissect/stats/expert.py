"""The ``expert`` table: what a reviewer of a capture must see.

One row per (severity, category, src, dst, detail); ``count`` messages, the ``first_frame`` and
``last_frame`` they were in, and for ``malformed`` the byte ``offset`` (in the message) and the
reason of the first one. Categories:

- ``malformed`` (error): a message the engine would reject or could not read (an error record:
  bad Variant, bad multiplayer packet, bad ENet datagram, cut stream...), keyed by its reason.
- ``object`` (warning): a full Object encoded on the wire (``allow_object_decoding``; godot#27395:
  decoding one runs its script); detail: the class names.
- ``object-as-id`` (note): an Object sent as an instance id (meaningless to another process).
- ``over-mtu`` (note): an ENet packet sent as more than one fragment, or a plain UDP datagram
  larger than one Ethernet frame can carry (``UDP_PAYLOAD_MTU``: IP fragments it).
- ``sender-mismatch`` (warning): a client's packet whose header claims a sender other than the
  peer id of the connection it came on (Godot 3 headers carry the sender; a server that trusted it
  would relay a spoofed call, PR #6741).
- ``path-cache`` (warning): a node named by a path-cache id its sender never announced in the
  capture (announced before the capture started, or a forged id).
- ``unknown-method`` (note): a Godot 4 method id without a name (give ``--project``/``--rpc-names``),
  or one the given names do not have.
- ``limit`` (note): rows a table folded into ``(other)`` (``spec.stats.MAX_ROWS``).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

from ..records import Record, app_size
from ..spec import get_dialect
from ..spec.layouts import FLAG_OBJECT_AS_ID
from ..spec.stats import MAX_ROWS, MAX_VALUES_SEARCHED, UDP_PAYLOAD_MTU
from ..values import Object, ObjectID
from .rows import OTHER, Rows
from .traffic import _ep

EXPERT_COLUMNS = (("severity", None), ("category", None), ("src", None), ("dst", None), ("count", None),
                  ("first_frame", None), ("last_frame", None), ("offset", None), ("detail", None))
SEVERITY_ORDER = {"error": 0, "warning": 1, "note": 2}
_OFFSET = re.compile(r"^offset (\d+): ")
_NUMBERS = re.compile(r"\d+")


def _object_header(dialect: str) -> re.Pattern[bytes] | None:
    """An Object's 4-byte type header in this dialect (byte 1 ignored, the as-id flag either way):
    a cheap search in the raw bytes before walking a value."""
    try:
        entry = get_dialect(dialect).by_key("OBJECT")
    except (KeyError, ValueError):
        entry = None
    if entry is None:
        return None
    flags = sorted({0, FLAG_OBJECT_AS_ID.mask})  # the header as u32 little-endian: bytes 2 and 3
    third = b"".join(re.escape(bytes([(f >> 16) & 0xFF])) for f in flags)
    return re.compile(re.escape(bytes([entry.id])) + b"." + b"[" + third + b"]" + re.escape(bytes([0])), re.S)


def find_objects(value: Any) -> tuple[set[str], int, bool]:
    """Class names of the full Objects in a value, how many Objects-as-id, and whether the whole
    value was searched (at most MAX_VALUES_SEARCHED values)."""
    classes: set[str] = set()
    ids = 0
    stack = [value]
    seen = 0
    while stack:
        v = stack.pop()
        t = type(v)
        if t is ObjectID:
            ids += 1
            continue
        if t is Object:
            classes.add(v.class_name or "null")
            children: Any = list(v.properties.values())
        elif isinstance(v, dict):
            children = [*v.keys(), *v.values()]
        elif isinstance(v, list):
            children = v
        else:
            continue
        seen += len(children)
        if seen > MAX_VALUES_SEARCHED:
            return classes, ids, False
        for c in children:
            if type(c) in _WALKED or isinstance(c, (list, dict)):
                stack.append(c)
    return classes, ids, True


_WALKED = frozenset((list, dict, Object, ObjectID))
#: record kinds whose raw bytes are one Variant from byte 0 (every header 4-byte aligned)
_ALIGNED = frozenset(("variant", "debugger"))


class ExpertTable:
    columns = EXPERT_COLUMNS

    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        # count, first frame, last frame, offset, detail
        self.rows = Rows(lambda: [0, None, None, None, ""], ("note", "limit", OTHER, OTHER, OTHER), max_rows)
        self.headers: dict[str, re.Pattern[bytes] | None] = {}
        #: a connection's client endpoint -> its peer id (the max_rows most recently connected)
        self.client_peer: OrderedDict[str, int] = OrderedDict()
        self.max_rows = max_rows

    def _client(self, endpoint: str, peer: int, replace: bool) -> None:
        peers = self.client_peer
        if endpoint in peers:
            if replace:
                peers[endpoint] = peer
            return
        peers[endpoint] = peer
        if len(peers) > self.max_rows:  # a flood of connections: the oldest is forgotten
            peers.popitem(last=False)

    def note(self, severity: str, category: str, rec: Record | None, key: str, detail: str,
             offset: int | None = None, count: int = 1) -> None:
        src, dst = (_ep(rec.src, rec.sport), _ep(rec.dst, rec.dport)) if rec is not None else ("", "")
        row = self.rows.get((severity, category, src, dst, key))
        row[0] += count
        if rec is not None:
            if row[1] is None:
                row[1], row[3], row[4] = rec.frame, offset, detail
            row[2] = rec.frame
        elif not row[4]:
            row[4] = detail

    def add(self, rec: Record) -> None:
        kind = rec.kind
        if kind == "error":
            reason = rec.error or ""
            m = _OFFSET.match(reason)
            offset = int(m.group(1)) if m else None
            text = reason[m.end():] if m else reason
            what = f"{rec.command} " if rec.command else ""
            self.note("error", "malformed", rec, what + _NUMBERS.sub("N", text)[:160], what + text, offset)
            return
        f = rec.fields
        if kind == "enet":
            if rec.command == "CONNECT" and f and isinstance(f.get("data"), int):
                self._client(_ep(rec.src, rec.sport), f["data"], True)
            return
        if rec.direction == "s2c" and rec.receiver is not None and kind != "enet":
            self._client(_ep(rec.dst, rec.dport), rec.receiver, False)
        elif rec.direction == "c2s" and rec.sender is not None:
            real = self.client_peer.get(_ep(rec.src, rec.sport))
            if real is not None and real != rec.sender:
                self.note("warning", "sender-mismatch", rec, f"{rec.sender} on {real}",
                          f"claims sender {rec.sender}, the connection is peer {real}")
        self._objects(rec)
        if f:
            if "unresolved" in f:
                self.note("warning", "path-cache", rec, f"{rec.sender} {rec.fields.get('node_id')}", f["unresolved"])
            frags = f.get("fragments", 1)
            if frags > 1:
                self.note("note", "over-mtu", rec, f"{rec.node}.{rec.method}" if rec.node else kind,
                          f"{app_size(rec)} bytes sent as {frags} ENet fragments")
        if kind == "rpc" and rec.method is None and rec.method_id is not None:
            status = (f or {}).get("method_names") or "no method names given (--project / --rpc-names)"
            self.note("note", "unknown-method", rec, f"{rec.node} #{rec.method_id}",
                      f"{rec.node} method id {rec.method_id}: {status}")
        elif kind == "variant" and rec.transport == "udp" and len(rec.raw) > UDP_PAYLOAD_MTU:
            self.note("note", "over-mtu", rec, "datagram", f"{len(rec.raw)}-byte datagram payload > "
                                                           f"{UDP_PAYLOAD_MTU}: IP-fragmented on Ethernet")

    def _objects(self, rec: Record) -> None:
        dialect = rec.dialect
        if dialect in self.headers:
            header = self.headers[dialect]
        else:
            header = self.headers[dialect] = _object_header(dialect) if dialect else None
        if header is None or rec.value is None or header.search(rec.raw) is None:
            return
        if rec.kind in _ALIGNED and not any(m.start() % 4 == 0 for m in header.finditer(rec.raw)):
            return
        classes, ids, complete = find_objects(rec.value)
        where = f"{rec.node}.{rec.method}" if rec.node else rec.kind
        if classes:
            names = ", ".join(sorted(classes))
            self.note("warning", "object", rec, f"{where} {names}",
                      f"full Object ({names}) in {where}: decoding it can run its script (godot#27395)")
        if ids:
            self.note("note", "object-as-id", rec, where, f"Object sent as instance id in {where}")
        if not complete:
            self.note("note", "limit", rec, "object search", f"value larger than {MAX_VALUES_SEARCHED} values: "
                                                               "not searched to the end for Objects")

    def records(self) -> list[tuple]:
        out = [(*k[:4], *v) for k, v in self.rows.items()]
        out.sort(key=lambda r: (SEVERITY_ORDER.get(r[0], 9), -r[4]))
        return out
