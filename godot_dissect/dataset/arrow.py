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
from .schema import BATCH_ROWS, BATCH_TEXT_BYTES, COLUMNS, FILE_SCHEMA, SCHEMA, TIME_TYPE, json_key

_TEXT_KINDS = ("text",)  # kinds whose value is already its JSON form (WebSocket text frames)
_RENDERED = ("text", "value", "fields")  # columns written from the record, not copied from its head


class _Builder:
    """Column lists filled record by record, cut into batches."""

    def __init__(self, schema: pa.Schema, capture: str | None) -> None:
        self.schema = schema
        self.capture = capture
        self.names = [f.name for f in schema]
        self._plans: dict[str, tuple[tuple[list, str], ...]] = {}
        self._reset()

    def _reset(self) -> None:
        self.cols: dict[str, list] = {n: [] for n in self.names}
        self._plans.clear()  # the plans hold the old lists
        self.rows = 0
        self.text_bytes = 0

    def plan(self, kind: str) -> tuple[tuple[tuple[list, str], ...], tuple[list, ...]]:
        """For a record of ``kind``: (column list, JSON key) of its head columns, and the columns
        that stay null."""
        p = self._plans.get(kind)
        if p is None:
            fills, nulls = [], []
            for c in COLUMNS:
                if c.name not in self.cols or c.name in _RENDERED or c.name == "capture":
                    continue
                key = json_key(c, kind)
                if key is None:
                    nulls.append(self.cols[c.name])
                else:
                    fills.append((self.cols[c.name], key))
            p = self._plans[kind] = (tuple(fills), tuple(nulls))
        return p

    def add(self, rec: Record) -> None:
        head = rec._head()  # to_json() but text and value, which come from the compiled writers below
        kind = head["kind"]
        get = head.get
        fills, nulls = self.plan(kind)
        for col, key in fills:
            col.append(get(key))
        for col in nulls:
            col.append(None)
        cols = self.cols
        fields = head.get("fields")
        cols["fields"].append(None if fields is None else jsonform.json_text(fields))
        if rec.error is None:
            text = rec.text()
            value = jsonform.json_text(rec.value) if kind in _TEXT_KINDS else jsonform.dumps(rec.value)
            self.text_bytes += len(text) + len(value)
        else:
            text = value = None
        cols["text"].append(text)
        cols["value"].append(value)
        self.rows += 1

    def full(self, batch_rows: int) -> bool:
        return self.rows >= batch_rows or self.text_bytes >= BATCH_TEXT_BYTES

    def batch(self) -> pa.RecordBatch:
        arrays = []
        for f in self.schema:
            data = self.cols[f.name]
            if f.type == TIME_TYPE:
                micros = np.rint(np.asarray(data, dtype=np.float64) * 1e6).astype(np.int64)
                arrays.append(pa.array(micros, type=pa.int64()).cast(TIME_TYPE))
            elif f.name == "capture":
                arrays.append(pa.array([self.capture] * self.rows, type=f.type))
            else:
                arrays.append(pa.array(data, type=f.type))
        b = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        self._reset()
        return b


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
