"""The Arrow schema of a message record, written once: every column, its type, the record JSON
key it holds and what it means. The README's schema table is printed from :data:`COLUMNS`
(``python -m godot_dissect.dataset.schema``).

A column is null exactly when its JSON key is absent from ``Record.to_json()``; ``text`` and
``value`` are null for error records. :func:`row_to_json` turns a row back into the record's JSON.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    key: str  # the record JSON key this column holds
    meaning: str
    json_text: bool = False  # the column holds the JSON text of the key's value (value, fields)


_S, _BIG = pa.string(), pa.large_string()  # large: one message's text can pass 2 GiB over a batch
TIME_TYPE = pa.timestamp("us", tz="UTC")

COLUMNS: tuple[Column, ...] = (
    Column("frame", pa.int64(), "frame", "frame that completed the message (Wireshark's number, from 1)"),
    Column("time", TIME_TYPE, "time", "capture time of that frame (JSON: seconds since 1970, 6 decimals)"),
    Column("src", _S, "src", "source IP address"),
    Column("sport", pa.int32(), "sport", "source port"),
    Column("dst", _S, "dst", "destination IP address"),
    Column("dport", pa.int32(), "dport", "destination port"),
    Column("transport", _S, "transport", "udp, tcp or websocket"),
    Column("direction", _S, "direction", "c2s (from the side that opened the conversation) or s2c"),
    Column("dialect", _S, "dialect", "godot3, godot4 ... (empty for an error before the dialect was known)"),
    Column("kind", _S, "kind", "variant, debugger, text, error, or a multiplayer kind (rpc, rset, sync ...)"),
    Column("type", _S, "type", "the engine's name for the value's type in the dialect"),
    Column("message", _S, "message", "remote debugger message name"),
    Column("node", _S, "node", "multiplayer: node path (from the path cache or sent inline)"),
    Column("method", _S, "method", "multiplayer: RPC method name (Godot 4: when the names are known)"),
    Column("method_id", pa.int64(), "method_id", "Godot 4 RPC method id"),
    Column("name", _S, "", "rset: the property set (the record calls it `method`)"),
    Column("channel", pa.int32(), "channel", "ENet channel"),
    Column("peer", pa.int64(), "peer", "peer id a peer/sys message is about, or the relay peer"),
    Column("sender", pa.int64(), "sender", "multiplayer peer id that sent the message"),
    Column("receiver", pa.int64(), "receiver", "multiplayer peer id the message was for"),
    Column("transfer", _S, "transfer", "reliable, unreliable or unreliable_ordered"),
    Column("relayed", pa.bool_(), "relayed", "the server relayed it for another peer"),
    Column("app_bytes", pa.int64(), "app_bytes", "message size as the application (MultiplayerAPI) sees it"),
    Column("wire_bytes", pa.float64(), "wire_bytes", "its share of the on-the-wire frame bytes that carried it"),
    Column("length", pa.int64(), "length", "bytes of the message as decoded"),
    Column("offset", pa.int64(), "offset", "stream offset of the message (0 for datagrams)"),
    Column("command", _S, "command", "the engine's command name (REMOTE_CALL, SYS, CONNECT ...)"),
    Column("thread", pa.int64(), "thread", "remote debugger thread id (Godot 4.2+)"),
    Column("error", _S, "error", "why the message is malformed: offset and reason"),
    Column("hex", _BIG, "hex", "error records: the first 256 bytes of the message, in hex"),
    Column("fields", _BIG, "fields", "the rest of the packet (cache ids, md5, headers ...) as JSON text", True),
    Column("text", _BIG, "text", "the value in the engine's var_to_str notation"),
    Column("value", _BIG, "value", "the value's lossless JSON form (godot_dissect.jsonform) as JSON text", True),
    Column("capture", _S, "", "file name of the capture (a Hive partition of an exported dataset)"),
)

#: record kind -> {JSON key: column} where one key lands in another column than its own
RENAMED: dict[str, dict[str, str]] = {"rset": {"method": "name"}}

SCHEMA = pa.schema([pa.field(c.name, c.type) for c in COLUMNS])
#: what one exported Parquet file holds: the capture is its Hive partition (directory) instead
FILE_SCHEMA = pa.schema([f for f in SCHEMA if f.name != "capture"])
#: default rows per RecordBatch; a batch is also cut at BATCH_TEXT_BYTES of text + value
BATCH_ROWS = 4096  # ~9 MB of Arrow data on the load capture; 16k rows cost 100 MB more RSS for no speed
BATCH_TEXT_BYTES = 64 << 20


def json_key(column: Column, kind: str) -> str | None:
    """The record JSON key ``column`` holds in a record of ``kind`` (None: always null there)."""
    renamed = RENAMED.get(kind, {})
    for key, col in renamed.items():
        if col == column.name:
            return key
    if column.key in renamed or column.key != column.name:
        return None
    return column.key


def row_to_json(row: dict[str, Any]) -> dict[str, Any]:
    """A row (``{column: Python value}``, e.g. from ``Table.to_pylist()``) back as ``Record.to_json()``."""
    out: dict[str, Any] = {}
    for c in COLUMNS:
        v = row.get(c.name)
        key = json_key(c, row["kind"])
        if v is None or key is None:
            continue
        if c.type == TIME_TYPE:
            v = _micros(v) / 1e6  # the nearest double to the 6-decimal value, as round(time, 6) is
        elif c.json_text:
            v = json.loads(v)
        out[key] = v
    return out


def json_to_row(record: dict[str, Any], capture: str | None = None) -> dict[str, Any]:
    """A record's JSON (a line of ``read --format jsonl``) as a row (``{column: Arrow-ready value}``,
    the time in microseconds): :func:`row_to_json` backwards, e.g. for a JSONL dataset."""
    from ..jsonform import json_text

    row: dict[str, Any] = {}
    for c in COLUMNS:
        key = json_key(c, record["kind"])
        if key is None or key not in record:
            v = None
        elif c.json_text:  # a JSON null too (the value of a message that carries none)
            v = json_text(record[key])
        elif (v := record[key]) is not None and c.type == TIME_TYPE:
            v = round(v * 1e6)  # the JSON's 6 decimals exactly, as the Arrow writer rounds them
        row[c.name] = v
    row["capture"] = capture
    return row


def _micros(t: Any) -> int:
    if isinstance(t, int):
        return t
    delta = t - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def markdown_table() -> str:
    """The README's schema table."""
    lines = ["| column | type | record JSON key | meaning |", "|---|---|---|---|"]
    for c in COLUMNS:
        key = f"`{c.key}`" if c.key else "—"
        for kind, keys in RENAMED.items():
            for k, col in keys.items():
                if col == c.name:
                    key = f"`{k}` of {kind} records"
        lines.append(f"| `{c.name}` | {c.type} | {key} | {c.meaning} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_table())
