"""The handful of payload shapes every Godot Variant type is built from.

A layout says how the bytes after the 4-byte header are arranged. Types (``types.py``) pick a layout;
dialects (``dialects.py``) number the types. Consumers (codec, text, scapy, Lua, fuzzer) switch on
the layout *kind*, never on a type id or key.

Each kind declares its parts as data, construct-style: the count word (``Count``: width, sign, the
bits that hold the count, what a negative count means), the length and padding rule of strings
(``Length``), the element, and the value wrapper (``wrapper``: the ``values`` class the decoded value
is, e.g. ``StringName``; ``value`` of an empty payload). ``kinds.kind_params`` turns them into the
per-dialect parameters the C tables, scapy and Lua read; ``codec/kinds.py`` is the one Python walker
of them (decoder, encoder, the fuzzer's field map).
"""

from __future__ import annotations

from .row import row
from .words import BitField


@row
class Scalar:
    """A fixed-width little-endian scalar: its ``struct`` code and size in bytes."""

    name: str
    code: str
    size: int

    @property
    def int_range(self) -> tuple[int, int]:
        """Smallest and largest value of an integer scalar (the encoder's test for the narrow form)."""
        bits = self.size * 8
        if self.code.islower():
            return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        return 0, (1 << bits) - 1

    @property
    def is_float(self) -> bool:
        return self.code in "fd"

    def word(self, v: int) -> bytes:
        """Integer ``v`` as this scalar's little-endian bytes, wrapped to its width (-1 in a u32 is
        0xFFFFFFFF: how a fuzzer writes a count the engine would read as negative)."""
        return (v & ((1 << 8 * self.size) - 1)).to_bytes(self.size, "little")


I32 = Scalar("i32", "i", 4)
U32 = Scalar("u32", "I", 4)
I64 = Scalar("i64", "q", 8)
U64 = Scalar("u64", "Q", 8)
F32 = Scalar("f32", "f", 4)
F64 = Scalar("f64", "d", 8)
#: ``real_t``: f32, or f64 when the dialect's math types honour the 64-bit header flag and it is set.
REAL = Scalar("real", "f", 4)


@row
class Count:
    """The word before repeated parts: its scalar, the bits of it that hold the count, and what a
    negative count (signed scalars) means: ``"empty"`` (the engine loops zero times) or ``"error"``."""

    scalar: Scalar
    mask: int = 0xFFFFFFFF
    negative: str = "error"


@row
class Length:
    """A byte string: a ``Count`` of bytes, the bytes, zero padding to a multiple of ``pad``.
    ``pad_required``: the data must hold the padding (else the engine counts it as used anyway).
    ``utf8``: the bytes are UTF-8 text; ``nul``: the engine's writer counts a trailing NUL in them."""

    count: Count
    pad: int = 4
    pad_required: bool = True
    utf8: bool = True
    nul: bool = False


#: a string: i32 byte length (negative: error), UTF-8, padding to 4 that must be there
PADDED_STRING = Length(Count(I32))


@row
class Layout:
    """Base of every payload shape. ``kind`` is the name consumers dispatch on."""

    kind = "layout"


@row
class Empty(Layout):
    """No payload at all (NIL, Callable, Godot 3 RID). ``value``: the ``values`` class whose
    default instance the type decodes to (None: Python's None)."""

    value: str | None = None
    kind = "empty"


@row
class Boolean(Layout):
    """u32; the encoder writes 0/1, the decoder takes any non-zero as true."""

    word = U32
    kind = "bool"


@row
class Number(Layout):
    """One scalar: ``narrow`` normally, ``wide`` when header bit 16 (FLAG_64) is set.

    The encoder picks ``wide`` only when ``narrow`` would lose the value (int outside int32;
    float not exactly representable as float32, NaN included). ``narrow_marker``/``wide_marker``
    name the ``values`` class that keeps a value's width when its plain Python type would not
    (a wide int that fits narrow: ``WideInt``; a wide float that fits float32: ``Float64``; a
    narrow NaN: ``Float32``).
    """

    narrow: Scalar
    wide: Scalar
    narrow_marker: str | None = None
    wide_marker: str | None = None
    kind = "number"

    @property
    def is_float(self) -> bool:
        return self.narrow.is_float


@row
class StringLayout(Layout):
    """u32 byte length, UTF-8 bytes, zero padding to a multiple of 4 (``PADDED_STRING``). ``wrapper``:
    the ``values`` class of the decoded text (``StringName``), None for a plain str."""

    wrapper: str | None = None
    kind = "string"
    text = PADDED_STRING


@row
class Struct(Layout):
    """A fixed record of same-width components.

    ``fields`` are paths into the Python value in wire order (``"x.y"`` is the y component of the
    x axis), so the wire order of Basis (row-major) and Projection (column-major) is data here.
    ``component`` is REAL (width chosen by flag/dialect), F32 (always single) or I32.
    """

    component: Scalar
    fields: tuple[str, ...]
    kind = "struct"


@row
class NodePathLayout(Layout):
    """u32 name_count|0x80000000, u32 subname_count, u32 flags (bit0 absolute, bit1 legacy
    property -> one more subname), then that many strings. The encoder leaves string padding
    uninitialised; the decoder still requires the padding bytes to be present."""

    kind = "node_path"
    new_format_bit = 0x80000000
    flag_absolute = 1
    flag_legacy_property = 2
    #: names: the first word without its format bit; subnames: the second, plus one with the legacy flag
    name_count = Count(U32, mask=~new_format_bit & 0xFFFFFFFF)
    subname_count = Count(U32)
    legacy_extra_subnames = 1
    #: the third word: flag_absolute, flag_legacy_property
    flags = U32
    part = PADDED_STRING


@row
class Id64(Layout):
    """One u64 (Godot 4 RID)."""

    word = U64
    wrapper = "RID"
    kind = "id64"


@row
class ObjectLayout(Layout):
    """With the object-as-id flag: u64 instance id (0 = null). Without it (a full object, only
    decoded when objects are allowed): class name string (empty = null), i32 property count,
    then count x (name string, Variant)."""

    kind = "object"
    id = U64
    class_name = PADDED_STRING
    property_count = Count(I32, negative="empty")
    property_name = PADDED_STRING


@row
class SignalLayout(Layout):
    """Signal name string, then u64 object instance id."""

    kind = "signal"
    name = PADDED_STRING
    object_id = U64


@row
class Container(Layout):
    """Array (``pairs=False``) or Dictionary (``pairs=True``).

    [typed-container info, per kind field of the header], u32 count with bit 31 masked off, then
    count Variants (count key/value pairs).
    """

    pairs: bool
    kind = "container"
    count_mask = 0x7FFFFFFF
    count = Count(U32, mask=count_mask)


@row
class PackedBytes(Layout):
    """i32 count, count bytes, zero padding to 4 (the decoder does not require the padding)."""

    kind = "packed_bytes"
    data = Length(Count(I32), pad_required=False, utf8=False)


@row
class PackedStrings(Layout):
    """i32 count (negative = empty), then count strings whose length includes a trailing NUL
    when written by the engine (the decoder also takes them without)."""

    kind = "packed_strings"
    count = Count(I32, negative="empty")
    element = Length(Count(I32), nul=True)


@row
class Packed(Layout):
    """i32 count, then count fixed elements of ``width`` components.

    ``component`` REAL follows the header's FLAG_64 like math types do. ``stride`` overrides the
    element size on the wire (Godot 3 double builds write PoolRealArray floats 8 bytes apart).
    ``element`` names the value type of one element (e.g. ``"VECTOR2"``) or None for scalars.
    """

    component: Scalar
    width: int = 1
    element: str | None = None
    stride: int | None = None
    kind = "packed"
    count = Count(I32)


TYPE_MASK = 0xFF  # byte 0 of the header; byte 1 is ignored by every engine
# the meaning of some of the header's upper bits for one type (``TypeDef.header_fields``)
FLAG_64 = BitField("64-bit", 16, 1)
FLAG_OBJECT_AS_ID = BitField("object as id", 16, 1)
ARRAY_ELEMENT_KIND = BitField("element type kind", 16, 2)
DICT_KEY_KIND = BitField("key type kind", 16, 2)
DICT_VALUE_KIND = BitField("value type kind", 18, 2)

#: typed-container kinds (2 bits): what follows the header before the count.
CONTAINER_KINDS = ("none", "builtin", "class_name", "script")
