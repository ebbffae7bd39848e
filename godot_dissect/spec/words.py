"""The field vocabulary every protocol table in the spec is written in.

* :class:`BitField`: a named bit range of an integer (a Variant header flag, an ENet header bit, a
  SceneMultiplayer command-byte flag).
* :class:`IntField`: a fixed-width integer whose ``struct`` code carries its byte order explicitly
  (``"<I"``: u32 little-endian as Godot's ``encode_uint32`` writes; ``">H"``: u16 in ENet's
  network order), so no table depends on a module-wide byte-order setting.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from functools import cached_property

from .row import row

LITTLE = "<"
BIG = ">"


@row
class BitField:
    """Some bits of an integer: ``(value >> shift) & ((1 << width) - 1)``."""

    name: str
    shift: int
    width: int
    meaning: str = ""
    values: Mapping[int, str] | None = None  # names of the values, if any

    @property
    def mask(self) -> int:
        return ((1 << self.width) - 1) << self.shift

    def get(self, word: int) -> int:
        return (word >> self.shift) & ((1 << self.width) - 1)

    def put(self, value: int) -> int:
        return (value << self.shift) & self.mask


@row
class IntField:
    """A fixed-width integer; ``code`` is a ``struct`` format with its byte order (``"<i"``, ``">H"``).
    ``c_name``: the field's name in the engine's C sources, where that helps a reader."""

    name: str
    code: str
    meaning: str = ""
    c_name: str = ""

    def __post_init__(self) -> None:
        if self.code[:1] not in (LITTLE, BIG):
            raise ValueError(f"{self.name}: struct code {self.code!r} does not say its byte order")

    @property
    def order(self) -> str:
        return self.code[0]

    @property
    def letter(self) -> str:
        """The code without its byte order (to join codes of one order into one format)."""
        return self.code[1:]

    @cached_property  # read per command in every ENet datagram parsed
    def size(self) -> int:
        return struct.calcsize(self.code)

    @property
    def signed(self) -> bool:
        return self.code[-1].islower()


def joined_format(fields: tuple[IntField, ...], order: str) -> str:
    """One ``struct`` format for consecutive fields that all have byte order ``order``."""
    if any(f.order != order for f in fields):
        raise ValueError(f"mixed byte orders in {[f.name for f in fields]}")
    return order + "".join(f.letter for f in fields)
