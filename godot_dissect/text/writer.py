"""``to_text``: a value as the engine's ``var2str`` (Godot 3) / ``var_to_str`` (Godot 4) prints it.

Engine facts this follows (checked against Godot 3.2.3 and 4.6):

* Godot 3 prints reals with ``%g`` (6 significant digits) after a cast to ``real_t`` (float32 in
  single builds, so ``1e300`` prints ``inf``); a float without ``.``/``e`` gets ``.0``, which gives
  ``-inf.0``. Constructors are spaced: ``Vector2( 1, 2 )``, ``[ 1 ]``, ``[  ]``, ``{\\n\\n}``.
* Godot 4 prints reals with Grisu2 (shortest digits, float32 boundaries when the value is exactly a
  float32), fixed notation for 1e-4 <= |x| < 1e15, ``-0`` as ``0``, ``-inf`` as ``inf_neg``.
* Dictionary keys are sorted with the engine's own introsort and ``Variant`` ordering (type id
  first), which is not stable for keys that do not compare.
* Godot 4 stops at 100 levels: deeper arrays/dictionaries print as ``[]``/``{}``, objects as ``null``.
"""

from __future__ import annotations

import ctypes
import functools
import math
import struct
from collections.abc import Callable as _Fn
from collections.abc import Mapping
from typing import Any, NamedTuple

from .. import values as V
from ..codec import fast as _fast
from ..codec.structs import compile_flattener
from ..deep import deep_recursion
from ..errors import EncodeError
from ..spec import Dialect, get_dialect
from ..spec import layouts as L

__all__ = ["STYLES", "Style", "compiled_writer", "f32", "godot_sort", "num_scientific", "real_is_double", "s64",
           "to_text"]

_M64 = (1 << 64) - 1
_MAX_RECURSION = 100  # VariantWriter::MAX_RECURSION in Godot 4.6 (measured: 101 levels are written)


def f32(x: float) -> float:
    """``(float)x`` as C does it: nearest float32, overflow to infinity."""
    return ctypes.c_float(x).value


def s64(x: int) -> int:
    """A 64-bit pattern as the engine's signed ``int64_t``."""
    x &= _M64
    return x - (1 << 64) if x >> 63 else x


# --------------------------------------------------------------------------- Grisu2 (Godot 4)
# Port of the Grisu2 in thirdparty/grisu2 that String::num_scientific uses since 4.4; not always the
# shortest digits, so Python's repr() is not a substitute.


def _cached_powers() -> list[tuple[int, int, int]]:
    """(f, e, k) with f * 2**e ~= 10**k rounded to 64 bits, for k = -300, -292, ..., 324."""
    table = []
    for k in range(-300, 325, 8):
        num, den = (10 ** k, 1) if k >= 0 else (1, 10 ** -k)
        e = num.bit_length() - den.bit_length() - 64
        while True:
            n, d = (num << -e, den) if e < 0 else (num, den << e)
            if n >= d << 64:
                e += 1
            elif n < d << 63:
                e -= 1
            else:
                break
        f = (2 * n + d) // (2 * d)
        if f >> 64:
            f, e = f >> 1, e + 1
        table.append((f, e, k))
    return table


_POWERS = _cached_powers()


def _normalize(f: int, e: int) -> tuple[int, int]:
    shift = 64 - f.bit_length()
    return f << shift, e - shift


def _mul(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return (a[0] * b[0] + (1 << 63)) >> 64, a[1] + b[1] + 64


def _grisu2(value: float, single: bool) -> tuple[str, int]:
    """Digits and exponent with value = digits * 10**exponent (value finite and > 0)."""
    if single:
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        p, bias = 24, 150
    else:
        bits = struct.unpack("<Q", struct.pack("<d", value))[0]
        p, bias = 53, 1075
    hidden = 1 << (p - 1)
    big_e, frac = bits >> (p - 1), bits & (hidden - 1)
    v = (frac, 1 - bias) if big_e == 0 else (frac + hidden, big_e - bias)
    m_plus = _normalize(2 * v[0] + 1, v[1] - 1)
    if frac == 0 and big_e > 1:
        mf, me = 4 * v[0] - 1, v[1] - 2
    else:
        mf, me = 2 * v[0] - 1, v[1] - 1
    m_minus = (mf << (me - m_plus[1]), m_plus[1])
    w0 = _normalize(*v)

    f = -60 - m_plus[1] - 1
    k = abs(f * 78913) >> 18  # C division truncates toward zero
    k = (-k if f < 0 else k) + (f > 0)
    cf, ce, ck = _POWERS[(300 + k + 7) // 8]
    w = _mul(w0, (cf, ce))
    lo = (_mul(m_minus, (cf, ce))[0] + 1) & _M64
    hi_f, e = _mul(m_plus, (cf, ce))
    hi = (hi_f - 1) & _M64
    return _digit_gen(lo, w[0], hi, e, -ck)


def _digit_gen(lo: int, w: int, hi: int, e: int, exp10: int) -> tuple[str, int]:
    delta, dist = (hi - lo) & _M64, (hi - w) & _M64
    one = 1 << -e
    p1, p2 = hi >> -e, hi & (one - 1)
    digits: list[int] = []
    n = len(str(p1)) if p1 else 1
    pow10 = 10 ** (n - 1)
    while n > 0:
        d, p1 = divmod(p1, pow10)
        digits.append(d)
        n -= 1
        rest = ((p1 << -e) + p2) & _M64
        if rest <= delta:
            _round(digits, dist, delta, rest, (pow10 << -e) & _M64)
            return "".join(map(str, digits)), exp10 + n
        pow10 //= 10
    m = 0
    while True:
        p2 = (p2 * 10) & _M64
        digits.append(p2 >> -e)
        p2 &= one - 1
        m += 1
        delta, dist = (delta * 10) & _M64, (dist * 10) & _M64
        if p2 <= delta:
            break
    _round(digits, dist, delta, p2, one)
    return "".join(map(str, digits)), exp10 - m


def _round(digits: list[int], dist: int, delta: int, rest: int, ten_k: int) -> None:
    while (rest < dist and ((delta - rest) & _M64) >= ten_k
           and (((rest + ten_k) & _M64) < dist
                or ((dist - rest) & _M64) > ((rest + ten_k - dist) & _M64))):
        digits[-1] -= 1
        rest = (rest + ten_k) & _M64


def _format_buffer(digits: str, exp10: int) -> str:
    k, n = len(digits), len(digits) + exp10
    if k <= n <= 15:
        return digits + "0" * (n - k)
    if 0 < n <= 15:
        return digits[:n] + "." + digits[n:]
    if -4 < n <= 0:
        return "0." + "0" * -n + digits
    mant = digits if k == 1 else digits[0] + "." + digits[1:]
    x = n - 1
    return f"{mant}e{'-' if x < 0 else '+'}{abs(x):02d}"


def num_scientific(x: float, single: bool) -> str:
    """Godot 4 ``String::num_scientific`` of a finite or special float/double."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "-0" if math.copysign(1, x) < 0 else "0"
    digits, exp10 = _grisu2(abs(x), single)
    return ("-" if x < 0 else "") + _format_buffer(digits, exp10)


def rtos_fix4(x: float) -> str:
    """Godot 4 ``rtos_fix`` in compat mode (what ``var_to_str`` uses)."""
    if x == 0:
        return "0"
    if math.isinf(x) and x < 0:
        return "inf_neg"
    if f32(x) == x:  # the engine's hack against float32 garbage digits
        return num_scientific(x, True)
    return num_scientific(x, False)


def rtos_fix3(x: float) -> str:
    """Godot 3 ``rtosfix``: C ``%lg``, which writes the sign of a NaN too."""
    if x == 0:
        return "0"
    if math.isnan(x):
        return "-nan" if math.copysign(1, x) < 0 else "nan"
    return f"{x:g}"  # C %lg: 6 significant digits


# --------------------------------------------------------------------------- strings

#: a lone surrogate (a Godot 3 String may hold the UTF-8 of one) cannot be written as UTF-8: it is
#: written as the escape \udXXX, which Godot 3's text parser reads back as that code unit (Godot 4
#: refuses an unpaired surrogate in text as it does in UTF-8)
SURROGATE_ESCAPES = {c: f"\\u{c:04x}" for c in range(0xD800, 0xE000)}
_ESC_MULTILINE = str.maketrans({"\\": "\\\\", '"': '\\"', **SURROGATE_ESCAPES})
_ESC4 = str.maketrans({"\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                       "\t": "\\t", "\v": "\\v", "'": "\\'", '"': '\\"', **SURROGATE_ESCAPES})
_ESC3 = str.maketrans({**{chr(k): v for k, v in _ESC4.items()}, "?": "\\?"})


def _quote(s: str) -> str:
    return '"' + s.translate(_ESC_MULTILINE) + '"'


# --------------------------------------------------------------------------- key order

_STRINGLIKE = ("STRING", "STRING_NAME")
_VECTORS = ("VECTOR2", "VECTOR2I", "VECTOR3", "VECTOR3I", "VECTOR4", "VECTOR4I")


def _key(v: Any) -> str:
    try:
        return V.type_key(v)
    except TypeError:  # a ResourceRef: no Variant type, sorts last
        return ""


def _approx_eq3(a: float, b: float) -> bool:
    """Godot 3 ``Math::is_equal_approx`` on float32 reals."""
    if a == b:
        return True
    tol = f32(1e-5 * abs(a))
    if tol < 1e-5:
        tol = f32(1e-5)
    return f32(abs(f32(a - b))) < tol


class _Order:
    """``Variant::operator<`` (type id first) of one engine family, as used to sort keys."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.family = dialect.family

    def _rank(self, key: str) -> int:
        entry = self.dialect.by_key(key) if key else None
        return entry.id if entry else 1 << 20

    def less(self, a: Any, b: Any) -> bool:
        """The key order of ``VariantWriter``: Godot 4 compares String and StringName as text."""
        if self.family == 4 and _key(a) in _STRINGLIKE and _key(b) in _STRINGLIKE:
            return str(a) < str(b)
        return self.variant_less(a, b)

    def variant_less(self, a: Any, b: Any) -> bool:
        ka, kb = _key(a), _key(b)
        if ka != kb:
            return self._rank(ka) < self._rank(kb)
        if ka in ("BOOL", "INT", "FLOAT", "STRING", "STRING_NAME"):
            return a < b
        if ka in _VECTORS:
            eq = _approx_eq3 if self.family == 3 else (lambda x, y: x == y)
            for x, y in zip(a[:-1], b[:-1], strict=True):
                if not eq(x, y):
                    return x < y
            return a[-1] < b[-1]
        if ka == "ARRAY":
            return self._array_less(list(a), list(b))
        if ka == "RID":
            return a.id < b.id
        return False  # no OP_LESS for this type: the sort leaves such keys where it puts them

    def _array_less(self, a: list, b: list) -> bool:
        if self.family == 3:  # Godot 3's OP_LESS on arrays, bug included
            if len(b) < len(a):
                return False
            return any(not self.variant_less(x, y) for x, y in zip(a, b, strict=False))
        for x, y in zip(a, b, strict=False):
            if self.variant_less(x, y):
                return True
            if self.variant_less(y, x):
                return False
        return len(a) < len(b)


def godot_sort(items: list, less: _Fn[[Any, Any], bool]) -> list:
    """Godot's ``SortArray`` (introsort, then insertion sort) so that keys that do not compare end
    up where the engine puts them. Bounds are checked where the engine's release build does not."""
    a = list(items)
    n = len(a)
    if n < 2:
        return a

    def median3(x: Any, y: Any, z: Any) -> Any:
        if less(x, y):
            return y if less(y, z) else (z if less(x, z) else x)
        if less(x, z):
            return x
        return z if less(y, z) else y

    def partition(first: int, last: int, pivot: Any) -> int:
        while True:
            while first < n - 1 and less(a[first], pivot):
                first += 1
            last -= 1
            while last > 0 and less(pivot, a[last]):
                last -= 1
            if first >= last:
                return first
            a[first], a[last] = a[last], a[first]
            first += 1

    def adjust_heap(first: int, hole: int, length: int, value: Any) -> None:
        top = hole
        child = 2 * hole + 2
        while child < length:
            if less(a[first + child], a[first + child - 1]):
                child -= 1
            a[first + hole] = a[first + child]
            hole = child
            child = 2 * (child + 1)
        if child == length:
            a[first + hole] = a[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and less(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def heap_sort(first: int, last: int) -> None:
        length = last - first
        if length >= 2:
            parent = (length - 2) // 2
            while True:
                adjust_heap(first, parent, length, a[first + parent])
                if parent == 0:
                    break
                parent -= 1
        while last - first > 1:
            last -= 1
            value = a[last]
            a[last] = a[first]
            adjust_heap(first, 0, last - first, value)

    def introsort(first: int, last: int, depth: int) -> None:
        while last - first > 16:
            if depth == 0:
                heap_sort(first, last)
                return
            depth -= 1
            cut = partition(first, last, median3(a[first], a[first + (last - first) // 2], a[last - 1]))
            introsort(cut, last, depth)
            last = cut

    def linear_insert(first: int, last: int, guarded: bool) -> None:
        value = a[last]
        if guarded and less(value, a[first]):
            a[first + 1:last + 1] = a[first:last]
            a[first] = value
            return
        nxt = last - 1
        while nxt >= 0 and less(value, a[nxt]):
            a[last] = a[nxt]
            last, nxt = nxt, nxt - 1
        a[last] = value

    introsort(0, n, 2 * (n.bit_length() - 1))
    for i in range(1, min(n, 16)):
        linear_insert(0, i, True)
    for i in range(16, n):
        linear_insert(0, i, False)
    return a


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
        self.order = _Order(dialect)
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
            value = V.Object("EncodedObjectAsID", {"object_id": s64(value.id), "script": None})
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
        typed = isinstance(value, V.TypedArray) and not self.g3
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
        if max(r for k, r in ranks.items() if k not in _STRINGLIKE) > min(ranks[k] for k in ranks if k in _STRINGLIKE):
            entries = {c: (*t[:2], False, *t[3:]) for c, t in entries.items()}
        rules = {"family4": not self.g3, "float_single": self.g3 and not self.double,
                 "max_depth": -1 if self.max_depth is None else self.max_depth, "style": self.style,
                 "esc_string": _ESC_MULTILINE, "esc_name": _ESC4, "esc_path": _ESC3 if self.g3 else _ESC4,
                 "powers": tuple(_POWERS)}
        return entries, rules


#: classes whose text needs this module (NodePath's string form, Objects, typed containers, ...)
_WRITTEN_HERE = frozenset({memoryview, V.NodePath, V.Object, V.TypedArray, V.TypedDictionary, V.FrozenDict})
#: the compiled writer's kind for a type key (else the layout kind: struct, packed, ...)
_COMPILED_KINDS = {"NIL": "nil", "BOOL": "bool", "INT": "int", "FLOAT": "float", "STRING": "string",
                   "STRING_NAME": "string_name", "RID": "rid", "OBJECT": "object_id", "CALLABLE": "const",
                   "SIGNAL": "const", "ARRAY": "array", "DICTIONARY": "dict"}
#: Dictionary key types the compiled writer sorts (the others go to godot_sort here)
_KEYABLE = ("NIL", "BOOL", "INT", "FLOAT", "STRING", "STRING_NAME")


def writer(dialect: Dialect | str) -> _Writer:
    """The (stateless, cached) pure writer of a dialect."""
    d = get_dialect(dialect)
    w = _WRITERS.get(d.name)
    if w is None:
        w = _WRITERS[d.name] = _Writer(d)
    return w


def compiled_writer(dialect: Dialect | str) -> tuple[dict[type, tuple], dict[str, Any]]:
    """Entries and rules of the compiled writer for ``dialect`` (see ``_Writer.compiled``)."""
    return writer(dialect).compiled()


def to_text(value: Any, dialect: Dialect | str = "godot4") -> str:
    """What the engine of ``dialect``'s family prints for ``value`` with var2str / var_to_str.

    Raises :class:`~godot_dissect.errors.EncodeError` for a value that has no type in the dialect.
    """
    d = get_dialect(dialect)
    if _fast.fast_text is not None and (s := _fast.fast_text(value, d)) is not None:
        return s  # the compiled writer (codec/_render.c); None: it left this value to Python
    return writer(d).write(value)


_WRITERS: dict[str, _Writer] = {}
