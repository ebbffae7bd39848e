"""What a layout kind's parts come to in one dialect: ``kind_params(dialect, key)``.

``layouts.py`` declares each kind's parts once (count words, string rules, components, wrappers);
some of their meaning depends on the dialect (``real_t`` width, typed containers). This module
resolves them into the flat parameters every implementation of a kind reads: the C tables
(``codec/fast.py``), the Python kind walker (``codec/kinds.py``: decoder, encoder, fuzzer's field
map), the scapy fields and the Lua generator (``layout_params``). Nothing here knows a type key.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from . import layouts as L
from .dialects import Dialect, TypeEntry, get_dialect
from .layouts import Count, Layout, Length, Scalar
from .row import row
from .words import BitField

#: the header field that switches a number or a ``real_t`` component to its wide scalar
WIDE_FLAG = L.FLAG_64


@row
class KindParams:
    """One type of one dialect, as its layout kind reads and writes it."""

    kind: str
    key: str
    name: str  # the engine's name of the type in this dialect
    type_id: int
    layout: Layout
    #: struct code of the scalar (number) or of one component (struct, packed) as normally written
    narrow: str = ""
    #: ... when the header's FLAG_64 is set ("": the flag changes nothing)
    wide: str = ""
    #: the dialect writes the wide form (its real_t is double)
    write_wide: bool = False
    #: a wide real_t component is rounded to float32 when read (a single-precision build)
    round_wide: bool = False
    #: components per value (struct) or per element (packed)
    n: int = 1
    #: bytes of one element on the wire in the narrow form (packed: Godot 3 double builds pad)
    stride: int = 0
    #: the ``values`` classes that keep a number's width (number)
    narrow_marker: str | None = None
    wide_marker: str | None = None
    #: the ``values`` class of the value (string: StringName; id64: RID; empty: its constant)
    wrapper: str | None = None
    #: the typed-container header fields this dialect reads (container)
    typed: tuple[BitField, ...] = ()

    @property
    def wide_flag(self) -> int:
        """Header bits that select the wide form (0: none)."""
        return WIDE_FLAG.mask if self.wide else 0

    @property
    def typed_mask(self) -> int:
        mask = 0
        for hf in self.typed:
            mask |= hf.mask
        return mask

    def element_size(self, header: int) -> int:
        """Bytes of one packed element (or of a struct) under ``header``."""
        if self.wide and header & WIDE_FLAG.mask:
            return 8 * self.n
        return self.stride


def component_codes(comp: Scalar, d: Dialect) -> tuple[str, str, bool, bool]:
    """(narrow code, wide code, writes wide, rounds wide) of a struct/packed component."""
    if comp is L.REAL:
        return comp.code, L.F64.code, d.real_is_double, not d.real_is_double
    return comp.code, "", False, False


def component_code(comp: Scalar, wide: bool) -> tuple[str, int]:
    """Struct code and size of one struct/packed component, ``wide``: the header has FLAG_64."""
    if wide and comp is L.REAL:
        return L.F64.code, L.F64.size
    return comp.code, comp.size


def container_fields(layout: L.Container, d: Dialect) -> tuple[BitField, ...]:
    """The typed-container header fields of a Container that ``d`` reads."""
    if layout.pairs:
        return (L.DICT_KEY_KIND, L.DICT_VALUE_KIND) if d.has_typed_dictionaries() else ()
    return (L.ARRAY_ELEMENT_KIND,) if d.has_typed_arrays() else ()


def params_of(d: Dialect, e: TypeEntry) -> KindParams:
    layout = e.typedef.layout
    base: dict[str, Any] = {"kind": layout.kind, "key": e.key, "name": e.name, "type_id": e.id, "layout": layout}
    if isinstance(layout, L.Empty):
        return KindParams(**base, wrapper=layout.value)
    if isinstance(layout, L.Number):
        return KindParams(**base, narrow=layout.narrow.code, wide=layout.wide.code, narrow_marker=layout.narrow_marker,
                          wide_marker=layout.wide_marker)
    if isinstance(layout, L.StringLayout):
        return KindParams(**base, wrapper=layout.wrapper)
    if isinstance(layout, L.Struct):
        narrow, wide, ww, rw = component_codes(layout.component, d)
        n = len(layout.fields)
        return KindParams(**base, narrow=narrow, wide=wide, write_wide=ww, round_wide=rw, n=n,
                          stride=n * layout.component.size)
    if isinstance(layout, L.Packed):
        narrow, wide, ww, rw = component_codes(layout.component, d)
        return KindParams(**base, narrow=narrow, wide=wide, write_wide=ww, round_wide=rw, n=layout.width,
                          stride=layout.stride or layout.component.size * layout.width)
    if isinstance(layout, L.Id64):
        return KindParams(**base, narrow=layout.word.code, wrapper=layout.wrapper)
    if isinstance(layout, L.Container):
        return KindParams(**base, typed=container_fields(layout, d))
    return KindParams(**base)


@functools.cache
def _table(dialect: str) -> tuple[KindParams, ...]:
    d = get_dialect(dialect)
    return tuple(params_of(d, e) for e in d.entries)


def kind_params(dialect: Dialect | str, key_or_id: str | int | None = None) -> Any:
    """Every type's ``KindParams`` in id order, or the one of ``key_or_id`` (a type key or id)."""
    d = get_dialect(dialect)
    table = _table(d.name)
    if key_or_id is None:
        return table
    if isinstance(key_or_id, int):
        return table[key_or_id]
    e = d.by_key(key_or_id)
    if e is None:
        raise KeyError(f"{d.name} has no {key_or_id} type")
    return table[e.id]


def count_code(c: Count) -> str:
    """The little-endian struct code of a count word."""
    return "<" + c.scalar.code


def layout_params(layout: Layout) -> dict[str, Any]:
    """A layout's kind and every declared parameter as plain data (the Lua generator's view): the
    dataclass fields and the kind's number and string constants; scalars as ``{name, code, size}``.
    The kind's parts (its ``Count``, ``Length`` and ``Scalar`` words) are in ``kind_parts``."""
    out: dict[str, Any] = {"kind": layout.kind}
    for f in dataclasses.fields(layout):  # type: ignore[arg-type]
        if getattr(layout, f.name) is not None:
            out[f.name] = _plain(getattr(layout, f.name))
    for name, value in vars(type(layout)).items():
        if not name.startswith("_") and name != "kind" and isinstance(value, (int, str)) \
                and not isinstance(value, bool) and name not in out:
            out[name] = value
    return out


def kind_parts() -> dict[str, dict[str, Any]]:
    """Every layout kind's parts as plain data, once per kind: its ``Count`` and ``Length`` rules
    and ``Scalar`` words (``NodePathLayout.name_count`` -> ``{scalar, mask, negative}``)."""
    out: dict[str, dict[str, Any]] = {}
    for cls in Layout.__subclasses__():
        parts = {name: _plain(v) for name, v in vars(cls).items()
                 if not name.startswith("_") and isinstance(v, (Scalar, Count, Length))}
        if parts:
            out[cls.kind] = parts
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, Scalar):
        return {"name": v.name, "code": v.code, "size": v.size}
    if isinstance(v, (Count, Length)):
        return {f.name: _plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    return v


__all__ = ["KindParams", "WIDE_FLAG", "component_code", "component_codes", "container_fields", "count_code",
           "kind_params", "kind_parts", "layout_params", "params_of"]
