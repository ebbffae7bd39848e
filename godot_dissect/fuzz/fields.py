"""Where the fields of an encoded Variant are: the map mutations and the minimiser work on.

``field_map(data, dialect)`` walks the bytes with the kind walker (``codec/kinds.py``, never a type id)
and lists every header, count, length, string body, typed-container info and fixed data word with
its offset, so that a mutation can say "set the count of the Array at offset 12 to 0x7fffffff"
and the minimiser can shrink counts, lengths and nesting. The walk is lenient and stops quietly at
the first inconsistency (mutated bytes are its normal input); containers are walked with an
explicit stack, so a 1,000,000-deep value is no problem.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ..codec.kinds import BYTES, COUNT, DATA, HEADER, KINDS, LENGTH, TEXT, TYPED
from ..spec import layouts as L
from ..spec.dialects import Dialect, get_dialect
from ..spec.kinds import KindParams, kind_params

_U32 = struct.Struct("<I")
_LENGTH_SIZE = L.PADDED_STRING.count.scalar.size
_PAD = L.PADDED_STRING.pad - 1

#: field roles (the parts of ``codec/kinds.py``)
__all__ = ["BYTES", "COUNT", "DATA", "HEADER", "LENGTH", "TEXT", "TYPED", "Field", "FieldMap", "field_map"]


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

    def stop(self) -> Exception:
        return _Stop()

    def string(self, pos: int, depth: int, key: str | None, start: int) -> int:
        """A ``layouts.PADDED_STRING``; its length read unsigned, so a negative one stops the walk."""
        n = self.u32(pos)
        self.add(pos, _LENGTH_SIZE, LENGTH, depth, key, start)
        if n > self.n:
            raise _Stop
        self.add(pos + _LENGTH_SIZE, n, TEXT, depth, key, start)
        return pos + _LENGTH_SIZE + n + (-n & _PAD)

    def walk(self) -> tuple[int, bool]:
        params = kind_params(self.d)
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
                if t >= len(params):
                    self.add(pos, 4, HEADER, depth, None, start)
                    raise _Stop
                p = params[t]
                self.add(pos, 4, HEADER, depth, p.key, start)
                pos += 4
                pos, opened = self.payload(pos, header, p, depth, start)
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

    def payload(self, pos: int, header: int, p: KindParams, depth: int, start: int) -> tuple[int, list | None]:
        return KINDS[p.kind].fields(self, pos, header, p, depth, start)


def field_map(data: bytes, dialect: Dialect | str, limit: int = 100_000) -> FieldMap:
    """The fields of the Variant at the start of ``data`` (at most ``limit`` of them)."""
    w = _Walker(bytes(data), get_dialect(dialect), limit)
    end, complete = w.walk()
    return FieldMap(w.out, end, complete, w.max_depth)
