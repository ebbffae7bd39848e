"""Where the fields of an encoded Variant are: the map mutations and the minimiser work on.

``field_map(data, dialect)`` walks the bytes with the spec's layouts (never a hard-coded type id)
and lists every header, count, length, string body, typed-container info and fixed data word with
its offset, so that a mutation can say "set the count of the Array at offset 12 to 0x7fffffff"
and the minimiser can shrink counts, lengths and nesting. The walk is lenient and stops quietly at
the first inconsistency (mutated bytes are its normal input); containers are walked with an
explicit stack, so a 1,000,000-deep value is no problem.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ..spec import layouts as L
from ..spec.dialects import Dialect, get_dialect

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")

#: field roles
HEADER = "header"  # u32 type id + flags
COUNT = "count"  # element / pair / property / name count (u32 or i32)
LENGTH = "length"  # u32 byte length of a string
TEXT = "text"  # the UTF-8 bytes of a string (size may be 0)
TYPED = "typed"  # u32 builtin type id of a typed container
DATA = "data"  # fixed-width payload words (numbers, math components, ids, flags)
BYTES = "bytes"  # packed array bodies


@dataclass(frozen=True, slots=True)
class Field:
    offset: int
    size: int
    role: str
    depth: int  # nesting depth of the Variant the field belongs to
    key: str | None = None  # spec type key of that Variant (header, count, data fields)
    start: int = 0  # offset of that Variant's header


@dataclass
class FieldMap:
    fields: list[Field]
    end: int  # where the walk stopped (== len(data) for a value that fills its bytes)
    complete: bool  # the walk read one whole Variant without running out of bytes
    max_depth: int
    _roles: dict[tuple[str, ...], list[Field]] = field(default_factory=dict, repr=False, compare=False)

    def by_role(self, *roles: str) -> list[Field]:
        got = self._roles.get(roles)
        if got is None:
            got = self._roles[roles] = [f for f in self.fields if f.role in roles]
        return got


class _Stop(Exception):
    pass


class _Walker:
    def __init__(self, data: bytes, d: Dialect, limit: int) -> None:
        self.data, self.d, self.limit = data, d, limit
        self.n = len(data)
        self.out: list[Field] = []
        self.max_depth = 0

    def add(self, off: int, size: int, role: str, depth: int, key: str | None, start: int) -> None:
        if off + size > self.n:
            raise _Stop
        if len(self.out) < self.limit:
            self.out.append(Field(off, size, role, depth, key, start))

    def u32(self, off: int) -> int:
        if off + 4 > self.n:
            raise _Stop
        return _U32.unpack_from(self.data, off)[0]

    def string(self, pos: int, depth: int, key: str | None, start: int) -> int:
        n = self.u32(pos)
        self.add(pos, 4, LENGTH, depth, key, start)
        if n > self.n:
            raise _Stop
        self.add(pos + 4, n, TEXT, depth, key, start)
        return pos + 4 + n + (-n & 3)

    def walk(self) -> tuple[int, bool]:
        d = self.d
        entries = d.entries
        # stack items: number of Variants still to read at that level (objects: property names too)
        stack: list[list] = []
        pos = 0
        try:
            while True:
                depth = len(stack)
                self.max_depth = max(self.max_depth, depth)
                if stack and stack[-1][1] == "object":
                    pos = self.string(pos, depth, None, pos)  # property name
                start = pos
                header = self.u32(pos)
                t = header & L.TYPE_MASK
                if t >= len(entries):
                    self.add(pos, 4, HEADER, depth, None, start)
                    raise _Stop
                e = entries[t]
                key, layout = e.key, e.typedef.layout
                self.add(pos, 4, HEADER, depth, key, start)
                pos += 4
                opened = None
                pos, opened = self.payload(pos, header, key, layout, depth, start)
                if opened is not None:
                    stack.append(opened)
                    continue
                while stack:
                    stack[-1][0] -= 1
                    if stack[-1][0] > 0:
                        break
                    stack.pop()
                else:
                    return pos, True
        except _Stop:
            return pos, False

    def payload(self, pos: int, header: int, key: str, layout: L.Layout, depth: int,
                start: int) -> tuple[int, list | None]:
        kind = layout.kind
        add = self.add
        if kind == "empty":
            return pos, None
        if kind == "bool":
            add(pos, 4, DATA, depth, key, start)
            return pos + 4, None
        if kind == "number":
            size = 8 if header & L.FLAG_64.mask else 4
            add(pos, size, DATA, depth, key, start)
            return pos + size, None
        if kind == "string":
            return self.string(pos, depth, key, start), None
        if kind == "struct":
            comp = layout.component  # type: ignore[attr-defined]
            width = 8 if comp is L.REAL and header & L.FLAG_64.mask else comp.size
            for _ in layout.fields:  # type: ignore[attr-defined]
                add(pos, width, DATA, depth, key, start)
                pos += width
            return pos, None
        if kind == "node_path":
            first = self.u32(pos)
            add(pos, 4, COUNT, depth, key, start)
            if not first & layout.new_format_bit:  # type: ignore[attr-defined]
                raise _Stop
            add(pos + 4, 4, COUNT, depth, key, start)
            add(pos + 8, 4, DATA, depth, key, start)
            subs = self.u32(pos + 4)
            flags = self.u32(pos + 8)
            n = (first & ~layout.new_format_bit) + subs  # type: ignore[attr-defined]
            if flags & layout.flag_legacy_property:  # type: ignore[attr-defined]
                n += 1
            pos += 12
            for _ in range(n):
                if pos >= self.n:
                    raise _Stop
                pos = self.string(pos, depth, key, start)
            return pos, None
        if kind == "id64":
            add(pos, 8, DATA, depth, key, start)
            return pos + 8, None
        if kind == "signal":
            pos = self.string(pos, depth, key, start)
            add(pos, 8, DATA, depth, key, start)
            return pos + 8, None
        if kind == "object":
            if header & L.FLAG_OBJECT_AS_ID.mask:
                add(pos, 8, DATA, depth, key, start)
                return pos + 8, None
            n_before = self.u32(pos)
            pos = self.string(pos, depth, key, start)
            if n_before == 0:
                return pos, None
            n = _I32.unpack_from(self.data, pos)[0] if pos + 4 <= self.n else 0
            add(pos, 4, COUNT, depth, key, start)
            pos += 4
            return pos, ([n, "object"] if n > 0 else None)
        if kind == "container":
            pairs = layout.pairs  # type: ignore[attr-defined]
            kinds = []
            if pairs and self.d.has_typed_dictionaries():
                kinds = [L.DICT_KEY_KIND.get(header), L.DICT_VALUE_KIND.get(header)]
            elif not pairs and self.d.has_typed_arrays():
                kinds = [L.ARRAY_ELEMENT_KIND.get(header)]
            for k in kinds:
                name = L.CONTAINER_KINDS[k]
                if name == "builtin":
                    add(pos, 4, TYPED, depth, key, start)
                    pos += 4
                elif name != "none":
                    pos = self.string(pos, depth, key, start)
            n = self.u32(pos) & L.Container.count_mask
            add(pos, 4, COUNT, depth, key, start)
            pos += 4
            if n == 0:
                return pos, None
            return pos, [n * 2 if pairs else n, "container"]
        if kind == "packed_bytes":
            n = _I32.unpack_from(self.data, pos)[0] if pos + 4 <= self.n else 0
            add(pos, 4, COUNT, depth, key, start)
            pos += 4
            if n < 0 or pos + n > self.n:
                raise _Stop
            add(pos, n, BYTES, depth, key, start)
            return pos + n + (-n & 3), None
        if kind == "packed_strings":
            n = _I32.unpack_from(self.data, pos)[0] if pos + 4 <= self.n else 0
            add(pos, 4, COUNT, depth, key, start)
            pos += 4
            for _ in range(max(n, 0)):
                if pos >= self.n:
                    raise _Stop
                pos = self.string(pos, depth, key, start)
            return pos, None
        if kind == "packed":
            n = _I32.unpack_from(self.data, pos)[0] if pos + 4 <= self.n else 0
            add(pos, 4, COUNT, depth, key, start)
            pos += 4
            comp = layout.component  # type: ignore[attr-defined]
            width = layout.width  # type: ignore[attr-defined]
            wide = comp is L.REAL and header & L.FLAG_64.mask
            esize = 8 * width if wide else layout.stride or comp.size * width  # type: ignore[attr-defined]
            if n < 0 or pos + n * esize > self.n:
                raise _Stop
            add(pos, n * esize, BYTES, depth, key, start)
            return pos + n * esize, None
        raise _Stop


def field_map(data: bytes, dialect: Dialect | str, limit: int = 100_000) -> FieldMap:
    """The fields of the Variant at the start of ``data`` (at most ``limit`` of them)."""
    w = _Walker(bytes(data), get_dialect(dialect), limit)
    end, complete = w.walk()
    return FieldMap(w.out, end, complete, w.max_depth)
