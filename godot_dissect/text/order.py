"""Godot's order of Dictionary keys in the text notation: ``Variant::operator<`` (type id first) of
one engine family, and the engine's own introsort (``SortArray``), which is not stable for keys
that do not compare.
"""

from __future__ import annotations

from collections.abc import Callable as _Fn
from typing import Any

from .. import values as V
from ..spec import Dialect
from .floats import f32

__all__ = ["STRINGLIKE", "VariantOrder", "godot_sort"]

STRINGLIKE = ("STRING", "STRING_NAME")
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


class VariantOrder:
    """``Variant::operator<`` (type id first) of one engine family, as used to sort keys."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.family = dialect.family

    def _rank(self, key: str) -> int:
        entry = self.dialect.by_key(key) if key else None
        return entry.id if entry else 1 << 20

    def less(self, a: Any, b: Any) -> bool:
        """The key order of ``VariantWriter``: Godot 4 compares String and StringName as text."""
        if self.family == 4 and _key(a) in STRINGLIKE and _key(b) in STRINGLIKE:
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
        # the scans stay in the segment: where ``less`` is an order, the median-of-3 pivot stops them inside it;
        # where it is none, the engine's unguarded scans leave it (and then the array), and scans over the whole
        # array at each of the ~2 log n levels made the sort quadratic
        lo, hi = first, last
        while True:
            while first < hi - 1 and less(a[first], pivot):
                first += 1
            last -= 1
            while last > lo and less(pivot, a[last]):
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
        while last - first > _THRESHOLD:
            if depth == 0:
                heap_sort(first, last)
                return
            depth -= 1
            cut = partition(first, last, median3(a[first], a[first + (last - first) // 2], a[last - 1]))
            introsort(cut, last, depth)
            last = cut

    # The final insertion sort moves each key at most _THRESHOLD - 1 places when ``less`` is an order (introsort
    # left every key in its block of at most _THRESHOLD): at most _THRESHOLD moves a key in all. Keys whose
    # ``less`` is no order (Godot 3's Array OP_LESS: [1, 2] < [2, 1] and [2, 1] < [1, 2]) can walk every key to
    # the front, where the engine's unguarded walk reads outside the array: the walk stops when the moves are
    # spent, instead of taking time quadratic in the keys.
    moves = _THRESHOLD * n

    def linear_insert(first: int, last: int, guarded: bool) -> None:
        nonlocal moves
        value = a[last]
        if guarded and less(value, a[first]):
            a[first + 1:last + 1] = a[first:last]
            a[first] = value
            return
        nxt = last - 1
        while nxt >= 0 and moves > 0 and less(value, a[nxt]):
            a[last] = a[nxt]
            last, nxt = nxt, nxt - 1
            moves -= 1
        a[last] = value

    introsort(0, n, 2 * (n.bit_length() - 1))
    for i in range(1, min(n, _THRESHOLD)):
        linear_insert(0, i, True)
    for i in range(_THRESHOLD, n):
        linear_insert(0, i, False)
    return a


#: the engine's ``INTROSORT_THRESHOLD``: introsort leaves blocks this small to the final insertion sort
_THRESHOLD = 16
