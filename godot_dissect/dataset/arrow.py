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
from ..codec import fast as _fast
from ..records import HEX_KINDS, TIME_DECIMALS, WIRE_DECIMALS, Record, compiled_text_writer
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
_ATTRS = (*_PLAIN, *_RENAMED_KEYS, "time", "raw", "wire_bytes", "app_bytes")
_row_attrs = attrgetter(*_ATTRS)
_COLUMN_OF = {name: i for i, name in enumerate(_ATTRS)}
#: ``jsonform.json_text`` of packet fields, minus its guard for deep data: fields nest a few levels (a value in
#: them is in its JSON form, at most jsonform.VALUE_MAX_DEPTH deep), and ENet records all carry some
_fields_json = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
#: field value classes the record's JSON head keeps as they are (``records._json_field``): a dict of only these
#: is its own JSON form
_PLAIN_FIELD_TYPES = frozenset({str, int, float, bool, type(None)})
#: kinds whose text is the compiled text writer's rendering of the value (``Record.text``)
_VALUE_TEXT_KINDS = ("variant", "debugger")
#: the largest magnitude of ``time * 1e6`` whose rounding error (at most a quarter of a microsecond below 2**51)
#: leaves the nearest integer certain when it is more than 3/8 away from a half
_MICROS_EXACT = 2.0 ** 51


def _micros(times: Any) -> list[int]:
    """Each time (seconds) as the integer microseconds of the JSON's ``round(time, 6)``: exactly
    ``round(round(t, 6) * 1e6)`` (round() of a float is round-half-even of the double, as numpy's rint),
    computed as ``round(t * 1e6)`` where that cannot differ (the product is within 1/8 of t * 10**6)."""
    if not times or max(times) >= _MICROS_EXACT / 1e6 or min(times) <= -_MICROS_EXACT / 1e6:
        return [round(round(t, TIME_DECIMALS) * 1e6) for t in times]
    return [m if abs((m := round(x := t * 1e6)) - x) < 0.375 else round(round(t, TIME_DECIMALS) * 1e6)
            for t in times]


def _json_writer() -> Any:
    """The compiled JSON writer (``jsonform.dumps``'s), built once; None when the extension is off."""
    if _fast.fast_json is None:
        return None
    if not _JSON_WRITER:
        _JSON_WRITER.append(_fast.json_writer(*jsonform.c_tables()))
    return _JSON_WRITER[0]


_JSON_WRITER: list[Any] = []


class _Builder:
    """Rows as tuples (a C-level attribute fetch per record; the JSON head only for the rows that carry
    an error or packet fields that are not plain), turned into columns once per batch."""

    def __init__(self, schema: pa.Schema, capture: str | None) -> None:
        self.schema = schema
        self.capture = capture
        self.rows: list[tuple] = []
        self.types: list[str] = []
        self.texts: list[str | None] = []
        self.values: list[str | None] = []
        self.extra: dict[int, tuple[str | None, str | None]] = {}  # row -> (fields, hex), where the row has them
        self.text_bytes = 0
        # the type name is the dialect's name for the value's Python class, per kind: computed once
        self.type_names: dict[tuple[str, str, type], str] = {}
        self.text_writers: dict[str, Any] = {}  # dialect -> its compiled text writer (None: not built)
        self.json_writer = _json_writer()

    def fill(self, records: Iterator[Record], batch_rows: int) -> bool:
        """Take records until the batch is full (``batch_rows``, or BATCH_TEXT_BYTES of text and value) or
        they run out; True when the batch holds rows. One loop with everything in locals: it runs per message."""
        rows, texts, values, types, extra = self.rows, self.texts, self.values, self.types, self.extra
        type_names, text_writers, json_writer = self.type_names, self.text_writers, self.json_writer
        text_bytes, text_limit = self.text_bytes, BATCH_TEXT_BYTES
        for rec in records:
            kind = rec.kind
            value = rec.value
            error = rec.error
            if error is None:
                text = None
                if kind in _VALUE_TEXT_KINDS:  # Record.text, straight from the compiled writer
                    dialect = rec.dialect
                    if (w := text_writers.get(dialect, False)) is False:
                        w = text_writers[dialect] = compiled_text_writer(dialect)
                    if w is not None:
                        text = w.render(value)
                if text is None:
                    text = rec.text()
                if kind in _TEXT_KINDS:
                    js = jsonform.json_text(value)
                elif json_writer is None or (js := json_writer.render(value)) is None:
                    js = jsonform.dumps(value)
                texts.append(text)
                values.append(js)
                text_bytes += len(text) + len(js)
            else:
                texts.append(None)
                values.append(None)
            f = rec.fields
            if f or error is not None or kind in HEX_KINDS:  # as the record's JSON has them
                if error is None and kind not in HEX_KINDS and _PLAIN_FIELD_TYPES.issuperset(map(type, f.values())):
                    extra[len(rows)] = (jsonform.escape_surrogates(_fields_json(f)), None)
                else:
                    head = rec.json_head()
                    fields = head.get("fields")
                    fields_text = None if fields is None else jsonform.escape_surrogates(_fields_json(fields))
                    extra[len(rows)] = (fields_text, head.get("hex"))
            key = (kind, rec.dialect, type(value))
            if (type_name := type_names.get(key)) is None:
                type_name = type_names[key] = rec.type
            types.append(type_name)
            rows.append(_row_attrs(rec))
            if len(rows) >= batch_rows or text_bytes >= text_limit:
                break
        self.text_bytes = text_bytes
        return bool(rows)

    def batch(self) -> pa.RecordBatch:
        n = len(self.rows)
        at = list(zip(*self.rows, strict=True))
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
        raw = at[_COLUMN_OF["raw"]]
        cols["length"] = list(map(len, raw))
        # records.app_size: the application's size, by default the message's
        cols["app_bytes"] = [len(r) if a is None else a for r, a in zip(raw, at[_COLUMN_OF["app_bytes"]], strict=True)]
        cols["wire_bytes"] = [round(w, WIRE_DECIMALS) for w in at[_COLUMN_OF["wire_bytes"]]]
        cols["type"], cols["text"], cols["value"] = self.types, self.texts, self.values
        fields: list[str | None] = [None] * n
        hexed: list[str | None] = [None] * n
        for i, (f, h) in self.extra.items():
            fields[i], hexed[i] = f, h
        cols["fields"], cols["hex"] = fields, hexed
        arrays = []
        for f in self.schema:
            if f.name == "capture":
                arrays.append(pa.array([self.capture] * n, type=f.type))
            elif f.type == TIME_TYPE:  # the JSON's seconds with 6 decimals, as exact microseconds
                arrays.append(pa.array(_micros(at[_COLUMN_OF[f.name]]), type=TIME_TYPE))
            else:
                arrays.append(pa.array(cols[f.name], type=f.type))
        self.rows, self.types, self.texts, self.values, self.extra = [], [], [], [], {}
        self.text_bytes = 0
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def record_batches(records: Iterable[Record], capture: str | None = None, *, batch_rows: int = BATCH_ROWS,
                   schema: pa.Schema = SCHEMA) -> Iterator[pa.RecordBatch]:
    """``records`` as RecordBatches of ``schema`` (SCHEMA, or FILE_SCHEMA without ``capture``)."""
    if batch_rows < 1:
        raise ValueError("batch_rows must be at least 1")
    b = _Builder(schema, capture)
    records = iter(records)
    while b.fill(records, batch_rows):
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
