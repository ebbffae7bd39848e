"""``to_text``: a value as the engine's ``var2str`` (Godot 3) / ``var_to_str`` (Godot 4) prints it.

Engine facts this follows (checked against Godot 3.2.3 and 4.6); reals are printed by ``floats.py``,
Dictionary keys sorted by ``order.py``:

* Constructors are spaced in Godot 3: ``Vector2( 1, 2 )``, ``[ 1 ]``, ``[  ]``, ``{\\n\\n}``; a Godot 3
  float without ``.``/``e`` gets ``.0``, which gives ``-inf.0``.
* Godot 4 stops at 100 levels: deeper arrays/dictionaries print as ``[]``/``{}``, objects as ``null``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, NamedTuple

from .. import values as V
from ..codec import fast as _fast
from ..codec.structs import compile_flattener
from ..deep import deep_recursion
from ..errors import EncodeError
from ..spec import Dialect, get_dialect
from ..spec import layouts as L
from ..spec.conversions import OBJECT_AS_ID_CLASS
from ..spec.dialects import per_dialect
from .floats import CACHED_POWERS, f32, num_scientific, rtos_fix3, rtos_fix4, s64
from .order import STRINGLIKE, VariantOrder, godot_sort

__all__ = ["STYLES", "Style", "compiled_writer", "f32", "godot_sort", "num_scientific", "real_is_double", "s64",
           "to_text"]

_MAX_RECURSION = 100  # VariantWriter::MAX_RECURSION in Godot 4.6 (measured: 101 levels are written)


# --------------------------------------------------------------------------- strings

#: a lone surrogate (a Godot 3 String may hold the UTF-8 of one) cannot be written as UTF-8: it is
#: written as the escape \udXXX, which Godot 3's text parser reads back as that code unit (Godot 4
#: refuses an unpaired surrogate in text as it does in UTF-8)
SURROGATE_ESCAPES = {c: f"\\u{c:04x}" for c in range(0xD800, 0xE000)}
_ESC_MULTILINE = str.maketrans({"\\": "\\\\", '"': '\\"', **SURROGATE_ESCAPES})
_ESC4 = str.maketrans({"\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                       "\t": "\\t", "\v": "\\v", "'": "\\'", '"': '\\"', **SURROGATE_ESCAPES})
_ESC3 = {**_ESC4, ord("?"): "\\?"}  # _ESC4's table (code point -> text) and "?"


def _quote(s: str) -> str:
    return '"' + s.translate(_ESC_MULTILINE) + '"'


# --------------------------------------------------------------------------- writer


class Style(NamedTuple):
    """The punctuation of one engine family's writer (codec/_render.c gets the same strings)."""

    call_open: str  # Name( ... )
    call_close: str
    sep: str  # between constructor arguments and array elements
    array_open: str
    array_close: str
    dict_open: str
    dict_sep: str  # between entries
    kv: str  # between a key and its value
    dict_close: str
    dict_empty: str  # an empty (or cut-off) Dictionary


STYLES = {
    3: Style("( ", " )", ", ", "[ ", " ]", "{\n", ",\n", ": ", "\n}", "{\n\n}"),
    4: Style("(", ")", ", ", "[", "]", "{\n", ",\n", ": ", "\n}", "{}"),
}


def _flatten(value: Any, fields: tuple[str, ...]) -> tuple:
    return _flattener(fields)(value)


@functools.cache
def _flattener(fields: tuple[str, ...]) -> Any:
    return compile_flattener(fields)


def real_is_double(d: Dialect) -> bool:
    """real_t is double: the Godot 4 double dialect, or Godot 3 double builds (8-byte PoolRealArray)."""
    entry = d.by_key("PACKED_FLOAT32_ARRAY")
    return d.real_is_double or (entry is not None and getattr(entry.typedef.layout, "stride", None) == 8)


_Item = Any  # str (text to emit) or tuple (value, depth)


class _Writer:
    def __init__(self, dialect: Dialect) -> None:
        self.d = dialect
        self.g3 = dialect.family == 3
        self.style = STYLES[3 if self.g3 else 4]
        self.max_depth = None if self.g3 else _MAX_RECURSION  # deeper containers print empty
        self.double = real_is_double(dialect)
        self.order = VariantOrder(dialect)
        # math value class -> (engine name, Struct layout), for the fast path in expand()
        self.structs: dict[type, tuple[str, Any, Any]] = {
            cls: (e.name, e.typedef.layout, compile_flattener(e.typedef.layout.fields)) for e in dialect.entries
            if e.typedef.layout.kind == "struct" and (cls := V.KEY_CLASSES.get(e.key)) is not None}

    # numbers ------------------------------------------------------------------------------
    def single(self, scalar: L.Scalar) -> bool:
        """Components of this scalar are printed as the float32 the engine holds."""
        return scalar is L.F32 or (scalar is L.REAL and not self.double)

    def real(self, x: float, scalar: L.Scalar) -> str:
        if self.single(scalar):
            x = f32(x)
        return rtos_fix3(x) if self.g3 else rtos_fix4(x)

    def component(self, x: Any, scalar: L.Scalar) -> str:
        if scalar is L.I32 or scalar is L.I64:  # identity: dataclass == is slow here
            return str(int(x))
        return self.real(float(x), scalar)

    def float_text(self, x: float) -> str:
        if self.g3:
            s = rtos_fix3(x if self.double else f32(x))
            if s not in ("inf", "nan") and "." not in s and "e" not in s:
                s += ".0"
            return s
        s = rtos_fix4(x)
        if s not in ("inf", "nan") and not any(c in s for c in ".eE"):
            s += ".0"
        return s

    def call(self, name: str, parts: list[str]) -> str:
        s = self.style
        return name + s.call_open + s.sep.join(parts) + s.call_close

    # dispatch -----------------------------------------------------------------------------
    def expand(self, value: Any, depth: int) -> str | list[_Item]:
        t = type(value)  # the common leaves first: most of a game message is these
        if t is str:
            return _quote(value)
        if t is int:
            if not -(1 << 63) <= value < 1 << 63:
                raise EncodeError(f"int {value} does not fit in 64 bits")
            return str(value)
        if t is float:
            return self.float_text(value)
        if t is bool:
            return "true" if value else "false"
        struct_info = self.structs.get(t)
        if struct_info is not None:
            name, layout, flatten = struct_info
            comp = layout.component
            return self.call(name, [self.component(c, comp) for c in flatten(value)])
        if isinstance(value, V.ResourceRef):
            return self.resource_ref(value)
        try:
            key = V.type_key(value)
        except TypeError as e:
            raise EncodeError(str(e)) from None
        entry = self.d.by_key(key)
        if entry is None:
            raise EncodeError(f"{key} does not exist in dialect {self.d.name}")
        layout = entry.typedef.layout
        kind = layout.kind
        if kind == "empty" and key == "NIL":
            return "null"
        if kind == "bool":
            return "true" if value else "false"
        if key == "INT":
            if not -(1 << 63) <= value < 1 << 63:
                raise EncodeError(f"int {value} does not fit in 64 bits")
            return str(int(value))
        if key == "FLOAT":
            return self.float_text(float(value))
        if key == "STRING":
            return _quote(value)
        if key == "STRING_NAME":
            return '&"' + value.translate(_ESC4) + '"'
        if kind == "struct":
            parts = [self.component(c, layout.component) for c in _flatten(value, layout.fields)]
            return self.call(entry.name, parts)
        if kind == "node_path":
            return 'NodePath("' + str(value).translate(_ESC3 if self.g3 else _ESC4) + '")'
        if key == "RID":
            if self.g3:
                return ""  # Godot 3's writer has no case for RID
            rid = s64(value.id)
            return self.call(entry.name, [str(rid)] if rid else [])
        if key == "OBJECT":
            return self.object(value, depth)
        if key == "CALLABLE":
            return "Callable()"
        if key == "SIGNAL":
            return "Signal()"
        if key == "ARRAY":
            return self.array(value, depth)
        if key == "DICTIONARY":
            return self.dictionary(value, depth)
        if kind == "packed_bytes":
            return self.call(entry.name, [str(b) for b in bytes(value)])
        if kind == "packed_strings":
            esc = _ESC3 if self.g3 else _ESC4
            return self.call(entry.name, ['"' + s.translate(esc) + '"' for s in value])
        if kind == "packed":
            comp = layout.component
            return self.call(entry.name, [self.component(c, comp) for c in value.array])
        raise EncodeError(f"no text form for {key}")

    def resource_ref(self, ref: V.ResourceRef) -> str:
        arg = _quote(ref.id) if isinstance(ref.id, str) else str(ref.id)
        return self.call(ref.kind, [arg])

    def object(self, value: V.ObjectID | V.Object, depth: int) -> str | list[_Item]:
        if isinstance(value, V.ObjectID):
            if value.id == 0:
                return "null"
            # the decoder hands out an EncodedObjectAsID object, printed like any object
            value = V.Object(OBJECT_AS_ID_CLASS, {"object_id": s64(value.id), "script": None})
        if not value.class_name:
            return "null"
        if not self.g3 and depth > _MAX_RECURSION:
            return "null"
        items: list[_Item] = [f"Object({value.class_name},"]
        for i, (k, v) in enumerate(value.properties.items()):
            items.append(("," if i else "") + f'"{k}":')
            items.append((v, depth + 1))
        items.append(")\n")
        return items

    def container_type(self, t: V.ContainerType | None) -> str:
        if t is None:
            return "Variant"
        if t.kind == "script" and t.name.startswith(("res://", "uid://")):
            return 'Resource("' + t.name.translate(_ESC_MULTILINE) + '")'
        return t.name

    def array(self, value: list | tuple, depth: int) -> list[_Item]:
        typed = isinstance(value, V.TYPED_ARRAYS) and not self.g3
        head = f"Array[{self.container_type(value.element)}](" if typed else ""
        tail = ")" if typed else ""
        s = self.style
        if self.max_depth is not None and depth > self.max_depth:
            return [head + s.array_open + s.array_close + tail]
        items: list[_Item] = [head + s.array_open]
        for i, v in enumerate(value):
            if i:
                items.append(s.sep)
            items.append((v, depth + 1))
        items.append(s.array_close + tail)
        return items

    def dictionary(self, value: Mapping, depth: int) -> list[_Item]:
        typed = (isinstance(value, V.TypedDictionary) and not self.g3
                 and (value.key_type is not None or value.value_type is not None))
        head = tail = ""
        if typed:
            head = f"Dictionary[{self.container_type(value.key_type)}, {self.container_type(value.value_type)}]("
            tail = ")"
        s = self.style
        if not value or (self.max_depth is not None and depth > self.max_depth):
            return [head + s.dict_empty + tail]
        with deep_recursion():
            keys = godot_sort(list(value.keys()), self.order.less)
        items: list[_Item] = [head + s.dict_open]
        for i, k in enumerate(keys):
            if i:
                items.append(s.dict_sep)
            items += [(k, depth + 1), s.kv, (value[k], depth + 1)]
        items.append(s.dict_close + tail)
        return items

    def write(self, root: Any) -> str:
        out: list[str] = []
        stack: list[_Item] = [(root, 0)]
        while stack:
            item = stack.pop()
            if type(item) is str:
                out.append(item)
                continue
            parts = self.expand(*item)
            if isinstance(parts, str):
                out.append(parts)
            else:
                stack.extend(reversed(parts))
        return "".join(out)


    def compiled(self) -> tuple[dict[type, tuple], dict[str, Any]]:
        """This writer as codec/_render.c takes it: per value class ``(kind, rank, keyable, name,
        plan, is_int, single)`` (classes left out are written here), and the dialect's rules."""
        entries: dict[type, tuple] = {}
        for cls, key in V.CLASS_KEYS.items():
            e = self.d.by_key(key)
            if e is None or cls in _WRITTEN_HERE:
                continue
            layout = e.typedef.layout
            kind = _COMPILED_KINDS.get(key) or layout.kind
            name: str | None = e.name
            plan, is_int, single = None, False, False
            if kind == "const":  # the text does not depend on the value
                name = self.write(cls())
            elif kind == "struct":
                plan = _fast.struct_plan(key, layout)
            if kind in ("struct", "packed"):
                is_int, single = layout.component in (L.I32, L.I64), self.single(layout.component)
            entries[cls] = (kind, e.id, key in _KEYABLE, name, plan, is_int, single)
        # C sorts keys as a total order: every string-like key after every other key type
        ranks = {k: e.id for k in _KEYABLE if (e := self.d.by_key(k)) is not None}
        if max(r for k, r in ranks.items() if k not in STRINGLIKE) > min(ranks[k] for k in ranks if k in STRINGLIKE):
            entries = {c: (*t[:2], False, *t[3:]) for c, t in entries.items()}
        rules = {"family4": not self.g3, "float_single": self.g3 and not self.double,
                 "max_depth": -1 if self.max_depth is None else self.max_depth, "style": self.style,
                 "esc_string": _ESC_MULTILINE, "esc_name": _ESC4, "esc_path": _ESC3 if self.g3 else _ESC4,
                 "powers": tuple(CACHED_POWERS)}
        return entries, rules


#: classes whose text needs this module (NodePath's string form, Objects, typed containers, ...)
_WRITTEN_HERE = frozenset({memoryview, V.NodePath, V.Object, V.TypedArray, V.FrozenTypedArray, V.TypedDictionary,
                           V.FrozenDict})
#: the compiled writer's kind for a type key (else the layout kind: struct, packed, ...)
_COMPILED_KINDS = {"NIL": "nil", "BOOL": "bool", "INT": "int", "FLOAT": "float", "STRING": "string",
                   "STRING_NAME": "string_name", "RID": "rid", "OBJECT": "object_id", "CALLABLE": "const",
                   "SIGNAL": "const", "ARRAY": "array", "DICTIONARY": "dict"}
#: Dictionary key types the compiled writer sorts (the others go to godot_sort here)
_KEYABLE = ("NIL", "BOOL", "INT", "FLOAT", "STRING", "STRING_NAME")


#: the (stateless, cached) pure writer of a dialect
writer = per_dialect(_Writer)


def compiled_writer(dialect: Dialect | str) -> tuple[dict[type, tuple], dict[str, Any]]:
    """Entries and rules of the compiled writer for ``dialect`` (see ``_Writer.compiled``)."""
    return writer(dialect).compiled()


def to_text(value: Any, dialect: Dialect | str = "godot4") -> str:
    """What the engine of ``dialect``'s family prints for ``value`` with var2str / var_to_str.

    Raises :class:`~godot_dissect.errors.EncodeError` for a value that has no type in the dialect.
    """
    d = get_dialect(dialect)
    if _fast.fast_text is not None and (s := _fast.fast_text(value, d, compiled_writer)) is not None:
        return s  # the compiled writer (codec/_render.c); None: it left this value to Python
    return writer(d).write(value)


def text_renderer(dialect: str) -> Any:
    """The compiled writer of ``dialect`` as an object the compiled JSON writer takes in place of a
    text (``jsonform.record_object_line``), or None (not built, turned off, or no such dialect)."""
    if _fast.fast_text_writer is None:
        return None
    try:
        return _fast.fast_text_writer(get_dialect(dialect), compiled_writer)
    except ValueError:
        return None


def to_text_start(value: Any, dialect: Dialect | str, chars: int) -> str:
    """``to_text(value, dialect)``, or, when that is longer than ``chars`` characters, a start of it
    at least ``chars`` long (one-line summaries: the compiled writer stops early)."""
    d = get_dialect(dialect)
    if _fast.fast_text_start is not None and 0 < chars <= _START_MAX_CHARS:
        # as many bytes as characters (ASCII text, the common case), then room for 4-byte code points
        for nbytes in (chars, 4 * chars):
            got = _fast.fast_text_start(value, d, compiled_writer, nbytes)
            if got is None:
                break
            if got[1] or len(got[0]) >= chars:
                return got[0]
    return to_text(value, d)


#: most characters to_text_start asks the compiled writer for (its bound is 4096 bytes)
_START_MAX_CHARS = 1024

