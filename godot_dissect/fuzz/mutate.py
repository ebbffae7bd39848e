"""Field-aware mutations of encoded Variants.

Every mutation works on the field map of its input (``fields.field_map``), so it knows which four
bytes are a header, a count or a string length: type ids at and past the end of the dialect's table
(and other valid ids: type confusion), every header flag bit, typed-container kinds and type ids,
huge / negative / off-by-one counts and lengths, lengths past the end, bad UTF-8 (the corpus's
``UTF8_EDGES``), boundary numbers in data words, truncation at and around field boundaries,
trailing bytes, spliced Variants and plain bit flips.
"""

from __future__ import annotations

import bisect
import itertools
import random
import struct
from collections.abc import Callable

from ..spec import layouts as L
from ..spec.dialects import Dialect
from .fields import BYTES, COUNT, DATA, HEADER, LENGTH, TEXT, TYPED, FieldMap
from .malformed import UTF8_EDGES

_U32 = struct.Struct("<I")

#: u32 words that make counts and lengths interesting (n is the current value, left the bytes left)
BIG_WORDS = (0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x7FFFFFFD, 0x40000000, 0x3FFFFFFF, 0x20000000,
             0x10000, 0xFFFF, 0x1000001, 0x80000001)
DATA_WORDS = (0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,
              0x00000001, 0x80000001, 0x3F800000, 0x00800000)
DATA_QWORDS = (0, 0xFFFFFFFFFFFFFFFF, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0x7FF0000000000000,
               0xFFF0000000000000, 0x7FF8000000000001, 0x0000000000000001, 0x8000000000000000)


def count_values(n: int, left: int) -> tuple[int, ...]:
    return (0, 1, n - 1, n + 1, n * 2, left, left + 1, left // 4, (left // 4) + 1, 0x80000000 | n,
            *BIG_WORDS)


def length_values(n: int, left: int) -> tuple[int, ...]:
    return (0, 1, n - 1, n + 1, n + 3, n + 4, left, left + 1, left - 1, (n + 4) & ~3, *BIG_WORDS)


Op = Callable[[bytearray, FieldMap, random.Random, Dialect], str | None]


def _put32(buf: bytearray, off: int, v: int) -> None:
    _U32.pack_into(buf, off, v & 0xFFFFFFFF)


def op_type_id(buf: bytearray, fm: FieldMap, rng: random.Random, d: Dialect) -> str | None:
    hs = fm.by_role(HEADER)
    if not hs:
        return None
    f = rng.choice(hs)
    vmax = d.variant_max
    t = rng.choice((vmax, vmax + 1, vmax + rng.randint(2, 40), 0x7F, 0x80, 0xFF, rng.randrange(vmax),
                    rng.randrange(vmax)))
    buf[f.offset] = t & 0xFF
    return f"type id @{f.offset} = {t}"


def op_flag(buf: bytearray, fm: FieldMap, rng: random.Random, d: Dialect) -> str | None:
    hs = fm.by_role(HEADER)
    if not hs:
        return None
    f = rng.choice(hs)
    h = _U32.unpack_from(buf, f.offset)[0]
    r = rng.random()
    if r < 0.6:
        bit = rng.randrange(8, 32)  # every flag bit, byte 1 (ignored by engines) included
        h ^= 1 << bit
        what = f"bit {bit}"
    elif r < 0.8:
        field = rng.choice((L.ARRAY_ELEMENT_KIND, L.DICT_KEY_KIND, L.DICT_VALUE_KIND))
        k = rng.randrange(len(L.CONTAINER_KINDS))
        h = (h & ~field.mask) | (k << field.shift)
        what = f"{field.name} = {L.CONTAINER_KINDS[k]}"
    elif r < 0.9:
        h &= L.TYPE_MASK
        what = "flags cleared"
    else:
        h |= 0xFFFFFF00
        what = "all flag bits"
    _put32(buf, f.offset, h)
    return f"header @{f.offset} {what}"


def _rewrite_word(buf: bytearray, fields: list, rng: random.Random, values: Callable[[int, int], tuple[int, ...]],
                  mask: int, what: str) -> str | None:
    """Set one of ``fields`` (u32 words) to one of ``values(old, bytes left after it)``."""
    if not fields:
        return None
    f = rng.choice(fields)
    n = _U32.unpack_from(buf, f.offset)[0] & mask
    v = rng.choice(values(n, len(buf) - f.offset - 4))
    _put32(buf, f.offset, v)
    return f"{what} @{f.offset} {n} -> {v & 0xFFFFFFFF:#x}"


def op_count(buf: bytearray, fm: FieldMap, rng: random.Random, d: Dialect) -> str | None:
    # packed counts (the top bit shared with a flag): the count alone, >= 0 anyway
    return _rewrite_word(buf, fm.by_role(COUNT), rng, count_values, L.Container.count_mask, "count")


def op_length(buf: bytearray, fm: FieldMap, rng: random.Random, d: Dialect) -> str | None:
    return _rewrite_word(buf, fm.by_role(LENGTH), rng, length_values, 0xFFFFFFFF, "length")


def op_utf8(buf: bytearray, fm: FieldMap, rng: random.Random, d: Dialect) -> str | None:
    ts = fm.by_role(TEXT)
    if not ts:
        return None
    f = rng.choice(ts)
    bad = rng.choice(UTF8_EDGES)
    if f.size >= len(bad) and rng.random() < 0.5:
        at = f.offset + rng.randrange(f.size - len(bad) + 1)
        buf[at:at + len(bad)] = bad
        return f"utf8 {bad.hex()} over text @{at}"
    # replace the whole string (length word, bytes, padding)
    old = f.size + (-f.size & 3)
    new = bad + b"\0" * (-len(bad) & 3)
    buf[f.offset:f.offset + old] = new
    _put32(buf, f.offset - 4, len(bad))
    return f"utf8 {bad.hex()} as text @{f.offset}"


def op_data(buf: bytearray, fm: FieldMap, rng: random.Random, d: Dialect) -> str | None:
    ds = fm.by_role(DATA, TYPED, BYTES)
    ds = [f for f in ds if f.size >= 4]
    if not ds:
        return None
    f = rng.choice(ds)
    if f.role == TYPED:
        v = rng.choice((d.variant_max, d.variant_max + 1, 0xFF, 0xFFFFFFFF, 0, rng.randrange(d.variant_max)))
        _put32(buf, f.offset, v)
        return f"typed builtin @{f.offset} = {v}"
    at = f.offset + 4 * rng.randrange(f.size // 4)
    if f.size >= 8 and rng.random() < 0.4:
        at = f.offset + 8 * rng.randrange(f.size // 8)
        v = rng.choice(DATA_QWORDS)
        struct.pack_into("<Q", buf, at, v)
        return f"data @{at} = {v:#x}"
    v = rng.choice(DATA_WORDS)
    _put32(buf, at, v)
    return f"data @{at} = {v:#x}"


def op_truncate(buf: bytearray, fm: FieldMap, rng: random.Random, d: Dialect) -> str | None:
    if len(buf) <= 1:
        return None
    if fm.fields and rng.random() < 0.7:
        f = rng.choice(fm.fields)
        cut = max(0, min(len(buf) - 1, f.offset + rng.choice((0, 1, 2, 3, f.size - 1, f.size, f.size + 1))))
    else:
        cut = rng.randrange(len(buf))
    del buf[cut:]
    return f"truncated to {cut}"


def op_trailing(buf: bytearray, fm: FieldMap, rng: random.Random, d: Dialect) -> str | None:
    junk = rng.choice((b"\0", b"\0\0\0\0", b"\xff" * 4, bytes(buf[:8]), rng.randbytes(rng.randint(1, 16))))
    buf += junk
    return f"{len(junk)} trailing bytes"


def op_splice(buf: bytearray, fm: FieldMap, rng: random.Random, d: Dialect) -> str | None:
    """Copy a field-aligned piece of the value over another place of it (structure confusion)."""
    if len(fm.fields) < 2:
        return None
    a, b = rng.sample(fm.fields, 2)
    piece = bytes(buf[a.offset:a.offset + rng.choice((4, 8, 12, max(4, a.size)))])
    if rng.random() < 0.5:
        buf[b.offset:b.offset] = piece
        return f"{len(piece)} bytes from @{a.offset} inserted @{b.offset}"
    buf[b.offset:b.offset + len(piece)] = piece
    return f"{len(piece)} bytes from @{a.offset} written @{b.offset}"


def op_delete(buf: bytearray, fm: FieldMap, rng: random.Random, d: Dialect) -> str | None:
    fs = [f for f in fm.fields if f.size]
    if not fs:
        return None
    f = rng.choice(fs)
    size = f.size if f.role != TEXT else f.size + (-f.size & 3)
    del buf[f.offset:f.offset + size]
    return f"{f.role} @{f.offset} ({size} bytes) deleted"


def op_bitflip(buf: bytearray, fm: FieldMap, rng: random.Random, d: Dialect) -> str | None:
    if not buf:
        return None
    at = rng.randrange(len(buf))
    bit = rng.randrange(8)
    buf[at] ^= 1 << bit
    return f"bit {bit} of byte {at} flipped"


OPS: dict[str, tuple[Op, int]] = {
    "type_id": (op_type_id, 8), "flag": (op_flag, 10), "count": (op_count, 14), "length": (op_length, 12),
    "utf8": (op_utf8, 8), "data": (op_data, 8), "truncate": (op_truncate, 8), "trailing": (op_trailing, 4),
    "splice": (op_splice, 5), "delete": (op_delete, 4), "bitflip": (op_bitflip, 4),
}
_NAMES = list(OPS)
_CUM = list(itertools.accumulate(w for _, w in OPS.values()))


def mutate(data: bytes, fm: FieldMap, rng: random.Random, d: Dialect, n_ops: int = 1) -> tuple[bytes, list[str]]:
    """Apply ``n_ops`` random field-aware mutations; return the bytes and what was done.

    ``fm`` is the field map of ``data``. An op that cuts bytes ends the series (the map no longer
    fits); after one that inserts bytes the later ops still use the map (offsets past the change are
    then approximate, which is fine for a fuzzer).
    """
    buf = bytearray(data)
    done: list[str] = []
    n = len(buf)
    for _ in range(n_ops * 3):
        if len(done) >= n_ops or len(buf) < n:
            break
        name = _NAMES[bisect.bisect(_CUM, rng.random() * _CUM[-1])]
        what = OPS[name][0](buf, fm, rng, d)
        if what is not None:
            done.append(what)
    return bytes(buf), done
