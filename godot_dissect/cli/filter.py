"""``read -Y EXPR``: a display filter over record fields, in the spirit of Wireshark's.

The expression is parsed by a lark grammar and compiled into a tree of small closures, once; no
``eval``. Field names are the keys of the JSON record (``kind``, ``type``, ``method``, ``sport`` …,
``fields.NAME`` for packet metadata); a ``godot.`` prefix is accepted, as Wireshark users type it.

Semantics follow Wireshark's: a comparison with a field the record does not have is false (so
``!(peer == 1)`` matches records without ``peer``, ``peer != 1`` does not); a bare field name tests
that the record has it; ``contains`` is a substring test, ``matches`` a case-sensitive regex
search (Python syntax, run by the ``regex`` module so that one search stops after
``spec.cli.MAX_MATCH_SECONDS``: a usage error, as Wireshark's PCRE2 match limit);
``in {a b 10..20}`` is membership (ranges for numbers).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

import regex
from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, VisitError

from ..records import Record, app_size
from ..spec import get_dialect
from ..spec.cli import MAX_FILTER_DEPTH, MAX_FILTER_LENGTH, MAX_MATCH_SECONDS
from ..spec.record_fields import NUMBER_TYPES, RECORD_FIELDS
from ..values import type_key

Predicate = Callable[[Record], bool]

# name -> (kind of value, how to read it from a record); "any" is checked when the filter runs
_NUM, _STR, _BOOL, _ANY = "number", "string", "boolean", "any"


def _attr(name: str) -> Callable[[Record], Any]:
    return lambda rec: getattr(rec, name, None)


def _type_id(rec: Record) -> int | None:
    """The value's type id in the record's dialect (what Wireshark's ``godot.type`` holds)."""
    if not rec.type or rec.kind == "text":
        return None
    try:
        entry = get_dialect(rec.dialect).by_key(type_key(rec.value))
    except (TypeError, ValueError):
        return None
    return entry.id if entry else None


def _opt_str(name: str) -> Callable[[Record], Any]:
    """A string attribute that the JSON record leaves out when empty."""
    return lambda rec: getattr(rec, name, None) or None


#: record fields read otherwise than as the record's attribute of the same name
_GETTERS: dict[str, Callable[[Record], Any]] = {
    "dialect": _opt_str("dialect"),
    "type": lambda rec: rec.type or None,  # compared with a number: the type id, as godot.type in Lua
    "length": lambda rec: len(rec.raw),
    "text": lambda rec: None if rec.error is not None else rec.text(),
    "app_bytes": app_size,
}
#: record fields a filter does not compare: the packet metadata is ``fields.NAME``; hex and value are
#: renderings of the bytes (``text`` is the value as text)
_NOT_COMPARED = frozenset({"fields", "hex", "value"})


def _kind(type_name: str) -> str:
    return _NUM if type_name in NUMBER_TYPES else _BOOL if type_name == "bool" else _STR


FIELDS: dict[str, tuple[str, Callable[[Record], Any]]] = {
    **{f.name: (_kind(f.type), _GETTERS.get(f.name) or _attr(f.name))
       for f in RECORD_FIELDS if f.key and f.name not in _NOT_COMPARED},
    # either end, as Wireshark's ip.addr / udp.port
    "addr": (_STR, lambda rec: (rec.src, rec.dst)),
    "port": (_NUM, lambda rec: (rec.sport, rec.dport)),
    "type_id": (_NUM, _type_id),
    "evidence": (_STR, _opt_str("evidence")),  # with --evidence: how the dialect was decided
}
#: ``fields.NAME``: one key of the record's packet metadata (cache ids, md5, ENet headers ...)
METADATA_PREFIX = "fields."
_PREFIX = "godot."


def field_names() -> list[str]:
    return [*FIELDS, METADATA_PREFIX + "NAME"]


def field_getter(name: str) -> tuple[str, Callable[[Record], Any]] | None:
    """(kind, getter) for a field name as the user wrote it; None when there is no such field."""
    if name.startswith(_PREFIX):
        name = name[len(_PREFIX):]
    if name in FIELDS:
        return FIELDS[name]
    if name.startswith(METADATA_PREFIX) and len(name) > len(METADATA_PREFIX):
        key = name[len(METADATA_PREFIX):]
        return _ANY, lambda rec: (rec.fields or {}).get(key)
    return None


_GRAMMAR = r"""
?start: or_expr
?or_expr: and_expr (_OR and_expr)*
?and_expr: not_expr (_AND not_expr)*
?not_expr: _NOT not_expr -> negate
         | atom
?atom: "(" or_expr ")"
     | FIELD CMP value -> compare
     | FIELD _CONTAINS value -> contains
     | FIELD _MATCHES value -> matches
     | FIELD _IN "{" value ("," | value)* "}" -> member
     | FIELD -> exists
?value: STRING | WORD
_OR.2: "||" | /or\b/
_AND.2: "&&" | /and\b/
_NOT.2: "!" | /not\b/
_CONTAINS.2: /contains\b/
_MATCHES.2: /matches\b/ | "~"
_IN.2: /in\b/
CMP.2: "==" | "!=" | "<=" | ">=" | "<" | ">" | /eq\b/ | /ne\b/ | /lt\b/ | /le\b/ | /gt\b/ | /ge\b/
FIELD: /[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*/
STRING: /"(\\.|[^"\\])*"/
WORD: /[^\s(){},"!=<>&|~]+/
%ignore /\s+/
"""
_PARSER = Lark(_GRAMMAR, parser="lalr", lexer="contextual", propagate_positions=True)

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
    ">=": operator.ge, "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge,
}


class FilterError(ValueError):
    """A filter that does not parse or names an unknown field; ``column`` counts from 1."""

    def __init__(self, column: int, reason: str) -> None:
        super().__init__(f"column {column}: {reason}")
        self.column = column
        self.reason = reason


def _literal(tok: Token) -> str:
    if tok.type == "STRING":
        return re.sub(r"\\(.)", r"\1", tok[1:-1])
    return str(tok)


def _number(text: str) -> int | float | None:
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return None


def _coerce(kind: str, tok: Token, field: str) -> Any:
    """The literal as the field's kind of value (checked once, when the filter is compiled)."""
    text = _literal(tok)
    if kind == _NUM:
        n = _number(text)
        if n is None:
            raise FilterError(tok.column, f"{field} is a number, not {text!r}")
        return n
    if kind == _BOOL:
        low = text.lower()
        if low not in ("true", "false", "1", "0"):
            raise FilterError(tok.column, f"{field} is true or false, not {text!r}")
        return low in ("true", "1")
    if kind == _ANY:
        n = _number(text) if tok.type == "WORD" else None
        return text if n is None else n
    return text


def _test(get: Callable[[Record], Any], check: Callable[[Any], bool]) -> Predicate:
    """True when the field is there and ``check`` holds for its value (or for either of two ends)."""

    def pred(rec: Record) -> bool:
        v = get(rec)
        if v is None:
            return False
        if type(v) is tuple:
            return any(check(x) for x in v)
        try:
            return bool(check(v))
        except TypeError:  # "any" metadata of another kind than the literal
            return False

    return pred


def _loose(op: Callable[[Any, Any], bool], lit: Any) -> Callable[[Any], bool]:
    """Metadata values have no declared kind: numbers compare as numbers, the rest as text."""
    if isinstance(lit, (int, float)):
        return lambda v: op(v, lit) if isinstance(v, (int, float)) else op(str(v), str(lit))
    return lambda v: op(str(v), lit)


@v_args(inline=True)
class _Compile(Transformer):
    def _field(self, tok: Token, value: Token | None = None) -> tuple[str, str, Callable[[Record], Any]]:
        name = str(tok)
        if name.removeprefix(_PREFIX) == "type" and value is not None and value.type == "WORD" \
                and _number(value) is not None:
            name = "type_id"  # `godot.type == 2`, as in Wireshark: the id
        found = field_getter(name)
        if found is None:
            raise FilterError(tok.column, f"unknown field {str(tok)!r}; valid fields: {', '.join(field_names())}")
        return name, *found

    def exists(self, tok: Token) -> Predicate:
        _, _, get = self._field(tok)
        return lambda rec: get(rec) is not None

    def compare(self, tok: Token, op: Token, value: Token) -> Predicate:
        name, kind, get = self._field(tok, value)
        lit = _coerce(kind, value, name)
        fn = _OPS[str(op)]
        return _test(get, _loose(fn, lit) if kind == _ANY else (lambda v: fn(v, lit)))

    def contains(self, tok: Token, value: Token) -> Predicate:
        _, _, get = self._field(tok)
        lit = _literal(value)
        return _test(get, lambda v: lit in (v if isinstance(v, str) else str(v)))

    def matches(self, tok: Token, value: Token) -> Predicate:
        _, _, get = self._field(tok)
        try:
            rx = regex.compile(_literal(value))
        except regex.error as e:
            raise FilterError(value.column, f"bad regular expression: {e}") from None
        column = value.column

        def search(v: Any) -> bool:
            # the `regex` module, for its timeout: `re` backtracks without bound ("(a+)+$" on a
            # capture's 40 "a"s runs for days), and the data is the capture's, not the user's
            try:
                return rx.search(v if isinstance(v, str) else str(v), timeout=MAX_MATCH_SECONDS) is not None
            except TimeoutError:
                raise FilterError(column, f"the regular expression searched one {tok} for more than "
                                          f"{MAX_MATCH_SECONDS} s (nested repeats such as (a+)+ backtrack "
                                          "exponentially)") from None

        return _test(get, search)

    def member(self, tok: Token, *values: Token) -> Predicate:
        name, kind, get = self._field(tok, values[0] if values else None)
        singles: set[Any] = set()
        ranges: list[tuple[Any, Any]] = []
        for value in values:
            if value.type == "WORD" and ".." in value and kind in (_NUM, _ANY):
                lo, _, hi = value.partition("..")
                a, b = _number(lo), _number(hi)
                if a is None or b is None:
                    raise FilterError(value.column, f"bad range {str(value)!r}")
                ranges.append((a, b))
            else:
                singles.add(_coerce(kind, value, name))
        strings = {str(s) for s in singles}

        def check(v: Any) -> bool:
            if v in singles or (kind == _ANY and str(v) in strings):
                return True
            return isinstance(v, (int, float)) and any(a <= v <= b for a, b in ranges)

        return _test(get, check)

    def negate(self, inner: Predicate) -> Predicate:
        return lambda rec: not inner(rec)

    def and_expr(self, *parts: Predicate) -> Predicate:
        return lambda rec: all(p(rec) for p in parts)

    def or_expr(self, *parts: Predicate) -> Predicate:
        return lambda rec: any(p(rec) for p in parts)


def _check_depth(tree: Tree) -> None:
    """Nesting beyond MAX_FILTER_DEPTH is an error (compiling and running the filter recurse), found
    without recursion."""
    stack: list[tuple[Tree, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_FILTER_DEPTH:
            column = getattr(node.meta, "column", 1) if not node.meta.empty else 1
            raise FilterError(column, f"operators nested deeper than {MAX_FILTER_DEPTH} levels")
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))


def compile_filter(text: str) -> Predicate:
    """The expression as a predicate over records; ``FilterError`` (with the column) if it is wrong."""
    if len(text) > MAX_FILTER_LENGTH:
        raise FilterError(MAX_FILTER_LENGTH + 1, f"longer than {MAX_FILTER_LENGTH} characters")
    try:
        tree = _PARSER.parse(text)
    except UnexpectedEOF:
        raise FilterError(len(text) + 1, "the expression ends too early") from None
    except UnexpectedCharacters as e:
        raise FilterError(e.column, f"unexpected {text[e.pos_in_stream:e.pos_in_stream + 1]!r}") from None
    except UnexpectedInput as e:
        tok = getattr(e, "token", None)
        if tok is not None and tok.type == "$END":
            raise FilterError(len(text) + 1, "the expression ends too early") from None
        what = repr(str(tok)) if tok is not None else "input"
        raise FilterError(getattr(e, "column", 0), f"unexpected {what}") from None
    if isinstance(tree, Token):  # a lone field name
        return _Compile().exists(tree)
    _check_depth(tree)
    try:
        return _Compile().transform(tree)
    except VisitError as e:
        if isinstance(e.orig_exc, FilterError):
            raise e.orig_exc from None
        raise
    except LarkError as e:  # pragma: no cover - the grammar covers every tree shape
        raise FilterError(1, str(e)) from None
