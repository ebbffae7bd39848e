"""A deterministic corpus of malformed (and borderline) Variants, derived from the spec.

For every type of a dialect the corpus breaks what its layout kind has to break: lengths and
counts (negative, huge, one past the end), missing padding, bad UTF-8, header bits the type does
not use, flags that change payload widths, typed-container info, truncation at every byte.
Some mutants are accepted by the engine on purpose (lenient rules); the differential tests decide.

What to break is chosen per layout kind here; every byte is written from the kind's declared parts
(``spec/layouts.py``: count words, the string rule, the NodePath words and flags, header fields),
so a change to a kind's rule in the spec reaches this corpus with no edit here.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from ..codec import encode
from ..spec import layouts as L
from ..spec.dialects import Dialect, get_dialect
from .samples import SAMPLES

_U32 = struct.Struct("<I")  # the Variant header word

#: UTF-8 byte strings on the edge of what Godot 3 and Godot 4 accept
UTF8_EDGES: tuple[bytes, ...] = (
    b"\xff\xfe", b"\xc0\x80", b"\xc1\xbf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe0\x9f\xbf",
    b"\xe0\x80\x80", b"\xc3", b"\xc3\x00", b"\xef\xbb\xbfa", b"a\x00b", b"\xf8\x88\x80\x80\x80",
    b"\x80", b"a\xc3(", b"\xf0\x9f\x98\x80", b"\xe2\x82", b"\xed\xbf\xbf",
)


@dataclass(frozen=True)
class Mutant:
    name: str
    data: bytes
    allow_objects: bool = False


def _str(b: bytes, pad: bool = True, declared: int | None = None, rule: L.Length = L.PADDED_STRING) -> bytes:
    """``b`` as a string of ``rule``: its length word (``declared``: a lie), the bytes, the padding."""
    n = len(b) if declared is None else declared
    return rule.count.scalar.word(n) + b + (b"\0" * (-len(b) % rule.pad) if pad else b"")


def _node_path(first: int, subs: int, flags: int | None, *parts: bytes) -> bytes:
    """The words of ``layouts.NodePathLayout`` (``flags`` None: cut after the second), then parts."""
    np = L.NodePathLayout
    words = np.name_count.scalar.word(first) + np.subname_count.scalar.word(subs)
    if flags is not None:
        words += np.flags.word(flags)
    return words + b"".join(_str(p, rule=np.part) for p in parts)


def malformed_corpus(dialect: Dialect | str) -> list[Mutant]:
    d = get_dialect(dialect)
    seen: set[tuple[bytes, bool]] = set()
    out: list[Mutant] = []
    for m in _generate(d):
        k = (m.data, m.allow_objects)
        if k not in seen:
            seen.add(k)
            out.append(m)
    return out


def _generate(d: Dialect) -> Iterator[Mutant]:
    vmax = d.variant_max
    # header: type ids at and beyond the end of the table; byte 1 set; too short
    for t in sorted({vmax, vmax + 1, 0x7F, 0xFF}):
        yield Mutant(f"type {t}", _U32.pack(t) + b"\0" * 8)
    yield Mutant("header 3 bytes", b"\x02\x00\x00")
    yield Mutant("empty", b"")
    for e in d.entries:
        sample = SAMPLES[e.key]
        try:
            good = encode(sample, d)
        except ValueError:
            continue
        tid, name, layout = e.id, e.name, e.typedef.layout
        yield Mutant(f"{name} valid", good)
        yield Mutant(f"{name} trailing junk", good + b"\x09\x09\x09\x09")
        yield Mutant(f"{name} byte1 set", good[:1] + b"\x01" + good[2:])
        for bit in (16, 17, 18, 19, 20, 24, 31):
            h = _U32.unpack_from(good)[0] | (1 << bit)
            yield Mutant(f"{name} header bit {bit}", _U32.pack(h) + good[4:])
        for cut in range(1, len(good)):
            if cut < 16 or cut > len(good) - 8 or cut % 4 == 0:
                yield Mutant(f"{name} truncated to {cut}", good[:cut])
        yield from _by_layout(d, tid, name, layout, good)


def _by_layout(d: Dialect, tid: int, name: str, layout: L.Layout, good: bytes) -> Iterator[Mutant]:
    h = _U32.pack(tid)
    wide = _U32.pack(tid | L.FLAG_64.mask)
    kind = layout.kind
    nan64 = struct.pack("<" + L.F64.code, float("nan"))
    if kind == "bool":
        for v in (2, 0xFFFFFFFF):
            yield Mutant(f"{name} = {v}", h + L.Boolean.word.word(v))
    elif kind == "number":
        narrow = layout.narrow.size  # type: ignore[attr-defined]
        value = good[4:4 + narrow]
        yield Mutant(f"{name} 64-bit flag, 4 bytes", wide + value)
        yield Mutant(f"{name} 64-bit flag, 8 bytes", wide + value + b"\0" * (layout.wide.size - narrow))  # type: ignore[attr-defined]
        yield Mutant(f"{name} 64-bit nan", wide + nan64)
    elif kind == "string":
        for bad in UTF8_EDGES:
            yield Mutant(f"{name} utf8 {bad.hex()}", h + _str(bad))
        yield Mutant(f"{name} length -1", h + _str(b"abc", declared=-1))
        yield Mutant(f"{name} length huge", h + _str(b"abc", declared=0x7FFFFFFF))
        yield Mutant(f"{name} length past end", h + _str(b"abc", declared=5))
        yield Mutant(f"{name} padding missing", h + _str(b"a", pad=False))
        yield Mutant(f"{name} length 0x7ffffffd", h + _str(b"abc", declared=0x7FFFFFFD))
    elif kind == "struct":
        yield Mutant(f"{name} 64-bit flag on 32-bit data", wide + good[4:])
        n = len(layout.fields)  # type: ignore[attr-defined]
        yield Mutant(f"{name} 64-bit flag, 64-bit data", wide + struct.pack(f"<{n}{L.F64.code}", *range(n)))
    elif kind == "node_path":
        np = L.NodePathLayout
        new, legacy = np.new_format_bit, np.flag_legacy_property
        # one name, no subnames: the legacy flag and every flag set add the spec's extra subnames
        one_name = (b"a",)
        with_extra = one_name + tuple(b"bcdefgh"[i:i + 1] for i in range(np.legacy_extra_subnames))
        all_flags = (1 << 8 * np.flags.size) - 1
        yield Mutant(f"{name} old format", h + _str(b"a/b"))
        yield Mutant(f"{name} legacy property flag", h + _node_path(new | 1, 0, legacy, *with_extra))
        yield Mutant(f"{name} name count huge", h + _node_path(new | np.name_count.mask, 0, 0, *one_name))
        yield Mutant(f"{name} subname count huge", h + _node_path(new, 0x7FFFFFFF, 0))
        yield Mutant(f"{name} header 8 bytes", h + _node_path(new | 1, 0, None))
        yield Mutant(f"{name} flags all set", h + _node_path(new | 1, 0, all_flags, *with_extra))
    elif kind == "object":
        as_id = _U32.pack(tid | L.FLAG_OBJECT_AS_ID.mask)
        id_size = L.ObjectLayout.id.size
        yield Mutant(f"{name} full, not allowed", h + _str(b""))
        yield Mutant(f"{name} full null, allowed", h + _str(b""), allow_objects=True)
        yield Mutant(f"{name} as id 0", as_id + L.ObjectLayout.id.word(0))
        yield Mutant(f"{name} as id, 4 bytes", as_id + L.ObjectLayout.id.word(1)[:id_size // 2])
        yield Mutant(f"{name} as id max", as_id + L.ObjectLayout.id.word(-1))
    elif kind in ("id64", "signal"):
        yield Mutant(f"{name} no payload", h)
    elif kind == "container":
        pairs = layout.pairs  # type: ignore[attr-defined]
        count = layout.count.scalar.word  # type: ignore[attr-defined]
        int_id = d.by_key("INT").id  # type: ignore[union-attr]
        one = encode(1, d)
        elems = one + one if pairs else one
        mask = layout.count.mask  # type: ignore[attr-defined]
        typed = L.DICT_KEY_KIND if pairs else L.ARRAY_ELEMENT_KIND
        builtin, class_name, script = (L.CONTAINER_KINDS.index(k) for k in ("builtin", "class_name", "script"))
        yield Mutant(f"{name} count huge", h + count(mask) + elems)
        yield Mutant(f"{name} count bit 31", h + count(~mask | 1) + elems)
        yield Mutant(f"{name} count 0xffffffff", h + count(-1) + elems)
        yield Mutant(f"{name} count one too many", h + count(2) + elems)
        yield Mutant(f"{name} element bad type", h + count(1) + _U32.pack(L.TYPE_MASK) + elems)
        for kind_no in (builtin, class_name, script):
            hk = _U32.pack(tid | typed.put(kind_no))
            info = _U32.pack(int_id) if kind_no == builtin else _str(b"Node" if kind_no == class_name else b"res://x.gd")
            yield Mutant(f"{name} typed kind {kind_no}", hk + info + count(1) + elems)
            yield Mutant(f"{name} typed kind {kind_no}, info missing", hk + count(1) + elems)
        yield Mutant(f"{name} typed builtin out of range", _U32.pack(tid | typed.put(builtin)) + _U32.pack(L.TYPE_MASK)
                     + count(0))
        str_id = d.by_key("STRING").id  # type: ignore[union-attr]
        yield Mutant(f"{name} typed int holding a String", _U32.pack(tid | typed.put(builtin)) + _U32.pack(int_id)
                     + count(1) + (one if pairs else b"") + _U32.pack(str_id) + _str(b"x"))
        if pairs:
            yield Mutant(f"{name} typed value only", _U32.pack(tid | L.DICT_VALUE_KIND.put(builtin)) + _U32.pack(int_id)
                         + count(1) + elems)
    elif kind == "packed_bytes":
        count = L.PackedBytes.data.count.scalar.word
        yield Mutant(f"{name} count -1", h + count(-1))
        yield Mutant(f"{name} count past end", h + count(9) + b"\1\2\3\4")
        yield Mutant(f"{name} padding missing", h + count(1) + b"\x09")
    elif kind == "packed_strings":
        count = L.PackedStrings.count.scalar.word
        element = L.PackedStrings.element
        yield Mutant(f"{name} count -1", h + count(-1))
        yield Mutant(f"{name} count huge", h + count(0x7FFFFFFF) + _str(b"a", rule=element))
        yield Mutant(f"{name} element without NUL", h + count(1) + _str(b"ab", rule=element))
        yield Mutant(f"{name} element bad utf8", h + count(1) + _str(b"\xff\xfe\x00", rule=element))
    elif kind == "packed":
        count = L.Packed.count.scalar.word
        body = good[4 + L.Packed.count.scalar.size:]  # the elements after the count
        yield Mutant(f"{name} count -1", h + count(-1))
        yield Mutant(f"{name} count overflow", h + count(0x40000001) + b"\0" * 8)
        yield Mutant(f"{name} count past end", h + count(3) + body)
        yield Mutant(f"{name} 64-bit flag", wide + good[4:] + b"\0" * len(body))
