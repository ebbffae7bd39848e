"""The Arrow schema of a message record: every field of ``spec.record_fields`` as a column with its
Arrow type. The README's schema table is printed from :data:`COLUMNS`
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

from ..spec.record_fields import RECORD_FIELDS


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    key: str  # the record JSON key this column holds
    meaning: str
    json_text: bool = False  # the column holds the JSON text of the key's value (value, fields)


TIME_TYPE = pa.timestamp("us", tz="UTC")
#: the record field table's types as Arrow types (large strings: one message's text can pass 2 GiB over a batch)
ARROW_TYPES: dict[str, pa.DataType] = {"int64": pa.int64(), "int32": pa.int32(), "float64": pa.float64(),
                                       "string": pa.string(), "large_string": pa.large_string(),
                                       "bool": pa.bool_(), "timestamp": TIME_TYPE}

COLUMNS: tuple[Column, ...] = tuple(Column(f.name, ARROW_TYPES[f.type], f.key, f.meaning, f.json_text)
                                    for f in RECORD_FIELDS)

#: record kind -> {JSON key: column} where one key lands in another column than its own
RENAMED: dict[str, dict[str, str]] = {"rset": {"method": "name"}}

SCHEMA = pa.schema([pa.field(c.name, c.type) for c in COLUMNS])
#: what one exported Parquet file holds: the capture is its Hive partition (directory) instead
FILE_SCHEMA = pa.schema([f for f in SCHEMA if f.name != "capture"])
#: default rows per RecordBatch; a batch is also cut at BATCH_TEXT_BYTES of text + value (a JSONL export's
#: batch of lines likewise), whatever ``export --batch-rows`` says
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
