"""Bit fields of a byte or big-endian word, generated from named bit ranges of the spec.

The spec describes a flag byte or word as bit ranges (``shift``, ``width``); scapy reads bit fields
most significant first. :func:`bit_fields` orders the ranges, names the bits nobody uses
(``unused_<bit>``) and lets a range be computed when building (``None`` = AUTO).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from scapy.fields import BitField
from scapy.packet import Packet
from scapy.volatile import RandNum

from .fields import AUTO, Short, plain


class BitRange(Protocol):
    """A ``spec.words.BitField``."""

    name: str
    shift: int


def _width(b: Any) -> int:
    return b.width


class MetaBitField(BitField):
    """A named bit range of a flag byte or word; ``None`` is computed when building (``auto_fn``),
    a ``fixed`` one (the command number) is not randomised by ``fuzz()``."""

    __slots__ = ["auto_fn", "fixed", "note"]

    def __init__(self, name: str, default: Any, size: int, auto_fn: Any = None, fixed: bool = False,
                 note: Callable[[Packet, int], str] | None = None) -> None:
        self.auto_fn = auto_fn
        self.fixed = fixed
        self.note = note  # what a value means, shown next to it
        BitField.__init__(self, name, default, size)

    def i2repr(self, pkt: Packet | None, x: Any) -> str:
        v = self.i2h(pkt, x)
        if self.note is not None and pkt is not None and isinstance(v, int):
            text = self.note(pkt, v)
            if text:
                return f"{v} ({text})"
        return repr(v)

    def auto(self, pkt: Packet) -> int:
        return int(self.auto_fn(pkt)) if self.auto_fn is not None else 0

    def i2m(self, pkt: Packet | None, x: Any) -> int:
        if (x is None or x is AUTO) and pkt is not None:
            return self.auto(pkt)
        return plain(x)

    def i2h(self, pkt: Packet | None, x: Any) -> Any:
        if (x is None or x is AUTO) and pkt is not None:
            try:
                return self.auto(pkt)
            except Exception:  # noqa: BLE001 - a half-built packet
                return None
        return x

    def getfield(self, pkt: Packet, s: Any) -> Any:
        data = s[0] if isinstance(s, tuple) else s
        if not data:
            raise Short
        return BitField.getfield(self, pkt, s)

    def randval(self) -> Any:
        return None if self.fixed or self.default is None else RandNum(0, (1 << self.size) - 1)


def bit_fields(bits: Iterable[BitRange], total: int, defaults: dict[str, Any],
               autos: dict[str, Callable[[Packet], Any]], fixed: tuple[str, ...] = (),
               rename: Callable[[str], str] = str,
               notes: dict[str, Callable[[Packet, int], str]] | None = None) -> list[MetaBitField]:
    """Bit fields for a ``total``-bit big-endian word (or one byte) from named bit ranges, most
    significant first as scapy reads them; bits no range names become ``unused_<bits>``."""
    out: list[MetaBitField] = []
    top = total
    for b in sorted(bits, key=lambda b: -b.shift):
        end = b.shift + _width(b)
        if end < top:
            out.append(MetaBitField(_unused(end, top), 0, top - end))
        name = rename(b.name)
        out.append(MetaBitField(name, defaults.get(b.name, None if b.name in autos else 0), _width(b),
                                auto_fn=autos.get(b.name), fixed=b.name in fixed, note=(notes or {}).get(b.name)))
        top = b.shift
    if top > 0:
        out.append(MetaBitField(_unused(0, top), 0, top))
    return out


def _unused(lo: int, hi: int) -> str:
    return f"unused_{lo}" if hi - lo == 1 else f"unused_{lo}_{hi - 1}"
