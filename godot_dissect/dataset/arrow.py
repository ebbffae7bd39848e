"""Records as Arrow RecordBatches of :data:`~.schema.SCHEMA`, streamed: memory is bounded by the
batch size, not the capture."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from .. import jsonform
from ..records import Record
from .schema import BATCH_ROWS, BATCH_TEXT_BYTES, COLUMNS, FILE_SCHEMA, RENAMED, SCHEMA, TIME_TYPE

_TEXT_KINDS = ("text",)  # kinds whose value is already its JSON form (WebSocket text frames)
_RENDERED = ("fields", "text", "value")  # columns written from the record, not copied from its head
#: the columns copied from the record's JSON head, each under its own name (after RENAMED)
_HEAD = tuple(c.name for c in COLUMNS if c.name not in _RENDERED and c.name != "capture")
assert all(c.key in (c.name, "") for c in COLUMNS if c.name in _HEAD), "a head column named unlike its key"


class _Builder:
    """Rows as tuples (one C-level map per record), turned into columns once per batch."""

    def __init__(self, schema: pa.Schema, capture: str | None) -> None:
        self.schema = schema
        self.capture = capture
        self.order = _HEAD + _RENDERED
        self.rows: list[tuple] = []
        self.text_bytes = 0

    def add(self, rec: Record) -> None:
        head = rec._head()  # to_json() but text and value, which come from the compiled writers below
        kind = head["kind"]
        renamed = RENAMED.get(kind)
        if renamed:
            for key, col in renamed.items():
                if key in head:
                    head[col] = head.pop(key)
        fields = head.get("fields")
        if rec.error is None:
            text = rec.text()
            value = jsonform.json_text(rec.value) if kind in _TEXT_KINDS else jsonform.dumps(rec.value)
            self.text_bytes += len(text) + len(value)
        else:
            text = value = None
        self.rows.append((*map(head.get, _HEAD), None if fields is None else jsonform.json_text(fields), text, value))

    def full(self, batch_rows: int) -> bool:
        return len(self.rows) >= batch_rows or self.text_bytes >= BATCH_TEXT_BYTES

    def batch(self) -> pa.RecordBatch:
        n = len(self.rows)
        columns = dict(zip(self.order, zip(*self.rows, strict=True), strict=True))
        self.rows = []
        self.text_bytes = 0
        arrays = []
        for f in self.schema:
            if f.name == "capture":
                arrays.append(pa.array([self.capture] * n, type=f.type))
            elif f.type == TIME_TYPE:  # JSON seconds (6 decimals) to exact microseconds
                micros = np.rint(np.asarray(columns[f.name], dtype=np.float64) * 1e6).astype(np.int64)
                arrays.append(pa.array(micros, type=TIME_TYPE))
            else:
                arrays.append(pa.array(columns[f.name], type=f.type))
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
