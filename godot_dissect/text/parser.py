"""``from_text``: read Godot's text notation back into values, without Python recursion.

One grammar for both engine families: what ``var2str``/``var_to_str`` print and what .tscn/.tres/.escn
files of Godot 3 and 4 hold, including the legacy names Godot 4's ``VariantParser`` still accepts
(``Quat``, ``Transform``, ``Matrix32``, ``PoolRealArray``, ``ByteArray`` ...). Where the engines read
the same text differently the engine of the dialect's family decides: math components are rounded to
float32 unless real_t is double, integer overflow wraps the way ``String::to_int`` does, and
``\\a``/``\\v`` in strings read as plain ``a``/``v`` (the engines write them but do not read them).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Any, NamedTuple

from .. import values as V
from ..deep import deep_recursion
from ..spec import Dialect, get_dialect
from ..spec import layouts as L
from ..spec.conversions import OBJECT_AS_ID_CLASS
from ..spec.transports import MAX_KEYS_OF_ONE_HASH
from .writer import f32, real_is_double, s64

__all__ = ["Reader", "TextParseError", "from_text"]


class TextParseError(ValueError):
    """Text the engine would not read; ``line`` and ``column`` count from 1."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.message = message
        self.line = line
        self.column = column


# token kinds
EOF = "EOF"
PUNCT = "punct"
IDENT = "identifier"
STRING = "string"
STRING_NAME = "string_name"
NUMBER = "number"
COLOR = "color"


class Token(NamedTuple):
    kind: str
    value: Any
    pos: int


# Legacy names the Godot 4 parser still takes; current names come from the spec's dialects.
_LEGACY = {
    "Matrix32": "TRANSFORM2D", "Rect3": "AABB", "Matrix3": "BASIS", "ByteArray": "PACKED_BYTE_ARRAY",
    "IntArray": "PACKED_INT32_ARRAY", "PackedIntArray": "PACKED_INT32_ARRAY",
    "FloatArray": "PACKED_FLOAT32_ARRAY", "PackedRealArray": "PACKED_FLOAT32_ARRAY",
    "StringArray": "PACKED_STRING_ARRAY", "Vector2Array": "PACKED_VECTOR2_ARRAY",
    "Vector3Array": "PACKED_VECTOR3_ARRAY", "ColorArray": "PACKED_COLOR_ARRAY",
    "PoolVector4Array": "PACKED_VECTOR4_ARRAY", "Vector4Array": "PACKED_VECTOR4_ARRAY",
}
_NAME_KEYS = {e.name: e.key for name in ("godot3", "godot4") for e in get_dialect(name).entries} | _LEGACY
_REFS = ("Resource", "SubResource", "ExtResource")
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?")
_IDENT = re.compile(r"-?[A-Za-z_][A-Za-z0-9_]*")
_EXP_TAIL = re.compile(r"[eE][+-]?")
# "-nan" is what Godot 3's %lg writes for a NaN with the sign bit set
_SPECIAL = {"inf": math.inf, "-inf": -math.inf, "inf_neg": -math.inf, "nan": math.nan, "-nan": -math.nan}
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r"}
_I64 = 1 << 63
_U64 = (1 << 64) - 1


def to_int(text: str) -> int:
    """``String::to_int``: clamps once the digits run past int64, wraps on the last digit."""
    sign = -1 if text.startswith("-") else 1
    n = 0
    for c in text.lstrip("-"):
        if n > (_I64 - 1) // 10:
            return _I64 - 1 if sign > 0 else -_I64
        n = s64(n * 10 + ord(c) - 48)
    return s64(n * sign)


def _saturate(x: float, lo: int, hi: int) -> int:
    """float -> int as the wasm engine casts it: truncate, NaN is 0, out of range clamps."""
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return hi if x > 0 else lo
    return max(lo, min(hi, int(x)))


def _int32(x: int | float) -> int:
    """An argument of an int32 constructor: an int wraps, a float saturates."""
    if isinstance(x, float):
        return _saturate(x, -(1 << 31), (1 << 31) - 1)
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >> 31 else x


def html_color(hexdigits: str) -> V.Color | None:
    """``Color::html`` for #rgb, #rgba, #rrggbb, #rrggbbaa."""
    n = len(hexdigits)
    if n in (3, 4):
        hexdigits = "".join(c * 2 for c in hexdigits)
    elif n not in (6, 8):
        return None
    if len(hexdigits) == 6:
        hexdigits += "ff"
    r, g, b, a = (int(hexdigits[i:i + 2], 16) / 255.0 for i in range(0, 8, 2))
    return V.Color(f32(r), f32(g), f32(b), f32(a))


#: nesting limit of a dialect without one of its own (Godot 3 crashes instead): the spec's default
DEFAULT_DEPTH_LIMIT: int = Dialect.engine_depth_limit  # type: ignore[assignment]


def _nesting(value: Any) -> int:
    """Levels of containers with elements in ``value``, as the binary decoder counts them (iterative)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        items = v.items() if isinstance(v, dict) else ((x, None) for x in v)
        for a, b in items:
            if len(v):
                deepest = max(deepest, depth)
            for x in (a, b):
                if isinstance(x, (list, dict)) and x:
                    stack.append((x, depth + 1))
    return deepest


class _Frame:
    """An open container: what it has so far and what token it waits for."""

    __slots__ = ("kind", "items", "key", "key_pos", "state", "typed", "wrapped", "stored", "hashes")

    def __init__(self, kind: str, typed: Any = None, wrapped: bool = False) -> None:
        self.kind = kind  # "array", "dict" or "object"
        self.items: Any = {} if kind != "array" else []
        self.key: Any = None
        self.key_pos = 0  # where that key ends
        self.stored: dict | None = None  # each key as stored, once a key came twice (values.key_clash)
        self.hashes: dict[int, int] | None = None  # keys per hash, of keys whose hash the text chooses
        self.state = "first"  # first, comma (after an element), next (after ','), colon, value
        self.typed = typed  # element ContainerType, (key, value) types, or the object's class
        self.wrapped = wrapped  # Array[T]( ... ) / Dictionary[K, V]( ... ): a ')' follows


class Reader:
    """A token stream over ``text`` that can read values and leaves ``pos`` after what it read."""

    def __init__(self, text: str, dialect: Dialect | str = "godot4", pos: int = 0) -> None:
        self.text = text
        self.pos = pos
        self.dialect = get_dialect(dialect)
        self.g3 = self.dialect.family == 3
        self.double = real_is_double(self.dialect)
        self._peeked: Token | None = None

    # errors ---------------------------------------------------------------------------------
    def error(self, message: str, pos: int | None = None) -> TextParseError:
        pos = self.pos if pos is None else pos
        line = self.text.count("\n", 0, pos) + 1
        column = pos - self.text.rfind("\n", 0, pos)
        return TextParseError(message, line, column)

    # tokens ---------------------------------------------------------------------------------
    def skip_space(self) -> None:
        text, i, n = self.text, self.pos, len(self.text)
        while i < n:
            c = text[i]
            if c == ";":
                j = text.find("\n", i)
                i = n if j < 0 else j + 1
            elif c <= " ":
                i += 1
            else:
                break
        self.pos = i

    def peek(self) -> Token:
        if self._peeked is None:
            self._peeked = self._lex()
        return self._peeked

    def next(self) -> Token:
        tok = self.peek()
        self._peeked = None
        return tok

    def expect(self, value: str, what: str | None = None) -> Token:
        tok = self.next()
        if tok.kind != PUNCT or tok.value != value:
            raise self.error(f"expected {what or repr(value)}, got {self.describe(tok)}", tok.pos)
        return tok

    @staticmethod
    def describe(tok: Token) -> str:
        if tok.kind == EOF:
            return "end of text"
        if tok.kind == PUNCT:
            return repr(tok.value)
        return f"{tok.kind} {tok.value!r}"

    def _lex(self) -> Token:
        self.skip_space()
        text, start = self.text, self.pos
        if start >= len(text):
            return Token(EOF, None, start)
        c = text[start]
        if c in "{}[]():,.=":
            self.pos = start + 1
            return Token(PUNCT, c, start)
        if c in "&@":
            if text[start + 1:start + 2] != '"':
                raise self.error(f"expected '\"' after {c!r}", start)
            self.pos = start + 1
            return Token(STRING_NAME, V.StringName(self._string()), start)
        if c == '"':
            return Token(STRING, self._string(), start)
        if c == "#":
            j = start + 1
            while j < len(text) and text[j] in "0123456789abcdefABCDEF":
                j += 1
            color = html_color(text[start + 1:j])
            if color is None:
                raise self.error("invalid color code", start)
            self.pos = j
            return Token(COLOR, color, start)
        nxt = text[start + 1:start + 2]
        if c.isdigit() and c.isascii() or (c == "-" and nxt.isdigit() and nxt.isascii()):
            m = _NUMBER.match(text, start)
            assert m is not None
            self.pos = m.end()
            lexeme = m.group()
            # a bare exponent sign or letter ends the number but belongs to it for the engine
            tail = _EXP_TAIL.match(text, self.pos) if "e" not in lexeme.lower() else None
            if tail:
                self.pos = tail.end()
            if "." in lexeme or "e" in lexeme.lower() or tail:
                return Token(NUMBER, float(lexeme), start)
            return Token(NUMBER, to_int(lexeme), start)
        m = _IDENT.match(text, start)
        if m:
            self.pos = m.end()
            word = m.group()
            if word in ("-inf", "-nan") and text.startswith(".0", self.pos):
                self.pos += 2  # Godot 3 writes a float -inf as "-inf.0"
            return Token(IDENT, word, start)
        raise self.error(f"unexpected character {c!r}", start)

    def _string(self) -> str:
        """Read a quoted string; ``pos`` is on the opening quote."""
        text, i, n = self.text, self.pos + 1, len(self.text)
        out: list[str] = []
        lead = 0  # pending UTF-16 lead surrogate (Godot 4)
        while True:
            j = i
            while j < n and text[j] not in '"\\\0':
                j += 1
            if j > i:
                if lead:
                    raise self.error("unpaired UTF-16 lead surrogate", j)
                out.append(text[i:j])
            if j >= n or text[j] == "\0":
                raise self.error("unterminated string", self.pos)
            if text[j] == '"':
                if lead:
                    raise self.error("unpaired UTF-16 lead surrogate", j)
                self.pos = j + 1
                return "".join(out)
            if j + 1 >= n:
                raise self.error("unterminated string", self.pos)
            esc, i = text[j + 1], j + 2
            if esc == "\0":
                raise self.error("unterminated string", self.pos)
            if esc in "uU" and not (self.g3 and esc == "U"):
                width = 4 if esc == "u" else 6
                digits = text[i:i + width]
                if len(digits) < width or not all(ch in "0123456789abcdefABCDEF" for ch in digits):
                    raise self.error("malformed hex constant in string", j)
                i += width
                code = int(digits, 16)
            else:
                code = ord(_ESCAPES.get(esc, esc))
            if not self.g3 and 0xD800 <= code <= 0xDBFF:
                if lead:
                    raise self.error("unpaired UTF-16 lead surrogate", j)
                lead = code
                continue
            if not self.g3 and 0xDC00 <= code <= 0xDFFF:
                if not lead:
                    raise self.error("unpaired UTF-16 trail surrogate", j)
                code, lead = 0x10000 + ((lead - 0xD800) << 10) + (code - 0xDC00), 0
            elif lead:
                raise self.error("unpaired UTF-16 lead surrogate", j)
            out.append(chr(code) if code <= 0x10FFFF else "\ufffd")

    # values ---------------------------------------------------------------------------------
    def value(self) -> Any:
        """Read one value starting at the next token. A Dictionary key nests at most the dialect's
        ``engine_depth_limit`` levels of containers with elements (as in the binary form): deeper
        is a TextParseError."""
        pos, peeked = self.pos, self._peeked
        try:
            return self._value()
        except RecursionError:
            # equal Dictionary keys nested near the depth limit: Python compares them
            # recursively, past its default recursion limit; again with room for that (rare)
            self.pos, self._peeked = pos, peeked
            with deep_recursion():
                return self._value()

    def _value(self) -> Any:
        stack: list[_Frame] = []
        limit = self.dialect.engine_depth_limit or DEFAULT_DEPTH_LIMIT
        while True:
            tok = self.next()
            if stack:
                frame = stack[-1]
                done = self._structure(frame, tok)
                if done is _MORE:
                    continue
                if done is not _VALUE:
                    stack.pop()
                    result = done
                else:
                    result = self._start(tok, stack)
            else:
                result = self._start(tok, stack)
            while result is not _MORE:
                if not stack:
                    return result
                frame = stack[-1]
                if frame.kind == "array":
                    frame.items.append(result)
                    frame.state = "comma"
                elif frame.state == "value":
                    d = frame.items
                    n = len(d)
                    d[frame.key] = result
                    # (a typed Dictionary's key type converts its keys first: merged as the engine does)
                    if (len(d) == n or frame.stored is not None) and not (frame.typed and frame.typed[0]):
                        if frame.stored is None:  # the first repeated key: each key as stored, once
                            frame.stored = {k: k for k in d}
                        first = V.key_clash(frame.stored, frame.key, len(d) == n)
                        if first is not None:
                            raise self.error(f"cannot represent value: {V.key_clash_reason(frame.key, first)}",
                                             frame.key_pos)
                    frame.state = "comma"
                else:  # a dictionary key
                    if isinstance(result, (list, dict)) and len(stack) + _nesting(result) > limit:
                        # Python hashes and compares keys recursively in C: bounded by the engine's
                        # limit, as the binary form is (values themselves may nest deeper)
                        raise self.error(f"Dictionary key nested deeper than {limit} levels (the engine's "
                                         f"limit)", tok.pos)
                    frame.key = V.freeze(result)
                    frame.key_pos = tok.pos
                    if type(frame.key) not in V.SAFE_KEY_TYPES:  # values.hash_flooded
                        if frame.hashes is None:
                            frame.hashes = {}
                        if V.hash_flooded(frame.hashes, frame.key, MAX_KEYS_OF_ONE_HASH):
                            raise self.error(V.hash_flood_reason(MAX_KEYS_OF_ONE_HASH), tok.pos)
                    frame.state = "colon"
                result = _MORE

    def _structure(self, frame: _Frame, tok: Token) -> Any:
        """Handle punctuation inside an open container. Returns _MORE (token used), _VALUE (the token
        starts an element) or the finished container."""
        closer = {"array": "]", "dict": "}", "object": ")"}[frame.kind]
        punct = tok.value if tok.kind == PUNCT else None
        if frame.state in ("first", "comma") and punct == closer:
            return self._finish(frame)
        if frame.state == "comma":
            if punct != ",":
                raise self.error(f"expected ',' or {closer!r}, got {self.describe(tok)}", tok.pos)
            frame.state = "next"
            return _MORE
        if frame.state == "next" and punct == closer:  # a trailing comma: both engines take it
            return self._finish(frame)
        if frame.state == "colon":
            if punct != ":":
                raise self.error(f"expected ':', got {self.describe(tok)}", tok.pos)
            frame.state = "value"
            return _MORE
        if frame.kind == "object" and frame.state in ("first", "next"):
            if tok.kind != STRING:
                raise self.error(f"expected property name as string, got {self.describe(tok)}", tok.pos)
            frame.key = tok.value
            frame.state = "colon"
            return _MORE
        if tok.kind == EOF:
            raise self.error(f"unexpected end of text, {closer!r} missing", tok.pos)
        return _VALUE

    def _finish(self, frame: _Frame) -> Any:
        if frame.kind == "object":
            if frame.typed == OBJECT_AS_ID_CLASS and isinstance(frame.items.get("object_id"), int):
                return V.ObjectID(frame.items["object_id"] & _U64)
            return V.Object(frame.typed, frame.items)
        if frame.wrapped:
            self.expect(")")
        if frame.typed is None:
            return frame.items
        if frame.kind == "array":
            return V.TypedArray(frame.typed, frame.items)
        key_type, value_type = frame.typed
        return V.TypedDictionary(key_type, value_type, frame.items)

    def _start(self, tok: Token, stack: list[_Frame]) -> Any:
        """A value that starts with ``tok``: complete, or _MORE after opening a container."""
        kind, val = tok.kind, tok.value
        if kind == STRING_NAME and self.dialect.by_key("STRING_NAME") is None:
            raise self.error(f"StringName does not exist in {self.dialect.name}", tok.pos)
        if kind in (NUMBER, STRING, STRING_NAME, COLOR):
            return val
        if kind == PUNCT and val in "[{":
            stack.append(_Frame("array" if val == "[" else "dict"))
            return _MORE
        if kind != IDENT:
            raise self.error(f"expected a value, got {self.describe(tok)}", tok.pos)
        if val in ("true", "false"):
            return val == "true"
        if val in ("null", "nil"):
            return None
        if val in _SPECIAL:
            return _SPECIAL[val]
        if val in ("Array", "Dictionary") and self._peek_punct("["):
            stack.append(self._typed_open(val))
            return _MORE
        if val == "Object":
            self.expect("(")
            cls = self.next()
            if cls.kind != IDENT:
                raise self.error(f"expected a class name, got {self.describe(cls)}", cls.pos)
            frame = _Frame("object", cls.value)
            if self._peek_punct(","):
                self.next()
            stack.append(frame)
            return _MORE
        if val in _REFS:
            return self._resource(val)
        key = _NAME_KEYS.get(val)
        if key is None:
            raise self.error(f"unexpected identifier {val!r}", tok.pos)
        if self.dialect.by_key(key) is None:
            raise self.error(f"{val} does not exist in {self.dialect.name}", tok.pos)
        return self._construct(key, tok)

    def _peek_punct(self, p: str) -> bool:
        t = self.peek()
        return t.kind == PUNCT and t.value == p

    def _typed_open(self, name: str) -> _Frame:
        self.expect("[")
        first = self._container_type()
        if name == "Array":
            self.expect("]")
            self.expect("(")
            self.expect("[")
            return _Frame("array", first, wrapped=True)
        self.expect(",")
        second = self._container_type()
        self.expect("]")
        self.expect("(")
        self.expect("{")
        return _Frame("dict", (first, second) if first or second else None, wrapped=True)

    def _container_type(self) -> V.ContainerType | None:
        tok = self.next()
        if tok.kind != IDENT:
            raise self.error(f"expected a type name, got {self.describe(tok)}", tok.pos)
        if tok.value == "Variant":
            return None
        if tok.value in _REFS and self._peek_punct("("):  # a script; a bare Resource is the class
            ref = self._resource(tok.value)
            if ref.kind == "Resource":
                return V.ContainerType("script", str(ref.id))
            arg = f'"{ref.id}"' if isinstance(ref.id, str) else str(ref.id)
            return V.ContainerType("script", f"{ref.kind}({arg})")
        if any(e.name == tok.value for e in self.dialect.entries[1:]):
            return V.ContainerType("builtin", tok.value)
        return V.ContainerType("class_name", tok.value)

    def _resource(self, kind: str) -> V.ResourceRef:
        """``SubResource( 2 )``, ``ExtResource("1_ab")``, ``Resource("res://x", "uid://y")``."""
        self.expect("(")
        tok = self.next()
        if tok.kind not in (STRING, NUMBER) or isinstance(tok.value, float):
            raise self.error(f"expected an id or a path in {kind}(), got {self.describe(tok)}", tok.pos)
        ref = tok.value
        while self._peek_punct(","):  # Godot 4 may add the uid:// or the path
            self.next()
            extra = self.next()
            if extra.kind != STRING:
                raise self.error(f"expected a string in {kind}(), got {self.describe(extra)}", extra.pos)
            if kind == "Resource" and isinstance(ref, str) and ref.startswith("uid://"):
                ref = extra.value
        self.expect(")")
        return V.ResourceRef(kind, ref)

    def _numbers(self, name_tok: Token) -> list[int | float]:
        """``( n, n, ... )`` where each n is a number or inf/inf_neg/nan."""
        self.expect("(")
        out: list[int | float] = []
        if self._peek_punct(")"):
            self.next()
            return out
        while True:
            tok = self.next()
            if tok.kind == NUMBER:
                out.append(tok.value)
            elif tok.kind == IDENT and tok.value in _SPECIAL:
                out.append(_SPECIAL[tok.value])
            else:
                raise self.error(f"expected a number in {name_tok.value}(), got {self.describe(tok)}", tok.pos)
            sep = self.next()
            if sep.kind == PUNCT and sep.value == ")":
                return out
            if sep.kind != PUNCT or sep.value != ",":
                raise self.error(f"expected ',' or ')' in {name_tok.value}(), got {self.describe(sep)}",
                                 sep.pos)

    def _scalar(self, x: int | float, scalar: L.Scalar) -> int | float:
        if scalar is L.I32:
            return _int32(x)
        if scalar is L.I64:
            return _saturate(x, -_I64, _I64 - 1) if isinstance(x, float) else s64(x)
        if scalar is L.F64 or (scalar is L.REAL and self.double):
            return float(x)
        return f32(float(x))

    def _construct(self, key: str, tok: Token) -> Any:
        if key == "NODE_PATH":
            self.expect("(")
            s = self.next()
            if s.kind != STRING:
                raise self.error(f"expected a string in NodePath(), got {self.describe(s)}", s.pos)
            self.expect(")")
            return V.NodePath(s.value)
        if key == "RID":
            args = self._numbers(tok)
            if len(args) > 1:
                raise self.error("expected RID() or RID(number)", tok.pos)
            rid = args[0] if args else 0
            return V.RID(_saturate(rid, 0, _U64) if isinstance(rid, float) else rid & _U64)
        if key in ("CALLABLE", "SIGNAL"):
            self.expect("(")
            self.expect(")")
            return V.Callable() if key == "CALLABLE" else V.Signal()
        layout = self.dialect.by_key(key).typedef.layout  # type: ignore[union-attr]
        if layout.kind == "packed_strings":
            return self._strings(tok)
        if layout.kind == "packed_bytes":
            return self._bytes(tok)
        if layout.kind not in ("struct", "packed"):
            raise self.error(f"{tok.value} is not a constructor", tok.pos)
        args = self._numbers(tok)
        comps = [self._scalar(a, layout.component) for a in args]
        if layout.kind == "packed":
            cls = V.KEY_CLASSES[key]
            width = layout.width
            return cls(comps[:len(comps) - len(comps) % width]) if width == 1 else \
                cls(tuple(comps[i:i + width]) for i in range(0, len(comps) - width + 1, width))
        if len(comps) != len(layout.fields):
            raise self.error(f"expected {len(layout.fields)} arguments for {tok.value}(), got {len(comps)}",
                             tok.pos)
        return _build(V.KEY_CLASSES[key], layout.fields, comps)

    def _strings(self, tok: Token) -> V.PackedStringArray:
        self.expect("(")
        out: list[str] = []
        while True:
            t = self.next()
            if t.kind == PUNCT and t.value == ")" and not out:
                return V.PackedStringArray(out)
            if t.kind != STRING:
                raise self.error(f"expected a string in {tok.value}(), got {self.describe(t)}", t.pos)
            out.append(t.value)
            sep = self.next()
            if sep.kind == PUNCT and sep.value == ")":
                return V.PackedStringArray(out)
            if sep.kind != PUNCT or sep.value != ",":
                raise self.error(f"expected ',' or ')', got {self.describe(sep)}", sep.pos)

    def _bytes(self, tok: Token) -> bytes:
        if self.peek().kind == PUNCT and self.peek().value == "(":
            save_pos, save_peek = self.pos, self._peeked
            self.next()
            first = self.peek()
            if first.kind == STRING:  # Godot 4.3+ files: base64
                self.next()
                self.expect(")")
                try:
                    return base64.b64decode(first.value, validate=True)
                except (binascii.Error, ValueError):
                    raise self.error("invalid base64 in PackedByteArray()", first.pos) from None
            self.pos, self._peeked = save_pos, save_peek
        return bytes(_int32(x) & 0xFF for x in self._numbers(tok))


class _Sentinel:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_MORE = _Sentinel("MORE")
_VALUE = _Sentinel("VALUE")


def _build(cls: type, fields: tuple[str, ...], comps: list) -> Any:
    """A math value from its components listed by the spec's field paths (``"basis.x.y"``)."""
    tree: dict = {}
    for path, c in zip(fields, comps, strict=True):
        node = tree
        *heads, last = path.split(".")
        for h in heads:
            node = node.setdefault(h, {})
        node[last] = c

    def make(t: type, node: dict) -> Any:
        kwargs = {}
        for name, sub in node.items():
            kwargs[name] = make(type(t._field_defaults[name]), sub) if isinstance(sub, dict) else sub
        return t(**kwargs)

    return make(cls, tree)


def from_text(text: str, dialect: Dialect | str = "godot4") -> Any:
    """Read the one value in ``text`` (as var2str / var_to_str print it, or as a .tscn holds it).

    Raises :class:`TextParseError` with line and column on anything else, trailing text included.
    """
    reader = Reader(text, dialect)
    value = reader.value()
    tok = reader.next()
    if tok.kind != EOF:
        raise reader.error(f"unexpected {reader.describe(tok)} after the value", tok.pos)
    return value
