"""The compiled hot path: per-dialect tables for ``_speedups``, built from the spec.

``fast_decode_prefix(data, dialect, allow_objects, max_depth, offset, end)`` and
``fast_encode(value, dialect)`` return exactly what the pure-Python codec returns, or None when
the C code bailed out (every error, and the rare shapes listed at the top of ``_speedups.c``) and
the pure codec has to do the whole job. ``fast_text(value, dialect, tables)`` and
``fast_json(value, tables)`` do the same for ``text.to_text`` and ``jsonform.dumps`` (``_render.c``;
its writers are built from the tables the pure writers pass in, so this module imports neither).
``fast_json_record``, ``fast_text_start`` and ``fast_text_writer`` serve ``read``'s lines (a record's
JSON line from its attributes, the start of a value's text, the TextWriter that writes a text line).
All are None when the extension is not built, on big-endian hosts, or when ``GODOT_DISSECT_PURE``
is set (non-empty, not ``0``) at import: this is the one place that chooses C or pure.

The C side knows layout *kinds* only. Everything Godot-specific reaches it through the tuples made
here from each type's kind parameters (``spec/kinds.py``): per type id for decoding, per Python
class for encoding (see ``parse_dec``/``parse_enc`` in ``_speedups.c`` for their shape).
"""

from __future__ import annotations

import os
import struct
import sys
from array import array
from collections.abc import Callable
from types import ModuleType
from typing import Any

from .. import values as V
from ..spec import layouts as L
from ..spec.dialects import Dialect, get_dialect
from ..spec.kinds import KindParams, kind_params
from ..spec.transports import MAX_KEYS_OF_ONE_HASH
from .kinds import value_class

_speedups: ModuleType | None
try:
    from . import _speedups
except ImportError:  # not built (no compiler at install time): the pure codec does everything
    _speedups = None

#: classes whose encoding needs Python (typed container info, full Objects, buffers of any
#: format, Mapping iteration): left out of the C class table, so they bail
_PYTHON_ONLY = frozenset({memoryview, V.TypedArray, V.FrozenTypedArray, V.TypedDictionary, V.FrozenDict, V.Object})


Entry = tuple[Any, ...]


def _plan(cls: type, index: dict[str, int], prefix: str = "") -> tuple[Any, ...]:
    """A Struct's field paths as ``(cls, child, ...)``: a child is a component's wire index or a
    nested plan (the same tree ``structs.compile_builder`` generates code for)."""
    out: list[Any] = [cls]
    for name in cls._fields:  # type: ignore[attr-defined]
        default = cls._field_defaults.get(name)  # type: ignore[attr-defined]
        path = prefix + name
        out.append(_plan(type(default), index, path + ".") if isinstance(default, tuple) else index[path])
    return tuple(out)


def struct_plan(key: str, layout: L.Struct) -> tuple[Any, ...]:
    """The plan of a math type: its value class's tree with each leaf's wire index."""
    return _plan(V.KEY_CLASSES[key], {p: i for i, p in enumerate(layout.fields)})



def _markers(p: KindParams) -> tuple[type | None, type | None]:
    """(narrow, wide) classes the pure decoder marks numbers with (``layouts.Number``)."""
    return value_class(p.narrow_marker), value_class(p.wide_marker)


def _decoder_entry(p: KindParams, kind: int) -> Entry:
    """One type id's decoder tuple, from its kind parameters (``spec/kinds.py``)."""
    match p.kind:
        case "empty":
            cls = value_class(p.wrapper)
            return kind, None if cls is None else cls()  # None, Callable(), RID()
        case "bool" | "packed_bytes":
            return (kind,)
        case "number":
            return kind, p.narrow, p.wide, p.wide_flag, *_markers(p)
        case "string":
            return kind, value_class(p.wrapper)  # StringName wraps its str
        case "struct":
            # a single-precision build reads 64-bit components and rounds them: C hands those over
            return (kind, p.narrow, p.wide if p.write_wide else "", p.wide_flag,
                    struct_plan(p.key, p.layout))  # type: ignore[arg-type]
        case "packed_strings":
            return kind, V.PackedStringArray
        case "packed":
            return (kind, p.narrow, p.wide if p.write_wide else "", p.wide_flag, p.n, p.stride,
                    V.KEY_CLASSES[p.key].from_bytes)
        case "container":
            return kind, p.layout.pairs, p.typed_mask, p.layout.count.mask  # type: ignore[attr-defined]
        case "object":
            return kind, L.FLAG_OBJECT_AS_ID.mask, V.ObjectID
        case "id64":
            return kind, value_class(p.wrapper)
    return (-1,)  # a kind the C code does not handle: always bail


def _encoder_entry(p: KindParams, cls: type, kind: int) -> Entry | None:
    tid = p.type_id
    match p.kind:
        case "empty" | "bool" | "string" | "packed_bytes" | "packed_strings":
            return kind, tid
        case "number":
            return kind, tid, tid | p.wide_flag, p.narrow, p.wide, *_markers(p)
        case "struct":
            if p.write_wide:
                return kind, tid | p.wide_flag, p.wide, struct_plan(p.key, p.layout)  # type: ignore[arg-type]
            return kind, tid, p.narrow, struct_plan(p.key, p.layout)  # type: ignore[arg-type]
        case "packed":
            if p.stride != struct.calcsize(p.narrow) * p.n:
                return None  # padded stride: Python writes the filler
            if p.write_wide:
                return kind, tid | p.wide_flag, p.wide, cls.width  # type: ignore[attr-defined]
            return kind, tid, p.narrow, cls.width  # type: ignore[attr-defined]
        case "container":
            return kind, tid, p.layout.pairs  # type: ignore[attr-defined]
        case "object" if cls is V.ObjectID:
            return kind, tid | L.FLAG_OBJECT_AS_ID.mask, V.ObjectID._fields.index("id")
        case "id64":
            return kind, tid, cls._fields.index("id")  # type: ignore[attr-defined]
    return None


def build_table(dialect: Dialect | str) -> Any:
    """Compile one dialect into a ``_speedups.Table`` (requires the extension)."""
    assert _speedups is not None, "the _speedups extension is not built"
    d = get_dialect(dialect)
    kinds = {k: i for i, k in enumerate(_speedups.KINDS)}
    params = kind_params(d)
    decoders = tuple(_decoder_entry(p, kinds.get(p.kind, -1)) for p in params)
    encoders: dict[type, Entry] = {}
    for cls, key in V.CLASS_KEYS.items():
        e = d.by_key(key)
        if e is None or cls in _PYTHON_ONLY or e.typedef.layout.kind not in kinds:
            continue
        entry = _encoder_entry(params[e.id], cls, kinds[e.typedef.layout.kind])
        if entry is not None:
            encoders[cls] = entry
    return _speedups.Table(decoders, encoders, L.TYPE_MASK, V.freeze, array, MAX_KEYS_OF_ONE_HASH)


_BY_NAME: dict[str, Any] = {}  # dialect name -> Table (like the pure codec's caches)
_BY_ARG: dict[str, Any] = {}  # name or alias as passed by callers -> Table
#: the Table of a name or alias already asked for, or None (its ``get``: one call, no Python frame)
cached_table: Callable[[str], Any] = _BY_ARG.get


def table(dialect: Dialect | str) -> Any:
    """The cached Table of a dialect, or None when the name is unknown (Python raises for it)."""
    if type(dialect) is str and (t := _BY_ARG.get(dialect)) is not None:
        return t
    try:
        d = get_dialect(dialect)
    except ValueError:
        return None
    t = _BY_NAME.get(d.name)
    if t is None:
        t = _BY_NAME[d.name] = build_table(d)
    if type(dialect) is str:
        _BY_ARG[dialect] = t
    return t


def c_decode_prefix(data: Any, dialect: Dialect | str, allow_objects: bool, max_depth: int, offset: int,
                   end: int | None) -> tuple[Any, int] | None:
    t = _BY_ARG.get(dialect) if type(dialect) is str else None
    if t is None and (t := table(dialect)) is None:
        return None
    return t.decode(data, allow_objects, max_depth, offset, end)


def c_encode(value: Any, dialect: Dialect | str) -> bytes | None:
    t = _BY_ARG.get(dialect) if type(dialect) is str else None
    if t is None and (t := table(dialect)) is None:
        return None
    return t.encode(value)


def c_encode_levels(value: Any, dialect: Dialect | str, limit: int = -1) -> tuple[bytes, int] | None:
    """``c_encode``, and the deepest nesting of containers written (the top container is level 1); None too
    when a container below ``limit`` (>= 0) levels holds an element."""
    t = _BY_ARG.get(dialect) if type(dialect) is str else None
    if t is None and (t := table(dialect)) is None:
        return None
    return t.encode_levels(value, limit)


def _codes(names: tuple[str, ...], entries: dict[type, tuple]) -> dict[type, tuple]:
    """Kind names -> the C enum's codes (first item of every entry)."""
    code = {k: i for i, k in enumerate(names)}
    return {cls: (code[t[0]], *t[1:]) for cls, t in entries.items()}


def _float_tables() -> None:
    """Ryu's tables for the shortest float digits in ``_render.c`` (float repr, Godot 3 "%g"):
    5**i cut to its top 125 bits, and 2**(bits(5**i) + 124) // 5**i + 1, as (low, high) halves."""
    if _FLOAT_TABLES:
        return
    m64 = (1 << 64) - 1
    pow5, inv = [], []
    for i in range(342):
        p = 5**i
        n = p.bit_length()
        if i < 326:
            top = p >> (n - 125) if n >= 125 else p << (125 - n)
            pow5.append((top & m64, top >> 64))
        x = (1 << (n - 1 + 125)) // p + 1
        inv.append((x & m64, x >> 64))
    assert _speedups is not None
    _speedups.set_float_tables(tuple(pow5), tuple(inv))
    _FLOAT_TABLES.append(True)


_FLOAT_TABLES: list[bool] = []


def text_writer(tables: tuple[dict[type, tuple], dict[str, Any]]) -> Any:
    """A ``_speedups.TextWriter`` from one dialect's compiled-writer tables (``text.writer.compiled_writer``)."""
    assert _speedups is not None, "the _speedups extension is not built"
    _float_tables()
    entries, rules = tables
    rules = dict(rules)
    style = rules.pop("style")  # a writer.Style: its strings in the order the C enum has them
    return _speedups.TextWriter(_codes(_speedups.TEXT_KINDS, entries),
                                style=tuple(getattr(style, f) for f in _speedups.STYLE_FIELDS), **rules)


def json_writer(entries: dict[type, tuple], max_depth: int) -> Any:
    """A ``_speedups.JsonWriter`` from jsonform's table (``jsonform.compiled_entries``) and its depth
    limit (``jsonform.VALUE_MAX_DEPTH``: deeper values take the pure writer's flat form)."""
    assert _speedups is not None, "the _speedups extension is not built"
    _float_tables()
    return _speedups.JsonWriter(_codes(_speedups.JSON_KINDS, entries), max_depth=max_depth)


# The writers' tables come from their own modules, passed in by them: this module imports neither
# text.writer nor jsonform (they import it), so the choice C-or-pure is made here, once, with no loop.
TextTables = Callable[[Dialect], tuple[dict[type, tuple], dict[str, Any]]]
JsonTables = Callable[[], tuple[dict[type, tuple], int]]  # (entries, max depth)
_TEXT: dict[str, Any] = {}  # dialect name -> TextWriter
_JSON: list[Any] = []  # the JsonWriter, once built


def c_text_writer(dialect: Dialect, tables: TextTables) -> Any:
    """The cached TextWriter of a dialect (``JsonWriter.record`` writes a record's text with it)."""
    w = _TEXT.get(dialect.name)
    if w is None:
        w = _TEXT[dialect.name] = text_writer(tables(dialect))
    return w


def c_text(value: Any, dialect: Dialect, tables: TextTables) -> str | None:
    w = _TEXT.get(dialect.name)
    if w is None:
        w = _TEXT[dialect.name] = text_writer(tables(dialect))
    return w.render(value)


def c_text_start(value: Any, dialect: Dialect, tables: TextTables, nbytes: int) -> tuple[str, bool] | None:
    w = _TEXT.get(dialect.name)
    if w is None:
        w = _TEXT[dialect.name] = text_writer(tables(dialect))
    return w.render_start(value, nbytes)


def _json(tables: JsonTables) -> Any:
    if not _JSON:
        _JSON.append(json_writer(*tables()))
    return _JSON[0]


def c_json(value: Any, tables: JsonTables) -> str | None:
    return _json(tables).render(value)


def c_json_line(head: dict[str, Any], text: str | None, value: Any, tables: JsonTables) -> str | None:
    return _json(tables).line(head, text, value)


def json_record_writer(tables: JsonTables) -> Any:
    """The JsonWriter (built from ``tables`` the first time): its ``variant_line`` writes a record's line from
    a message body (``records.variant_line_writer``)."""
    return _json(tables)


def c_json_record(rec: Any, type_name: str, text: str, optional: tuple[str, ...], tables: JsonTables) -> str | None:
    return (_JSON[0] if _JSON else _json(tables)).record(rec, type_name, text, optional)


#: True when the extension is importable (whether or not GODOT_DISSECT_PURE turned it off)
BUILT = _speedups is not None
ENABLED = BUILT and sys.byteorder == "little" and os.environ.get("GODOT_DISSECT_PURE", "") in ("", "0")

fast_decode_prefix: Callable[[Any, Dialect | str, bool, int, int, int | None], tuple[Any, int] | None] | None
fast_encode: Callable[[Any, Dialect | str], bytes | None] | None
fast_decode_prefix, fast_encode = (c_decode_prefix, c_encode) if ENABLED else (None, None)
fast_encode_levels: Callable[[Any, Dialect | str, int], tuple[bytes, int] | None] | None = \
    c_encode_levels if ENABLED else None
fast_text: Callable[[Any, Dialect, TextTables], str | None] | None = c_text if ENABLED else None
fast_text_start: Callable[[Any, Dialect, TextTables, int], tuple[str, bool] | None] | None = \
    c_text_start if ENABLED else None
fast_text_writer: Callable[[Dialect, TextTables], Any] | None = c_text_writer if ENABLED else None
fast_json: Callable[[Any, JsonTables], str | None] | None = c_json if ENABLED else None
fast_json_line: Callable[[dict[str, Any], str | None, Any, JsonTables], str | None] | None = \
    c_json_line if ENABLED else None
fast_json_record: Callable[[Any, str, str, tuple[str, ...], JsonTables], str | None] | None = \
    c_json_record if ENABLED else None


def front_door(python_decode: Callable[..., Any]) -> Callable[..., Any]:
    """``python_decode`` (codec.decoder.decode) as one C call when the C path can do the job: see
    FrontDoor in ``_speedups.c``. It is on while ``fast_decode_prefix`` is (tests turn that off for
    the pure reference) and uses the tables ``c_decode_prefix`` caches; anything else goes to
    ``python_decode`` as called."""
    if not ENABLED:
        return python_decode
    assert _speedups is not None and python_decode.__defaults__ and python_decode.__kwdefaults__
    return _speedups.FrontDoor(python_decode, _BY_ARG, globals(), "fast_decode_prefix",
                               python_decode.__defaults__[0], python_decode.__kwdefaults__["max_depth"],
                               (module_attribute, (python_decode.__module__, python_decode.__name__)))


def module_attribute(module: str, name: str) -> Any:
    """``module.name``: how a pickled front door is found again (it pickles as the attribute it is)."""
    import importlib

    return getattr(importlib.import_module(module), name)
