"""Records as Arrow RecordBatches of :data:`~.schema.SCHEMA`, streamed: memory is bounded by the
batch size, not the capture."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from operator import attrgetter
from typing import Any

import pyarrow as pa

from .. import jsonform
from ..records import HEX_KINDS, TIME_DECIMALS, WIRE_DECIMALS, Record, app_size
from .schema import BATCH_ROWS, BATCH_TEXT_BYTES, COLUMNS, FILE_SCHEMA, RENAMED, SCHEMA, TIME_TYPE

_TEXT_KINDS = ("text",)  # kinds whose value is already its JSON form (WebSocket text frames)
#: columns holding a value the record computes (the rest hold the record attribute of their name as is)
_COMPUTED = ("time", "type", "length", "app_bytes", "wire_bytes", "hex", "fields", "text", "value", "capture")
#: record attributes whose JSON key is another column in some kinds (rset's method is `name`), and those columns
_RENAMED_KEYS = tuple({key for keys in RENAMED.values() for key in keys})
_RENAMED_COLUMNS = tuple({col for keys in RENAMED.values() for col in keys.values()})
_PLAIN = tuple(c.name for c in COLUMNS
               if c.name not in _COMPUTED and c.name not in _RENAMED_KEYS and c.name not in _RENAMED_COLUMNS)
assert all(c.key == c.name for c in COLUMNS if c.name in _PLAIN), "a plain column named unlike its key"
assert set(_PLAIN) <= set(Record.__slots__), "a plain column that is no record attribute"


#: what a row takes from its record as is: the plain columns, the renamed keys, then what the computed
#: columns are made of (one C-level call per record; the row keeps no reference to the record's value,
#: so a batch of rows holds no containers for the garbage collector to walk)
_ATTRS = (*_PLAIN, *_RENAMED_KEYS, "time", "raw", "wire_bytes")
_row_attrs = attrgetter(*_ATTRS)
#: ``jsonform.json_text`` of packet fields, minus its guard for deep data: fields nest a few levels (a value in
#: them is in its JSON form, at most jsonform.VALUE_MAX_DEPTH deep), and ENet records all carry some
_fields_json = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
_COLUMN_OF = {name: i for i, name in enumerate(_ATTRS)}
_TYPE, _APP_BYTES, _FIELDS, _HEX, _TEXT, _VALUE = range(len(_ATTRS), len(_ATTRS) + 6)


class _Builder:
    """Rows as tuples (a C-level attribute fetch per record, the JSON head only for the rows that carry
    packet fields or an error), turned into columns once per batch."""

    def __init__(self, schema: pa.Schema, capture: str | None) -> None:
        self.schema = schema
        self.capture = capture
        self.rows: list[tuple] = []
        self.text_bytes = 0
        # the type name is the dialect's name for the value's Python class, per kind: computed once
        self.types: dict[tuple[str, str, type], str] = {}

    def add(self, rec: Record) -> None:
        kind = rec.kind
        if rec.error is None:
            text = rec.text()
            value = jsonform.json_text(rec.value) if kind in _TEXT_KINDS else jsonform.dumps(rec.value)
            self.text_bytes += len(text) + len(value)
        else:
            text = value = None
        fields = hexed = None
        if rec.fields or rec.error is not None or kind in HEX_KINDS:  # as the record's JSON has them
            head = rec.json_head()
            hexed = head.get("hex")
            if (f := head.get("fields")) is not None:
                fields = jsonform.escape_surrogates(_fields_json(f))
        key = (kind, rec.dialect, type(rec.value))
        if (type_name := self.types.get(key)) is None:
            type_name = self.types[key] = rec.type
        self.rows.append((*_row_attrs(rec), type_name, app_size(rec), fields, hexed, text, value))

    def full(self, batch_rows: int) -> bool:
        return len(self.rows) >= batch_rows or self.text_bytes >= BATCH_TEXT_BYTES

    def batch(self) -> pa.RecordBatch:
        n = len(self.rows)
        at = list(zip(*self.rows, strict=True))
        self.rows = []
        self.text_bytes = 0
        cols: dict[str, Any] = {name: at[i] for name, i in _COLUMN_OF.items() if name in _PLAIN}
        for key in _RENAMED_KEYS:
            cols[key] = list(at[_COLUMN_OF[key]])
        for col in _RENAMED_COLUMNS:
            cols[col] = [None] * n
        if any(kind in RENAMED for kind in set(cols["kind"])):  # e.g. an rset's `method` (a property) is `name`
            for i, kind in enumerate(cols["kind"]):
                if (renamed := RENAMED.get(kind)) is not None:
                    for key, col in renamed.items():
                        cols[col][i], cols[key][i] = cols[key][i], None
        cols["length"] = list(map(len, at[_COLUMN_OF["raw"]]))
        cols["wire_bytes"] = [round(w, WIRE_DECIMALS) for w in at[_COLUMN_OF["wire_bytes"]]]
        cols["type"], cols["app_bytes"], cols["fields"], cols["hex"], cols["text"], cols["value"] = \
            at[_TYPE], at[_APP_BYTES], at[_FIELDS], at[_HEX], at[_TEXT], at[_VALUE]
        arrays = []
        for f in self.schema:
            if f.name == "capture":
                arrays.append(pa.array([self.capture] * n, type=f.type))
            elif f.type == TIME_TYPE:  # the JSON's seconds with 6 decimals, as exact microseconds
                # round() of a float is round-half-even of the double, as numpy's rint: no numpy needed
                micros = [round(round(t, TIME_DECIMALS) * 1e6) for t in at[_COLUMN_OF[f.name]]]
                arrays.append(pa.array(micros, type=TIME_TYPE))
            else:
                arrays.append(pa.array(cols[f.name], type=f.type))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def record_batches(records: Iterable[Record], capture: str | None = None, *, batch_rows: int = BATCH_ROWS,
                   schema: pa.Schema = SCHEMA) -> Iterator[pa.RecordBatch]:
    """``records`` as RecordBatches of ``schema`` (SCHEMA, or FILE_SCHEMA without ``capture``)."""
    if batch_rows < 1:
        raise ValueError("batch_rows must be at least 1")
    b = _Builder(schema, capture)
    for rec in records:
        b.add(rec)
        if b.full(batch_rows):
            yield b.batch()
    if b.rows:
        yield b.batch()


def to_arrow(path: str, *, batch_rows: int = BATCH_ROWS, capture: str | None = None,
             **read_options: Any) -> Iterator[pa.RecordBatch]:
    """Every Godot message of a capture as RecordBatches of :data:`SCHEMA` (``read_options`` are
    ``read_pcap``'s: dialect, ports, enet_ports, rpc_names ...). ``capture`` defaults to the file name."""
    from ..pcap.reader import read_pcap

    name = capture if capture is not None else os.path.basename(path)
    return record_batches(read_pcap(path, **read_options), name, batch_rows=batch_rows)


def reader(paths: str | Iterable[str], *, batch_rows: int = BATCH_ROWS, **read_options: Any) -> pa.RecordBatchReader:
    """A RecordBatchReader over one or more captures (what DuckDB and Polars stream from)."""
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)

    def batches() -> Iterator[pa.RecordBatch]:
        for p in paths:
            yield from to_arrow(os.fspath(p), batch_rows=batch_rows, **read_options)

    return pa.RecordBatchReader.from_batches(SCHEMA, batches())


__all__ = ["FILE_SCHEMA", "SCHEMA", "reader", "record_batches", "to_arrow"]
