"""Records as Arrow RecordBatches of :data:`~.schema.SCHEMA`, streamed: memory is bounded by the
batch size, not the capture.

A row is a tuple: the head ``PcapReader.lines`` hands a line writer (frame ... wire bytes), the
message's length, its type name, the UTF-8 sizes of its text and JSON value, then the columns only other
records fill (None for a plain Variant message). Rows go to a sink, in the reader's order: a list of
them, and two bytearrays their texts and values are appended to (a batch's text and value columns are
made of those at once). A capture's plain Variant messages become rows straight from their bytes
(:func:`variant_row_writer`: no Record made); every other record through :func:`record_rows`. Both hand
the reader an empty line in the row's place (``PcapReader.lines`` hands lines on as they are)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from itertools import accumulate
from operator import attrgetter
from typing import Any

import pyarrow as pa

from .. import jsonform
from ..codec import fast as _fast
from ..records import _TYPE_NAMES, HEX_KINDS, TIME_DECIMALS, WIRE_DECIMALS, Record, compiled_text_writer
from .schema import BATCH_ROWS, BATCH_TEXT_BYTES, COLUMNS, FILE_SCHEMA, RENAMED, SCHEMA

#: the head of a row: what ``PcapReader.lines`` hands a line writer, in its order (wire_bytes: unrounded)
_HEAD = ("frame", "time", "src", "sport", "dst", "dport", "transport", "direction", "dialect", "offset", "wire_bytes")
#: then the message's length in bytes (app_bytes by default), its type name, and the UTF-8 bytes of its text and
#: JSON value in the sink (None: an error record has neither)
_LENGTH, _TYPE, _TEXT, _VALUE, _EXTRA = range(len(_HEAD), len(_HEAD) + 5)
#: columns computed from the row, not held by it
_DERIVED = ("length", "type", "text", "value", "capture")
#: record attributes held as they are in the row's last item (a plain Variant message has none: None there)
_EXTRA_ATTRS = tuple(c.name for c in COLUMNS if c.name not in _HEAD and c.name not in _DERIVED
                     and c.name not in ("hex", "fields") and c.name in Record.__slots__)
#: the row's last item: those attributes, then the renamed keys' columns and the JSON texts the record computes
_EXTRAS = (*_EXTRA_ATTRS, *sorted({col for keys in RENAMED.values() for col in keys.values()}), "hex", "fields")
assert set(_HEAD) | set(_EXTRAS) | set(_DERIVED) == {c.name for c in COLUMNS}, "a column no row holds"
assert all(c.key == c.name for c in COLUMNS if c.name in _EXTRA_ATTRS), "a record attribute named unlike its key"
_EXTRA_AT = {name: i for i, name in enumerate(_EXTRAS)}
#: the last item of a plain Variant message's row, spelled out (records of other kinds need it)
_VARIANT_EXTRAS = tuple("variant" if name == "kind" else None for name in _EXTRAS)
#: record kind -> [(index of the JSON key's attribute, index of its column)] where they differ
_RENAMED_AT = {kind: [(_EXTRA_AT[key], _EXTRA_AT[col]) for key, col in keys.items()] for kind, keys in RENAMED.items()}
_row_head = attrgetter(*_HEAD)
_row_extras = attrgetter(*_EXTRA_ATTRS)
_RENAMED_NONE = (None,) * (len(_EXTRAS) - len(_EXTRA_ATTRS) - 2)  # the renamed keys' columns, before hex and fields

_TEXT_KINDS = ("text",)  # kinds whose value is already its JSON form (WebSocket text frames)
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


#: where rows go: [text bytes, value bytes (both UTF-8, row after row), the rows], in the reader's order
Sink = list[Any]
_TEXTS, _VALUES, _ROWS = range(3)


def new_sink() -> Sink:
    return [bytearray(), bytearray(), []]


def record_rows(sink: Sink) -> Callable[[Record], str]:
    """A function putting the row of a record into ``sink`` (its text and value too) and returning an empty
    line (the ``line_of`` of ``PcapReader.lines``). It keeps the compiled writers and type names it looked up
    (bounded: one per dialect, and per (kind, dialect, value class))."""
    type_names: dict[tuple[str, str, type], str] = {}
    text_writers: dict[str, Any] = {}  # dialect -> its compiled text writer (None: not built)
    json_writer = _json_writer()
    rows = sink[_ROWS]

    def row(rec: Record) -> str:
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
            text_bytes = _utf8(text)
            value_bytes = _utf8(js)
            sink[_TEXTS] += text_bytes
            sink[_VALUES] += value_bytes
            text_size, value_size = len(text_bytes), len(value_bytes)
        else:
            text_size = value_size = None
        fields_text = hexed = None
        f = rec.fields
        if f or error is not None or kind in HEX_KINDS:  # as the record's JSON has them
            if error is None and kind not in HEX_KINDS and _PLAIN_FIELD_TYPES.issuperset(map(type, f.values())):
                fields_text = jsonform.escape_surrogates(_fields_json(f))
            else:
                head = rec.json_head()
                fields = head.get("fields")
                fields_text = None if fields is None else jsonform.escape_surrogates(_fields_json(fields))
                hexed = head.get("hex")
        key = (kind, rec.dialect, type(value))
        if (type_name := type_names.get(key)) is None:
            type_name = type_names[key] = rec.type
        extras = _row_extras(rec) + _RENAMED_NONE + (hexed, fields_text)
        if (renamed := _RENAMED_AT.get(kind)) is not None:  # e.g. an rset's `method` (a property) is `name`
            moved = list(extras)
            for key_at, col_at in renamed:
                moved[col_at], moved[key_at] = moved[key_at], None
            extras = tuple(moved)
        rows.append(_row_head(rec) + (len(rec.raw), type_name, text_size, value_size, extras))
        return ""

    return row


def variant_row_writer(sink: Sink, dialect: str, max_depth: int) -> Callable[..., str | None] | None:
    """The writer putting into ``sink`` the row of the Variant record ``PcapReader._variant`` would make of a
    message body of ``dialect`` (with the sink bound: a ``writer_of`` of ``PcapReader.lines``), straight from
    the body as ``read``'s line writer (``records.variant_line_writer``) writes its line: the compiled
    ``JsonWriter.variant_row`` decodes the body, writes its text and JSON value, no Record made, and returns an
    empty line, or returns None (a body it does not write: malformed,
    a value the compiled writers leave to Python, a class whose type name ``Record.type`` has not named yet),
    and the reader makes the record. None: no compiled writers."""
    text_writer = compiled_text_writer(dialect)
    json_writer = _json_writer()
    table = _fast.table(dialect) if _fast.fast_decode_prefix is not None else None
    if text_writer is None or json_writer is None or table is None or not hasattr(json_writer, "variant_row"):
        return None
    names = _TYPE_NAMES.setdefault(dialect, {})  # a name get_dialect knows (it has a table): bounded
    return partial(json_writer.variant_row, sink, table, text_writer, names, max_depth)


class _Builder:
    """Rows, turned into columns once per batch."""

    def __init__(self, schema: pa.Schema, capture: str | None, sink: Sink) -> None:
        self.schema = schema
        self.capture = capture
        self.sink = sink
        self.n = 0  # rows in the batch: the first n of the sink's (it may hold the next ones already)

    def fill(self, lines: Iterator[str], batch_rows: int) -> bool:
        """Take rows (a line each, in their order) until the batch is full (``batch_rows``, or
        BATCH_TEXT_BYTES of text and value) or they run out; True when the batch holds rows."""
        rows = self.sink[_ROWS]
        n = text_bytes = 0
        text_limit = BATCH_TEXT_BYTES
        for _ in lines:
            row = rows[n]
            n += 1
            if (text := row[_TEXT]) is not None:
                text_bytes += text + row[_VALUE]
            if n >= batch_rows or text_bytes >= text_limit:
                break
        self.n = n
        return n > 0

    def batch(self) -> pa.RecordBatch:
        n, sink = self.n, self.sink
        rows = sink[_ROWS]
        at = list(zip(*rows[:n], strict=True))
        del rows[:n]
        cols: dict[str, Any] = dict(zip(_HEAD, at, strict=False))
        cols["length"] = length = at[_LENGTH]
        cols["type"] = at[_TYPE]
        texts = _take(sink, _TEXTS, sum(filter(None, at[_TEXT])))  # the columns keep these
        values = _take(sink, _VALUES, sum(filter(None, at[_VALUE])))
        # a whole frame's length (an int: most datagrams) is its own rounding
        cols["wire_bytes"] = [w if type(w) is int else round(w, WIRE_DECIMALS) for w in cols["wire_bytes"]]
        cols["time"] = _micros(cols["time"])
        extras = at[_EXTRA]
        plain = extras.count(None)  # rows of plain Variant messages
        if plain == n:
            extra_cols = None
            cols["app_bytes"] = length
        else:
            if plain:
                extras = [_VARIANT_EXTRAS if e is None else e for e in extras]
            extra_cols = dict(zip(_EXTRAS, zip(*extras, strict=True), strict=True))
            # records.app_size: the application's size, by default the message's
            cols["app_bytes"] = [m if a is None else a for m, a in zip(length, extra_cols["app_bytes"], strict=True)]
        arrays = []
        for f in self.schema:
            name = f.name
            if name == "capture":
                arrays.append(pa.array([self.capture] * n, type=f.type))
            elif name == "text":
                arrays.append(_utf8_column(texts, at[_TEXT], f.type))
            elif name == "value":
                arrays.append(_utf8_column(values, at[_VALUE], f.type))
            elif name in cols:
                arrays.append(string_array(cols[name], f.type))
            elif extra_cols is not None:
                arrays.append(string_array(extra_cols[name], f.type))
            elif name == "kind":
                arrays.append(pa.array(["variant"] * n, type=f.type))
            else:
                arrays.append(pa.nulls(n, type=f.type))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8, a code point UTF-8 cannot hold (a lone surrogate a writer left raw: a Godot 3
    Object's class name, say) as its escape ``\\udXXX``, as ``read`` prints it (README, lone surrogates)."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace")


def string_array(values: Any, arrow_type: pa.DataType) -> pa.Array:
    """``pa.array(values, type)``; a string that UTF-8 cannot hold (a lone surrogate from the wire: a Godot 3
    debugger message name, say) written with :func:`_utf8`'s escape instead of failing the batch."""
    try:
        return pa.array(values, type=arrow_type)
    except UnicodeEncodeError:
        return pa.array([unencodable_escaped(v) if type(v) is str else v for v in values], type=arrow_type)


def unencodable_escaped(text: str) -> str:
    """``text`` with what UTF-8 cannot hold (lone surrogates) written as :func:`_utf8` writes it."""
    return _utf8(text).decode()


def _take(sink: Sink, at: int, size: int) -> bytearray:
    """The first ``size`` bytes of a bytearray of the sink, which keeps the rest in a new one."""
    data = sink[at]
    if len(data) == size:
        sink[at] = bytearray()
    else:
        sink[at] = data[size:]
        del data[size:]
    return data


def _utf8_column(data: bytearray, sizes: tuple[int | None, ...], type: pa.DataType) -> pa.Array:
    """The string column of rows whose texts are ``data``, one after another, ``sizes`` bytes each (None: null)."""
    n = len(sizes)
    validity, nulls = None, sizes.count(None)
    if nulls:
        validity = pa.array([size is not None for size in sizes], type=pa.bool_()).buffers()[1]
        sizes = tuple(size or 0 for size in sizes)
    offsets = list(accumulate(sizes, initial=0))
    if offsets[-1] != len(data):
        raise AssertionError(f"rows account for {offsets[-1]} bytes of text, the sink holds {len(data)}")
    return pa.Array.from_buffers(type, n, [validity, pa.array(offsets, type=pa.int64()).buffers()[1],
                                           pa.py_buffer(data)], null_count=nulls)


def row_batches(lines: Iterable[str], sink: Sink, capture: str | None = None, *, batch_rows: int = BATCH_ROWS,
                schema: pa.Schema = SCHEMA) -> Iterator[pa.RecordBatch]:
    """The rows ``variant_row_writer`` and ``record_rows`` put in ``sink`` (a line each in ``lines``, in
    their order) as RecordBatches of ``schema`` (SCHEMA, or FILE_SCHEMA without ``capture``)."""
    if batch_rows < 1:
        raise ValueError("batch_rows must be at least 1")
    b = _Builder(schema, capture, sink)
    lines = iter(lines)
    while b.fill(lines, batch_rows):
        yield b.batch()


def record_batches(records: Iterable[Record], capture: str | None = None, *, batch_rows: int = BATCH_ROWS,
                   schema: pa.Schema = SCHEMA) -> Iterator[pa.RecordBatch]:
    """``records`` as RecordBatches of ``schema`` (SCHEMA, or FILE_SCHEMA without ``capture``)."""
    sink = new_sink()
    return row_batches(map(record_rows(sink), records), sink, capture, batch_rows=batch_rows, schema=schema)


def capture_batches(path: Any, capture: str | None = None, *, batch_rows: int = BATCH_ROWS, schema: pa.Schema = SCHEMA,
                    **read_options: Any) -> Iterator[pa.RecordBatch]:
    """A capture's records (``read_options`` are ``read_pcap``'s) as RecordBatches of ``schema``, as
    ``read_pcap`` reads them."""
    from ..pcap.reader import PcapReader

    if batch_rows < 1:
        raise ValueError("batch_rows must be at least 1")
    sink = new_sink()
    lines = PcapReader(path, **read_options).lines(partial(variant_row_writer, sink), record_rows(sink))
    return row_batches(lines, sink, capture, batch_rows=batch_rows, schema=schema)


def to_arrow(path: str, *, batch_rows: int = BATCH_ROWS, capture: str | None = None,
             **read_options: Any) -> Iterator[pa.RecordBatch]:
    """Every Godot message of a capture as RecordBatches of :data:`SCHEMA` (``read_options`` are
    ``read_pcap``'s: dialect, ports, enet_ports, rpc_names ...). ``capture`` defaults to the file name."""
    name = capture if capture is not None else os.path.basename(path)
    return capture_batches(path, name, batch_rows=batch_rows, **read_options)


def reader(paths: str | Iterable[str], *, batch_rows: int = BATCH_ROWS, **read_options: Any) -> pa.RecordBatchReader:
    """A RecordBatchReader over one or more captures (what DuckDB and Polars stream from)."""
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)

    def batches() -> Iterator[pa.RecordBatch]:
        for p in paths:
            yield from to_arrow(os.fspath(p), batch_rows=batch_rows, **read_options)

    return pa.RecordBatchReader.from_batches(SCHEMA, batches())


__all__ = ["FILE_SCHEMA", "SCHEMA", "capture_batches", "reader", "record_batches", "row_batches", "string_array",
           "to_arrow", "unencodable_escaped", "variant_row_writer"]
