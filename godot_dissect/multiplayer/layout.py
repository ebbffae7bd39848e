"""Read and write the field tuples of ``spec.multiplayer`` (one generic walker for every packet).

``read_items`` walks a layout over ``data[pos:end]`` and fills a :class:`Scope` with every value
(integers, their named bits, texts, blobs with their byte spans, repeated groups as lists of
scopes). ``write_items`` does the reverse from a dict of values. Packet-level meaning (caches,
compressed Variants, method names) is left to the protocol decoders; lengths are checked here,
before anything is sliced or allocated.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..spec.multiplayer import (
    BitField,
    Blob,
    Choice,
    Cond,
    FieldItem,
    Form,
    Int,
    Repeat,
    Switch,
    Text,
    When,
    index_of,
)


class LayoutError(ValueError):
    """Bytes a layout cannot be read from: ``offset`` (absolute) and ``reason``."""

    def __init__(self, offset: int, reason: str) -> None:
        self.offset, self.reason = offset, reason
        super().__init__(f"offset {offset}: {reason}")


@dataclass
class Scope:
    """Values read so far; lookups fall back to the enclosing scope (a repeated group sees the
    packet's values)."""

    values: dict[str, Any] = field(default_factory=dict)
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    parent: Scope | None = None

    def get(self, name: str, default: Any = None) -> Any:
        s: Scope | None = self
        while s is not None:
            if name in s.values:
                return s.values[name]
            s = s.parent
        return default

    def span(self, name: str) -> tuple[int, int] | None:
        s: Scope | None = self
        while s is not None:
            if name in s.spans:
                return s.spans[name]
            s = s.parent
        return None

    def __contains__(self, name: str) -> bool:
        return self.get(name, _MISSING) is not _MISSING

    def __getitem__(self, name: str) -> Any:
        v = self.get(name, _MISSING)
        if v is _MISSING:
            raise KeyError(name)
        return v

    def plain(self) -> dict[str, Any]:
        """The values as plain data (nested groups as lists of dicts)."""
        return {k: [s.plain() for s in v] if isinstance(v, list) and v and isinstance(v[0], Scope) else v
                for k, v in self.values.items()}


_MISSING = object()
_STRUCTS: dict[str, struct.Struct] = {}


def _struct(code: str) -> struct.Struct:
    s = _STRUCTS.get(code)
    if s is None:
        s = _STRUCTS[code] = struct.Struct(code)
    return s


def holds(conds: Iterable[Cond], scope: Scope | Mapping[str, Any]) -> bool:
    for c in conds:
        v = scope.get(c.name)
        if v is None:
            return False
        if c.op == "==" and v != c.operand:
            return False
        if c.op == "!=" and v == c.operand:
            return False
        if c.op == "&" and not v & c.operand:
            return False
    return True


def check_size(form: Form, size: int, base: int, what: str) -> None:
    """The engine's length check of a whole packet against a form."""
    if form.exact_size is not None and size != form.exact_size:
        raise LayoutError(base, f"{what}: {size} bytes, the engine takes exactly {form.exact_size}")
    if size < form.min_size:
        raise LayoutError(base, f"{what}: {size} bytes, the engine needs at least {form.min_size}")


def _text(raw: bytes | memoryview) -> str:
    return bytes(raw).decode("utf-8", "replace")


def read_items(items: Iterable[FieldItem], data: bytes | memoryview, pos: int, end: int, scope: Scope,
               base: int = 0) -> int:
    """Read ``items`` from ``data[pos:end]`` into ``scope``; return the position after them.

    ``base`` is where the packet starts (for Switch size checks)."""
    for item in items:
        pos = _read(item, data, pos, end, scope, base)
    return pos


def _read(item: FieldItem, data: bytes | memoryview, pos: int, end: int, scope: Scope, base: int) -> int:
    if isinstance(item, When):
        return _read(item.item, data, pos, end, scope, base) if holds(item.conds, scope) else pos
    if isinstance(item, (Int, Choice)):
        if isinstance(item, Int):
            code, bits = item.code, item.bits
        else:
            sel = scope.get(item.selector)
            code = item.codes.get(sel)  # type: ignore[arg-type]
            if code is None:
                raise LayoutError(pos, f"{item.name}: no width for {item.selector} = {sel}")
            bits = item.bits.get(code, ())
        s = _struct(code)
        if end - pos < s.size:
            raise LayoutError(pos, f"{item.name}: needs {s.size} bytes, {max(end - pos, 0)} left")
        v = s.unpack_from(data, pos)[0]
        scope.values[item.name] = v
        scope.spans[item.name] = (pos, pos + s.size)
        for b in bits:
            scope.values[b.name] = b.get(v)
        return pos + s.size
    if isinstance(item, Text):
        return _read_text(item, data, pos, end, scope)
    if isinstance(item, Blob):
        stop = end
        if item.size is not None:
            n = scope.get(item.size)
            if n > end - pos:  # reported where the claim is
                at = (scope.span(item.size) or (pos, pos))[0]
                raise LayoutError(at, f"{item.name}: {item.size} = {n} but {max(end - pos, 0)} bytes are left")
            stop = pos + n
        elif item.end is not None and holds(item.end_when, scope):
            stop = scope.get(item.end)
            if stop > end:
                raise LayoutError(pos, f"{item.end} {stop} is past the end of the packet ({end - base} bytes)")
            if stop < pos:
                raise LayoutError(pos, f"{item.end} {stop} points inside the header (before offset {pos})")
        scope.values[item.name] = bytes(data[pos:stop])
        scope.spans[item.name] = (pos, stop)
        return stop
    if isinstance(item, Repeat):
        groups: list[Scope] = []
        if item.count is not None:
            n = scope.get(item.count)
            if n * item.min_size > end - pos:  # checked before anything is allocated
                at = (scope.span(item.count) or (pos, pos))[0]
                raise LayoutError(at, f"{item.count} = {n} needs {n * item.min_size} bytes, "
                                       f"{max(end - pos, 0)} left")
            for _ in range(n):
                g = Scope(parent=scope)
                pos = read_items(item.items, data, pos, end, g, base)
                groups.append(g)
        else:
            while pos + item.more_than < end:
                g = Scope(parent=scope)
                pos = read_items(item.items, data, pos, end, g, base)
                groups.append(g)
        scope.values[item.name] = groups
        return pos
    if isinstance(item, Switch):
        sel = scope.get(item.selector)
        form = item.cases.get(sel)  # type: ignore[arg-type]
        if form is None:
            raise LayoutError(pos - 1, f"unknown {item.selector} {sel}")
        check_size(form, end - base, base, form.name)
        scope.values[item.name] = form.name
        return read_items(form.items, data, pos, end, scope, base)
    raise TypeError(f"not a layout item: {item!r}")


def _read_text(item: Text, data: bytes | memoryview, pos: int, end: int, scope: Scope) -> int:
    start = pos
    if item.at is not None:
        start = scope.get(item.at)
        if start >= end:  # "Invalid packet received. Size smaller than declared."
            raise LayoutError(pos, f"{item.name}: offset {start} is not inside the packet ({end} bytes)")
    if item.size is not None:
        if end - start < item.size:
            raise LayoutError(start, f"{item.name}: needs {item.size} bytes, {max(end - start, 0)} left")
        raw = bytes(data[start:start + item.size - 1])
        stop = start + item.size
    else:
        region = bytes(data[start:end])
        nul = region.find(0)
        if nul < 0:
            if not item.to_end:
                raise LayoutError(start, f"{item.name}: no NUL before the end of the packet")
            raw, stop = region, end
        else:
            raw, stop = region[:nul], (end if item.to_end else start + nul + 1)
    cut = raw.find(0)
    scope.values[item.name] = _text(raw if cut < 0 else raw[:cut])
    scope.spans[item.name] = (start, stop)
    return max(pos, stop)


# --------------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------------


@dataclass
class _Written:
    pos: int
    code: str
    bits: tuple[BitField, ...]


def write_items(items: tuple[FieldItem, ...], values: Mapping[str, Any], out: bytearray | None = None,
                written: dict[str, _Written] | None = None) -> bytearray:
    """Append ``items`` built from ``values`` to ``out``. Sizes and counts that a blob or group
    implies are filled in when ``values`` leaves them out; an ``at`` text is written where it
    stands and the offset it needs is patched into the integer already written."""
    out = bytearray() if out is None else out
    written = {} if written is None else written
    vals = dict(values)
    _fill_implied(items, vals)
    for item in items:
        _write(item, vals, out, written)
    return out


def _fill_implied(items: tuple[FieldItem, ...], vals: dict[str, Any]) -> None:
    index = index_of(items)
    for ref, holder in (*index.sizes.items(), *index.counts.items()):
        if ref not in vals and holder.name in vals:
            vals[ref] = len(vals[holder.name])


def _int_value(name: str, bits: tuple[BitField, ...], vals: Mapping[str, Any]) -> int:
    if name in vals:
        return int(vals[name])
    v = 0
    for b in bits:
        v |= b.put(int(vals.get(b.name, 0)))
    return v


def _write(item: FieldItem, vals: dict[str, Any], out: bytearray, written: dict[str, _Written]) -> None:
    if isinstance(item, When):
        if holds(item.conds, vals):
            _write(item.item, vals, out, written)
        return
    if isinstance(item, (Int, Choice)):
        if isinstance(item, Int):
            code, bits = item.code, item.bits
        else:
            code = item.codes[vals[item.selector]]
            bits = item.bits.get(code, ())
        v = _int_value(item.name, bits, vals)
        written[item.name] = _Written(len(out), code, bits)
        for b in bits:
            vals.setdefault(b.name, b.get(v))
        out += _struct(code).pack(v)
        return
    if isinstance(item, Text):
        raw = str(vals[item.name]).encode("utf-8")
        if item.at is not None:
            _patch(item.at, len(out), out, written, vals)
        if item.size is not None:
            out += raw[:item.size - 1].ljust(item.size - 1, b"\0") + b"\0"
        else:
            out += raw + b"\0"
        return
    if isinstance(item, Blob):
        out += bytes(vals.get(item.name, b""))
        return
    if isinstance(item, Repeat):
        for group in vals.get(item.name, ()):
            write_items(item.items, {**vals, **group}, out, {})
        return
    if isinstance(item, Switch):
        form = item.cases[vals[item.selector]]
        write_items(form.items, vals, out, written)
        return
    raise TypeError(f"not a layout item: {item!r}")


def _patch(bits_name: str, value: int, out: bytearray, written: dict[str, _Written], vals: dict[str, Any]) -> None:
    """Set the named bit range of an integer already written (the appended node path's offset)."""
    for w in written.values():
        for b in w.bits:
            if b.name == bits_name:
                s = _struct(w.code)
                old = s.unpack_from(out, w.pos)[0]
                s.pack_into(out, w.pos, (old & ~b.mask) | b.put(value))
                vals[bits_name] = value
                return
    raise KeyError(f"no integer with bits {bits_name!r} was written")
