"""godot-dissect: Godot Engine network traffic made visible and testable."""

from .codec import decode, decode_prefix, encode
from .errors import DecodeError, EncodeError
from .spec import DIALECT_NAMES, get_dialect

__version__ = "0.1.0"

__all__ = [
    "DIALECT_NAMES", "DecodeError", "EncodeError", "decode", "decode_prefix", "encode", "get_dialect",
]
