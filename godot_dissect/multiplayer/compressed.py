"""Godot 4's compressed Variants (RPC arguments, spawn arguments, replication state).

``MultiplayerAPI::encode_and_compress_variant`` / ``decode_and_decompress_variant``: BOOL is one
meta byte, INT a meta byte plus the value in the narrowest of i8/i16/i32/i64, every other type the
standard ``encode_variant`` bytes (whose first byte already is the type id). Layout constants come
from ``spec.multiplayer.COMPRESSED_VARIANT``; type ids from the dialect.
"""

from __future__ import annotations

import struct
from functools import lru_cache
from typing import Any

from ..codec import decode_prefix, encode
from ..errors import DecodeError
from ..spec import get_dialect
from ..spec.multiplayer import COMPRESSED_VARIANT as CV
from .message import decode_values

_INT_STRUCTS = {mode: struct.Struct(code) for mode, code in CV.int_codes.items()}
#: smallest and largest value of each width, narrowest first (the encoder's choice)
_INT_RANGES = [(mode, -(1 << (8 * s.size - 1)), (1 << (8 * s.size - 1)) - 1) for mode, s in _INT_STRUCTS.items()]


@lru_cache(maxsize=64)
def _ids(dialect: str) -> tuple[int, int, int]:
    d = get_dialect(dialect)
    return d.by_key("BOOL").id, d.by_key("INT").id, d.variant_max  # type: ignore[union-attr]


def decode_compressed(data: bytes | memoryview, dialect: str = "godot4", *, offset: int = 0,
                      end: int | None = None, allow_objects: bool = True) -> tuple[Any, int]:
    """One compressed Variant at ``offset``: ``(value, bytes used)``; a DecodeError (absolute
    offset) where the engine returns an error."""
    end = len(data) if end is None else end
    if end - offset < 1:
        raise DecodeError(offset, "compressed Variant: needs 1 byte, 0 left")
    bool_id, int_id, vmax = _ids(dialect)
    meta = data[offset]
    t = CV.type_bits.get(meta)
    if t >= vmax:
        raise DecodeError(offset, f"compressed Variant: type id {t} is not below {vmax}")
    if t == bool_id:
        return bool(CV.bool_value_bits.get(meta)), 1
    if t == int_id:
        s = _INT_STRUCTS[CV.mode_bits.get(meta)]
        if end - offset - 1 < s.size:
            raise DecodeError(offset + 1, f"compressed int ({s.size * 8}-bit): needs {s.size} bytes, "
                                          f"{end - offset - 1} left")
        return s.unpack_from(data, offset + 1)[0], 1 + s.size
    # any other type: decode_variant on the same bytes (mode bits set make the header's type id
    # invalid, which decode_variant rejects, exactly as in the engine)
    return decode_prefix(data, dialect, allow_objects=allow_objects, offset=offset, end=end)


def encode_compressed(value: Any, dialect: str = "godot4", *, full_objects: bool = False) -> bytes:
    """The engine's compressed bytes for ``value``."""
    bool_id, int_id, _ = _ids(dialect)
    if isinstance(value, bool):
        return bytes([bool_id | CV.bool_value_bits.put(int(value))])
    if isinstance(value, int):
        for mode, lo, hi in _INT_RANGES:
            if lo <= value <= hi:
                return bytes([int_id | CV.mode_bits.put(mode)]) + _INT_STRUCTS[mode].pack(value)
        raise ValueError(f"int {value} does not fit 64 bits")
    return encode(value, dialect, full_objects=full_objects)


def decode_compressed_list(data: bytes | memoryview, dialect: str = "godot4", *, offset: int = 0,
                           end: int | None = None, count: int | None = None,
                           allow_objects: bool = True) -> tuple[list[Any], list[tuple[int, int]]]:
    """``count`` compressed Variants (``decode_and_decompress_variants``), or as many as the bytes
    hold when ``count`` is None (replication state). Returns the values and each one's span."""
    end = len(data) if end is None else end
    label = "argument" if count is not None else "value"  # replication state holds values, not arguments
    return decode_values(decode_compressed, data, dialect, offset, end, count, label, allow_objects)


def encode_compressed_list(values: list[Any], dialect: str = "godot4") -> bytes:
    return b"".join(encode_compressed(v, dialect) for v in values)


def encode_rpc_args(args: list[Any], dialect: str = "godot4") -> tuple[bytes, bool]:
    """``encode_and_compress_variants`` for an RPC: (bytes, byte_only). No arguments, or exactly
    one PackedByteArray (sent as its bare bytes), set byte_only."""
    if not args:
        return b"", True
    if len(args) == 1 and isinstance(args[0], (bytes, bytearray)):
        return bytes(args[0]), True
    return encode_compressed_list(args, dialect), False
